"""`plot_memory_addressing`: the memory family's picture of the heads' write and read weights
(matplotlib Agg)."""

import numpy as np

from keras_adl.recipes.memory.plots import plot_memory_addressing
from tests.pictures import image_data, one_closed_figure, png_size


def test_plot_memory_addressing_shows_the_first_heads_over_time(tmp_path, saved):
    steps, slots = 6, 16
    write = np.zeros((steps, 2, slots), "float32")  # [T, Hw, N]
    write[np.arange(steps), 0, np.arange(steps)] = 1.0  # head 0 writes a diagonal in slots 0..5
    write[:, 1, -1] = 1.0  # head 1 is not drawn
    read = np.zeros((steps, slots), "float32")  # [T, N] is accepted too
    read[np.arange(steps), np.arange(steps)[::-1]] = 0.9
    path = str(tmp_path / "memory.png")
    assert plot_memory_addressing(write, read, path, title="copy") == path
    figure = one_closed_figure(saved)
    write_ax, read_ax = figure.axes
    # Slots (rows) × time (columns), trimmed to the used slots + 1: rows 0..6 of 16.
    np.testing.assert_array_equal(image_data(write_ax), write[:, 0].T[:7])
    np.testing.assert_array_equal(image_data(read_ax), read.T[:7])
    assert (write_ax.get_title(), read_ax.get_title()) == ("write weights", "read weights")
    assert write_ax.get_xlabel() == "time step" and write_ax.get_ylabel() == "memory slot"
    assert figure._suptitle.get_text() == "copy"
    width, height = png_size(path)
    assert width == 600 and abs(height - 304) <= 1  # 6 × (0.12 · 7 + 2.2) inches


def test_plot_memory_addressing_keeps_at_least_four_slots(tmp_path, saved):
    weights = np.zeros((3, 10), "float32")  # nothing used: every slot is drawn
    plot_memory_addressing(weights, weights, str(tmp_path / "empty.png"))
    assert image_data(one_closed_figure(saved).axes[0]).shape == (10, 3)
    saved.clear()
    weights[:, 0] = 1.0  # slot 0 used: rows 0..1, padded to the minimum of 4
    plot_memory_addressing(weights, weights, str(tmp_path / "one.png"))
    assert image_data(one_closed_figure(saved).axes[0]).shape == (4, 3)


def test_plot_memory_addressing_draws_the_used_slots_round_the_end_of_the_memory(tmp_path, saved):
    # The NTM's shifts wrap: a head that starts at slot 0 and moves backwards uses slots
    # 0, 127, 126, ...: the picture draws 122..127 then 0 and 1 (one slot more), not 0..127.
    steps, slots = 6, 128
    write = np.zeros((steps, slots), "float32")
    write[np.arange(steps), -np.arange(steps) % slots] = 1.0  # slots 0, 127, ..., 123
    read = np.zeros((steps, slots), "float32")
    read[-1, 122] = 0.5
    plot_memory_addressing(write, read, str(tmp_path / "wrap.png"))
    write_ax, read_ax = one_closed_figure(saved).axes
    shown = [122, 123, 124, 125, 126, 127, 0, 1]
    np.testing.assert_array_equal(image_data(write_ax), write.T[shown])
    np.testing.assert_array_equal(image_data(read_ax), read.T[shown])
    # The slot axis names the slots, and a line marks the wrap (127 → 0).
    assert [t.get_text() for t in write_ax.get_yticklabels()] == [str(s) for s in shown]
    assert [line.get_ydata()[0] for line in write_ax.get_lines()] == [5.5]

"""The memory family's picture: where the heads write and read over time."""

import numpy as np

from keras_adl.plotting import pyplot, save_figure


def _slots_shown(usage, threshold=0.05):
    """The memory slots to draw, in order: the shortest run of slots, going round the memory as
    the NTM's shifts do (slot ``N - 1`` is next to slot 0), that holds every slot whose weight
    reaches above ``threshold``, then one more slot; at least 4 slots, and every slot when none
    is used."""
    slots = usage.shape[0]
    used = np.flatnonzero(usage > threshold)
    if used.size == 0:
        return np.arange(slots)
    # gaps[i]: the distance from used slot i to the next one round the memory; the run drawn
    # leaves out the widest gap (the one that wraps past slot N - 1 when it is as wide).
    gaps = np.diff(np.append(used, used[0] + slots))
    widest = used.size - 1 if gaps[-1] == gaps.max() else int(np.argmax(gaps))
    start = used[(widest + 1) % used.size]
    count = min(max(slots - int(gaps[widest]) + 2, 4), slots)
    return (start + np.arange(count)) % slots


def _slot_ticks(shown):
    """Row positions and labels of the slot axis: the slots that are multiples of a round step
    (at most about 10 labels)."""
    step = next(s for s in (1, 2, 5, 10, 20, 50, 100, 200, 500) if len(shown) / s <= 10)
    rows = [row for row, slot in enumerate(shown) if slot % step == 0]
    return rows, [str(shown[row]) for row in rows]


def plot_memory_addressing(write_weights, read_weights, path, title=None):
    """Saves the NTM paper's picture: write and read weightings over time for one sequence.

    Each panel is memory slots (rows) × time steps (columns), the first head of each kind; a
    copy model that learned the task writes along a diagonal, then reads the same diagonal.
    Only the slots that the heads use are drawn: the shortest run of slots that holds them,
    going round the memory (the heads' shifts wrap from the last slot to slot 0, and a dotted
    line marks where the run does), and one slot more. The slot axis is labelled with the
    slots' numbers.

    Args:
        write_weights: ``[T, Hw, N]`` or ``[T, N]`` write weights of one sequence.
        read_weights: ``[T, R, N]`` or ``[T, N]`` read weights of the same sequence.
        path: PNG file to write.
        title: optional title.

    Returns:
        ``path``.
    """
    plt = pyplot()

    panels = []
    for weights in (write_weights, read_weights):
        weights = np.asarray(weights, "float32")
        if weights.ndim == 3:
            weights = weights[:, 0]
        panels.append(weights.T)  # [N, T]
    shown = _slots_shown(np.maximum(panels[0], panels[1]).max(axis=1))
    rows = len(shown)
    wraps = [row for row in range(1, rows) if shown[row] < shown[row - 1]]
    ticks, labels = _slot_ticks(shown)
    steps = panels[0].shape[1]
    fig, axes = plt.subplots(1, 2, figsize=(max(6.0, 0.18 * steps * 2 + 2), 0.12 * rows + 2.2))
    for ax, weights, name in zip(axes, panels, ("write weights", "read weights")):
        ax.imshow(
            weights[shown],
            cmap="gray_r",
            vmin=0.0,
            vmax=1.0,
            aspect="auto",
            interpolation="nearest",
        )
        for row in wraps:
            ax.axhline(row - 0.5, color="tab:blue", linestyle=":", linewidth=1.0)
        ax.set_title(name)
        ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
        ax.set_yticks(ticks, labels)
        ax.set_xlabel("time step")
        ax.set_ylabel("memory slot")
    if title:
        fig.suptitle(title)
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path

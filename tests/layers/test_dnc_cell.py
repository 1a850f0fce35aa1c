import keras
import numpy as np
import pytest

from keras_adl.layers import DNCCell
from tests.harness import np_
from tests.layers import memory_cell_checks as checks

SMALL = dict(controller_units=12, memory_size=8, memory_width=4, num_read_heads=2)


@pytest.mark.parametrize(
    "kwargs",
    [{}, dict(controller="dense", num_write_heads=2, memory_init="learned")],
    ids=["lstm", "dense-2writeheads-learned"],
)
def test_harness(kwargs):
    checks.run_cell_harness(DNCCell(**SMALL, **kwargs))


def test_config_round_trip():
    checks.check_config_round_trip(DNCCell, dict(
        controller_units=7, memory_size=9, memory_width=3, num_read_heads=3, num_write_heads=2,
        controller="dense", memory_init="random", clip_value=None, return_addressing=True))


def test_keras_file_and_saved_model(tmp_path):
    checks.check_keras_file_and_saved_model(DNCCell(**SMALL), tmp_path)


def test_mirrored_fit_matches_one_device():
    checks.check_mirrored_fit_matches_one_device(lambda: DNCCell(**SMALL))


def test_masked_steps_keep_the_state():
    checks.check_masked_steps_keep_the_state(DNCCell(**SMALL))


def _run(cell, steps=12, batch=3, seed=0):
    x = np.random.default_rng(seed).normal(size=(batch, steps, 5)).astype("float32")
    rnn = keras.layers.RNN(cell, return_sequences=True, return_state=True)
    out, *states = rnn(x)
    return out, cell.unpack_states(states)


@pytest.mark.parametrize("num_write_heads", [1, 2])
def test_state_invariants_after_a_sequence(num_write_heads):
    # Random weights, scaled up so that gates saturate and weightings are sharp.
    cell = DNCCell(**SMALL, num_write_heads=num_write_heads, return_addressing=True,
                   kernel_initializer=keras.initializers.RandomNormal(stddev=1.0))
    out, s = _run(cell)
    s = {k: np_(v) for k, v in s.items()}
    assert np.all((s["usage"] >= 0) & (s["usage"] <= 1 + 1e-6))
    link = s["link"]  # [B, Hw, N, N]
    assert np.all((link >= -1e-6) & (link <= 1 + 1e-6))
    np.testing.assert_array_equal(np.diagonal(link, axis1=-2, axis2=-1), 0.0)
    assert np.all(link.sum(-1) <= 1 + 1e-5) and np.all(link.sum(-2) <= 1 + 1e-5)
    assert np.all(s["precedence"].sum(-1) <= 1 + 1e-5)
    parts = cell.split_output(out)
    read_w, write_w = np_(parts["read_weights"]), np_(parts["write_weights"])
    assert np.all(read_w >= -1e-7) and np.all(read_w.sum(-1) <= 1 + 1e-5)
    assert np.all(write_w >= -1e-7) and np.all(write_w.sum(-1) <= 1 + 1e-5)


def test_allocation_write_goes_to_unused_slots_in_turn():
    """With write gate = allocation gate = 1 and nothing freed, successive writes fill distinct
    slots, and usage of each written slot is ~1."""
    cell = DNCCell(8, memory_size=6, memory_width=3, num_read_heads=1, controller="dense",
                   return_addressing=True)
    cell.build((None, 2))
    sizes = cell._interface_sizes()
    bias = np.zeros(sum(sizes), "float32")
    start = np.cumsum([0] + sizes)
    # Interface order: read keys, read strengths, write keys, write strengths, erase, write
    # vectors, free gates, allocation gates, write gates, read modes.
    bias[start[6] : start[7]] = -20.0  # free gates ≈ 0
    bias[start[7] : start[8]] = 20.0  # allocation gate ≈ 1
    bias[start[8] : start[9]] = 20.0  # write gate ≈ 1
    interface = cell.interface
    interface.kernel.assign(np.zeros(interface.kernel.shape, "float32"))
    interface.bias.assign(bias)
    rnn = keras.layers.RNN(cell, return_sequences=True, return_state=True)
    out, *states = rnn(np.ones((1, 4, 2), "float32"))
    writes = np_(cell.split_output(out)["write_weights"])[0, :, 0]  # [T, N]
    slots = writes.argmax(-1)
    assert len(set(slots.tolist())) == 4, slots
    np.testing.assert_allclose(writes.max(-1), 1.0, atol=1e-4)
    usage = np_(cell.unpack_states(states)["usage"])[0]
    np.testing.assert_allclose(usage[slots[:3]], 1.0, atol=1e-4)  # the 4th is counted next step


def test_forward_read_mode_follows_the_write_order():
    """Writing slots in some order, then reading with the forward mode from the first slot
    visits them in write order."""
    cell = DNCCell(8, memory_size=5, memory_width=3, num_read_heads=1, controller="dense")
    cell.build((None, 2))
    n = 5
    written = [3, 1, 4]
    states = cell.get_initial_state(batch_size=1)
    names = cell.state_names
    s = dict(zip(names, states))
    link = np.zeros((n, n), "float32")
    for a, b in zip(written[:-1], written[1:]):
        link[b, a] = 1.0  # b written right after a
    s["link"] = link.reshape(1, -1)
    s["read_weights"] = np.eye(n, dtype="float32")[[written[0]]]
    sizes = cell._interface_sizes()
    bias = np.zeros(sum(sizes), "float32")
    start = np.cumsum([0] + sizes)
    bias[start[8] : start[9]] = -20.0  # write gate ≈ 0: no write, the link stays
    bias[start[9] : start[10]] = [-20.0, -20.0, 20.0]  # read mode: forward
    cell.interface.kernel.assign(np.zeros(cell.interface.kernel.shape, "float32"))
    cell.interface.bias.assign(bias)
    visited = []
    states = [s[k] for k in names]
    for _ in range(2):
        _, states = cell(np.ones((1, 2), "float32"), states)
        visited.append(int(np_(cell.unpack_states(states)["read_weights"])[0, 0].argmax()))
    assert visited == written[1:]


def test_float16_policy_runs_without_nan_in_a_long_sequence():
    keras.config.set_dtype_policy("mixed_float16")
    x = np.random.default_rng(5).uniform(size=(2, 60, 5)).astype("float32")
    out = keras.layers.RNN(DNCCell(**SMALL), return_sequences=True)(x)
    assert keras.backend.standardize_dtype(out.dtype) == "float16"
    assert np.all(np.isfinite(np_(out)))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_read_heads=0), "`num_read_heads` must be a positive integer"),
        (dict(num_write_heads=1.5), "`num_write_heads` must be a positive integer"),
        (dict(controller="rnn"), "`controller` must be one of"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DNCCell(**{**SMALL, **kwargs})


def test_unknown_input_width_is_a_clear_error():
    with pytest.raises(ValueError, match="last dimension of `inputs` must be known"):
        DNCCell(**SMALL).build((None, None))

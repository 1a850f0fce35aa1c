import keras
import numpy as np
import pytest

from keras_adl.layers import NTMCell
from tests.harness import np_
from tests.layers import memory_cell_checks as checks

SMALL = dict(controller_units=12, memory_size=8, memory_width=4)


@pytest.mark.portable
def test_full_harness():
    # The initial memory is a constant (non-trainable).
    checks.run_cell_harness(NTMCell(**SMALL), expected_num_trainable_weights=5, full=True)


def test_harness_dense_two_heads_learned_memory():
    # The learned initial memory gets a gradient.
    checks.run_cell_harness(
        NTMCell(
            **SMALL,
            controller="dense",
            num_read_heads=2,
            num_write_heads=2,
            shift_range=2,
            memory_init="learned",
        ),
        expected_num_trainable_weights=5,
    )


def test_config_round_trip():
    checks.check_config_round_trip(
        NTMCell,
        dict(
            controller_units=7,
            memory_size=9,
            memory_width=3,
            num_read_heads=2,
            num_write_heads=3,
            shift_range=2,
            controller="dense",
            memory_init="random",
            clip_value=5.0,
            return_addressing=True,
        ),
    )
    cell = NTMCell(**SMALL, kernel_initializer=keras.initializers.RandomNormal(stddev=0.3))
    clone = NTMCell.from_config(cell.get_config())
    assert isinstance(clone.kernel_initializer, keras.initializers.RandomNormal)
    assert clone.kernel_initializer.stddev == 0.3


def test_keras_file_and_saved_model(tmp_path):
    checks.check_keras_file_and_saved_model(NTMCell(**SMALL, memory_init="random"), tmp_path)


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_mirrored_fit_matches_one_device():
    checks.check_mirrored_fit_matches_one_device(lambda: NTMCell(**SMALL))


def test_masked_steps_keep_the_state():
    checks.check_masked_steps_keep_the_state(NTMCell(**SMALL))


def _softplus(x):
    return np.log1p(np.exp(x))


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_one_step_matches_a_numpy_ntm():
    """One step of a dense-controller NTM against the paper's equations written in numpy."""
    n, w, units, clip = 6, 3, 5, 2.0
    cell = NTMCell(units, n, w, controller="dense", memory_init="random", clip_value=clip)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 4)).astype("float32")
    cell.build((None, 4))
    cell.set_weights([rng.normal(size=v.shape).astype("float32") for v in cell.weights])
    states = cell.get_initial_state(batch_size=2)
    out, new_states = cell(x, states)

    byname = {v.path.split("/", 1)[1]: np_(v) for v in cell.weights}
    kc, bc = byname["controller/kernel"], byname["controller/bias"]
    ki, bi, m0 = byname["interface/kernel"], byname["interface/bias"], byname["initial_memory"]
    m0 = np.broadcast_to(m0, (2, n, w))
    w0 = np.eye(n)[[0, 0]]  # initial weights: one-hot on slot 0
    r0 = m0[:, 0]
    h = np.clip(np.maximum(np.concatenate([x, r0], -1) @ kc + bc, 0), -clip, clip)
    p = np.clip(h @ ki + bi, -clip, clip)

    def address(memory, prev, q):
        key, beta, g = np.tanh(q[:, :w]), _softplus(q[:, w]), 1 / (1 + np.exp(-q[:, w + 1]))
        s, gamma = _softmax(q[:, w + 2 : w + 5]), 1 + _softplus(q[:, w + 5])
        cos = np.einsum("bw,bnw->bn", key, memory) / (
            np.sqrt((key**2).sum(-1) + 1e-6)[:, None] * np.sqrt((memory**2).sum(-1) + 1e-6)
        )
        wc = _softmax(beta[:, None] * cos)
        wg = g[:, None] * wc + (1 - g[:, None]) * prev
        ws = sum(s[:, k : k + 1] * np.roll(wg, k - 1, axis=-1) for k in range(3))
        wp = (ws + 1e-6) ** gamma[:, None]
        return wp / wp.sum(-1, keepdims=True)

    read_p, write_p = p[:, : w + 6], p[:, w + 6 :]
    ww = address(m0, w0, write_p)
    erase = 1 / (1 + np.exp(-write_p[:, w + 6 : 2 * w + 6]))
    add = np.tanh(write_p[:, 2 * w + 6 :])
    m1 = m0 * (1 - ww[:, :, None] * erase[:, None]) + ww[:, :, None] * add[:, None]
    wr = address(m1, w0, read_p)
    r1 = np.einsum("bn,bnw->bw", wr, m1)

    np.testing.assert_allclose(np_(out), np.concatenate([h, r1], -1), rtol=1e-4, atol=1e-5)
    got = {k: np_(v) for k, v in cell.unpack_states(new_states).items()}
    np.testing.assert_allclose(got["memory"], m1, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["read_weights"][:, 0], wr, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(got["write_weights"][:, 0], ww, rtol=1e-4, atol=1e-6)


def test_addressing_outputs_are_weightings_and_match_the_states():
    cell = NTMCell(**SMALL, num_read_heads=2, return_addressing=True)
    x = np.random.default_rng(4).uniform(size=(2, 5, 3)).astype("float32")
    rnn = keras.layers.RNN(cell, return_sequences=True, return_state=True)
    out, *states = rnn(x)
    parts = cell.split_output(out)
    assert tuple(parts["read_weights"].shape) == (2, 5, 2, 8)
    assert tuple(parts["write_weights"].shape) == (2, 5, 1, 8)
    np.testing.assert_allclose(np_(parts["read_weights"]).sum(-1), 1.0, rtol=1e-5)
    final = cell.unpack_states(states)
    np.testing.assert_allclose(
        np_(parts["read_weights"])[:, -1], np_(final["read_weights"]), atol=1e-6
    )
    assert tuple(parts["output"].shape) == (2, 5, 12 + 2 * 4)


def test_float16_policy_runs_without_nan_in_a_long_sequence():
    keras.config.set_dtype_policy("mixed_float16")
    cell = NTMCell(**SMALL)
    x = np.random.default_rng(5).uniform(size=(2, 60, 5)).astype("float32")
    out = keras.layers.RNN(cell, return_sequences=True)(x)
    assert keras.backend.standardize_dtype(out.dtype) == "float16"
    assert np.all(np.isfinite(np_(out)))


def test_float32_cell_keeps_full_precision_states_in_a_mixed_model():
    keras.config.set_dtype_policy("mixed_float16")
    x = np.random.default_rng(6).uniform(size=(2, 8, 5)).astype("float32")
    rnn = keras.layers.RNN(
        NTMCell(**SMALL, dtype="float32"), return_sequences=True, return_state=True, dtype="float32"
    )
    out, *states = rnn(keras.layers.Dense(5)(x))  # float16 input from a mixed layer
    assert all(keras.backend.standardize_dtype(s.dtype) == "float32" for s in states)
    assert np.all(np.isfinite(np_(out)))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(memory_size=0), "`memory_size` must be a positive integer"),
        (dict(shift_range=4), "`shift_range` allows 9 shifts, more than `memory_size` \\(8\\)"),
        (dict(controller="gru"), "`controller` must be one of"),
        (dict(memory_init="zeros"), "`memory_init` must be one of"),
        (dict(clip_value=-1), "`clip_value` must be a positive number or None"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        NTMCell(**{**SMALL, **kwargs})


def test_bad_inputs_and_states():
    cell = NTMCell(**SMALL)
    with pytest.raises(ValueError, match="`inputs` must have rank 2"):
        cell.build((2, 3, 4))
    cell.build((None, 4))
    with pytest.raises(ValueError, match="expected 6 states"):
        cell(np.zeros((2, 4), "float32"), cell.get_initial_state(2)[:3])
    with pytest.raises(ValueError, match="`return_addressing=True`"):
        cell.split_output(np.zeros((2, 20), "float32"))


def test_initial_state_without_build():
    checks.check_initial_state_without_build(NTMCell, SMALL)

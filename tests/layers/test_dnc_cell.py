import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.layers import DNCCell
from tests.harness import np_
from tests.layers import memory_cell_checks as checks

SMALL = dict(controller_units=12, memory_size=8, memory_width=4, num_read_heads=2)


@pytest.mark.portable
def test_full_harness():
    checks.run_cell_harness(DNCCell(**SMALL), expected_num_trainable_weights=5, full=True)


def test_harness_dense_two_write_heads_learned_memory():
    # The learned initial memory gets a gradient.
    checks.run_cell_harness(
        DNCCell(**SMALL, controller="dense", num_write_heads=2, memory_init="learned"),
        expected_num_trainable_weights=5,
    )


def test_config_round_trip():
    checks.check_config_round_trip(
        DNCCell,
        dict(
            controller_units=7,
            memory_size=9,
            memory_width=3,
            num_read_heads=3,
            num_write_heads=2,
            controller="dense",
            memory_init="random",
            clip_value=None,
            return_addressing=True,
        ),
    )


def test_keras_file_and_saved_model(tmp_path):
    checks.check_keras_file_and_saved_model(DNCCell(**SMALL), tmp_path)


@pytest.mark.slow  # the same check runs fast on the NTM cell
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
    cell = DNCCell(
        **SMALL,
        num_write_heads=num_write_heads,
        return_addressing=True,
        kernel_initializer=keras.initializers.RandomNormal(stddev=1.0),
    )
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


@pytest.mark.slow  # ~15 s: the DNC's second harness (sparse links); the dense one stays fast
@pytest.mark.tf_only
def test_sparse_links_harness_and_xla_fit():
    checks.run_cell_harness(DNCCell(**SMALL, sparse_links=3), expected_num_trainable_weights=5)
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input((6, 5)),
            keras.layers.RNN(DNCCell(**SMALL, sparse_links=3), return_sequences=True),
            keras.layers.Dense(2),
        ]
    )
    model.compile(keras.optimizers.Adam(1e-2), "mse", jit_compile=True)
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(8, 6, 5)).astype("float32"), rng.normal(size=(8, 6, 2))
    before = [np_(w).copy() for w in model.trainable_weights]
    history = model.fit(x, y, batch_size=4, epochs=3, verbose=0).history["loss"]
    assert np.all(np.isfinite(history)) and history[-1] < history[0]
    assert all(np.any(np_(w) != b) for w, b in zip(model.trainable_weights, before))


def test_sparse_links_config_and_keras_file(tmp_path):
    checks.check_config_round_trip(
        DNCCell,
        dict(
            controller_units=7,
            memory_size=9,
            memory_width=3,
            sparse_links=4,
            stop_usage_gradient=False,
        ),
    )
    checks.check_keras_file_and_saved_model(DNCCell(**SMALL, sparse_links=2), tmp_path)


@pytest.mark.parametrize("num_write_heads", [1, 2])
def test_sparse_links_keeping_every_entry_equal_the_dense_cell(num_write_heads):
    kwargs = dict(
        SMALL,
        num_write_heads=num_write_heads,
        kernel_initializer=keras.initializers.RandomNormal(stddev=1.0, seed=1),
    )
    dense, sparse = DNCCell(**kwargs), DNCCell(**kwargs, sparse_links=SMALL["memory_size"])
    dense_out, dense_states = _run(dense)
    sparse.build((None, 5))
    sparse.set_weights(dense.get_weights())
    sparse_out, sparse_states = _run(sparse)
    np.testing.assert_allclose(np_(sparse_out), np_(dense_out), atol=1e-5)
    from keras_adl.ops.addressing import sparse_link_to_dense

    link = sparse_link_to_dense(
        sparse_states["link_values"], sparse_states["link_indices"], SMALL["memory_size"]
    )
    np.testing.assert_allclose(np_(link), np_(dense_states["link"]), atol=1e-6)


def test_sparse_links_states_keep_distinct_columns_and_a_zero_diagonal():
    cell = DNCCell(
        **SMALL, sparse_links=2, kernel_initializer=keras.initializers.RandomNormal(stddev=1.0)
    )
    _, s = _run(cell, steps=20)
    values, indices = np_(s["link_values"]), np_(s["link_indices"]).astype(int)  # [B,1,N,K]
    assert values.shape == indices.shape == (3, 1, 8, 2)
    assert np.all(values >= -1e-6) and np.all(values <= 1 + 1e-6)
    assert np.any(values > 1e-3)
    assert all(len(set(row)) == 2 for row in indices.reshape(-1, 2).tolist())
    rows = np.arange(8)[None, None, :, None]
    assert np.all(values[indices == rows] == 0.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(sparse_links=0), "`sparse_links` must be a positive integer"),
        (dict(stop_usage_gradient="yes"), "`stop_usage_gradient` must be a bool"),
        (dict(sparse_links=9), "`sparse_links` must be at most `memory_size` \\(8\\)"),
        (
            dict(memory_size=300, sparse_links=8, dtype="bfloat16"),
            "`memory_size` must be at most 256",
        ),
    ],
)
def test_bad_sparse_links(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        DNCCell(**{**SMALL, **kwargs})


def test_allocation_write_goes_to_unused_slots_in_turn():
    """With write gate = allocation gate = 1 and nothing freed, successive writes fill distinct
    slots, and usage of each written slot is ~1."""
    cell = DNCCell(
        8,
        memory_size=6,
        memory_width=3,
        num_read_heads=1,
        controller="dense",
        return_addressing=True,
    )
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


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _oneplus(x):
    return 1 + np.log1p(np.exp(x))


def _content(memory, keys, strengths):
    dot = np.einsum("bhw,bnw->bhn", keys, memory)
    norms = (
        np.sqrt((keys**2).sum(-1) + 1e-6)[:, :, None]
        * np.sqrt((memory**2).sum(-1) + 1e-6)[:, None, :]
    )
    return _softmax(strengths[:, :, None] * dot / norms)


def _allocation(usage):
    u = 1e-6 + (1 - 1e-6) * usage
    a = np.zeros_like(u)
    for b in range(len(u)):
        product = 1.0
        for j in np.argsort(u[b], kind="stable"):  # ties: lower slot first
            a[b, j] = (1 - u[b, j]) * product
            product *= u[b, j]
    return a


def test_three_steps_match_a_numpy_dnc():
    """Three steps of a dense-controller DNC (2 read heads) against the paper's equations in
    numpy, states included: catches a wrong order of updates (e.g. the link built from the new
    precedence), a wrong state layout or a transposed link."""
    n, w, r, units, clip = 5, 3, 2, 6, 3.0
    cell = DNCCell(
        units, n, w, num_read_heads=r, controller="dense", memory_init="random", clip_value=clip
    )
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(2, 3, 4)).astype("float32")
    cell.build((None, 4))
    for v in cell.weights:
        v.assign(rng.normal(size=v.shape).astype("float32"))
    byname = {v.path.split("/", 1)[1]: np_(v).astype("float64") for v in cell.weights}
    states = cell.get_initial_state(batch_size=2)
    outputs = []
    for t in range(3):
        out, states = cell(xs[:, t], states)
        outputs.append(np_(out))

    memory = np.broadcast_to(byname["initial_memory"], (2, n, w)).copy()
    usage, precedence = np.zeros((2, n)), np.zeros((2, n))
    link, write_w = np.zeros((2, n, n)), np.zeros((2, n))
    read_w, reads = np.zeros((2, r, n)), np.zeros((2, r * w))
    sizes = [r * w, r, w, 1, w, w, r, 1, 1, 3 * r]
    for t in range(3):
        h = np.concatenate([xs[:, t], reads], -1) @ byname["controller/kernel"]
        h = np.clip(np.maximum(h + byname["controller/bias"], 0), -clip, clip)
        p = np.clip(h @ byname["interface/kernel"] + byname["interface/bias"], -clip, clip)
        rk, rs, wk, ws, erase, vec, free, g_a, g_w, modes = np.split(p, np.cumsum(sizes)[:-1], -1)
        rk, rs = rk.reshape(2, r, w), _oneplus(rs)
        erase, free, g_a, g_w = _sigmoid(erase), _sigmoid(free), _sigmoid(g_a), _sigmoid(g_w)
        modes = _softmax(modes.reshape(2, r, 3))
        usage = (usage + write_w - usage * write_w) * np.prod(1 - free[:, :, None] * read_w, 1)
        write_content = _content(memory, wk[:, None], _oneplus(ws))[:, 0]
        write_w = g_w * (g_a * _allocation(usage) + (1 - g_a) * write_content)
        memory = (
            memory * (1 - write_w[:, :, None] * erase[:, None]) + write_w[:, :, None] * vec[:, None]
        )
        link = (1 - write_w[:, :, None] - write_w[:, None, :]) * link + write_w[
            :, :, None
        ] * precedence[:, None, :]
        link[:, np.arange(n), np.arange(n)] = 0
        precedence = (1 - write_w.sum(-1, keepdims=True)) * precedence + write_w
        forward = np.einsum("bij,brj->bri", link, read_w)
        backward = np.einsum("bij,bri->brj", link, read_w)
        read_w = (
            modes[..., :1] * backward
            + modes[..., 1:2] * _content(memory, rk, rs)
            + modes[..., 2:] * forward
        )
        reads = np.einsum("brn,bnw->brw", read_w, memory).reshape(2, -1)
        np.testing.assert_allclose(
            outputs[t], np.concatenate([h, reads], -1), rtol=1e-4, atol=1e-5, err_msg=f"step {t}"
        )
    got = {k: np_(v) for k, v in cell.unpack_states(states).items()}
    for name, want in [
        ("memory", memory),
        ("usage", usage),
        ("link", link[:, None]),
        ("precedence", precedence[:, None]),
        ("read_weights", read_w),
        ("write_weights", write_w[:, None]),
    ]:
        np.testing.assert_allclose(got[name], want, rtol=1e-4, atol=1e-5, err_msg=name)
    assert np.abs(link).max() > 1e-3  # the link was exercised


@pytest.mark.parametrize("stop", [False, True])
def test_usage_gradient_reaches_the_previous_write_weights(stop):
    """The documented choice: with ``stop_usage_gradient=False`` (the paper's equations) the new
    usage depends differentiably on the previous step's write weights,
    ∂u_t[i]/∂w^w_{t−1}[i] = (1 − u[i]) ψ[i] (no read, so ψ = 1); with ``True`` (the default,
    DeepMind's choice) it is 0."""
    assert DNCCell(**SMALL).stop_usage_gradient is True  # the default
    cell = DNCCell(**SMALL, stop_usage_gradient=stop)
    cell.build((None, 5))
    s = cell.unpack_states(cell.get_initial_state(batch_size=2))
    rng = np.random.default_rng(3)
    usage = rng.uniform(size=(2, 8)).astype("float32")
    s["usage"] = tf.constant(usage)
    write = tf.Variable(rng.dirichlet(np.ones(8), size=(2, 1)).astype("float32"))
    with tf.GradientTape() as tape:
        s["write_weights"] = write
        states = [tf.reshape(s[name], (2, -1)) for name in cell.state_names]
        _, new_states = cell(np.ones((2, 5), "float32"), states)
        new_usage = cell.unpack_states(new_states)["usage"]
    jacobian = np_(tape.batch_jacobian(new_usage, write))[:, :, 0]  # [B, N, N]
    want = np.zeros_like(usage) if stop else 1 - usage
    np.testing.assert_allclose(np.diagonal(jacobian, axis1=1, axis2=2), want, rtol=1e-5)


@pytest.mark.parametrize("sparse_links", [None, 3])
def test_float16_policy_runs_without_nan_in_a_long_sequence(sparse_links):
    keras.config.set_dtype_policy("mixed_float16")
    x = np.random.default_rng(5).uniform(size=(2, 60, 5)).astype("float32")
    out = keras.layers.RNN(DNCCell(**SMALL, sparse_links=sparse_links), return_sequences=True)(x)
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


def test_integer_inputs_are_a_clear_error():
    rnn = keras.layers.RNN(DNCCell(**SMALL))
    with pytest.raises(TypeError, match="`inputs` must be a float tensor"):
        rnn(np.ones((2, 3, 5), "int32"))


def test_initial_state_without_build():
    checks.check_initial_state_without_build(DNCCell, SMALL)

"""The backends' own attention paths (`keras_adl.ops._kernels`) against the composed ops.

On TensorFlow the blocked path is forced on short sequences (blocks of 4 queries, whatever the
size of the scores), so every mask and every block edge is checked in milliseconds. PyTorch
runs its fused kernel as shipped. JAX's fused path is cuDNN's, for 16-bit floats on a GPU: on
a CPU these tests check that JAX keeps the composed ops' semantics.
"""

import keras
import numpy as np
import pytest

from keras_adl.ops import _kernels
from keras_adl.ops import attention as attention_ops
from keras_adl.ops.attention import (
    causal_mask,
    dot_scores,
    masked_softmax,
    merge_masks,
    scaled_dot_product_attention,
)
from tests.harness import backend, force_blocked_attention, np_, value_and_grads

pytestmark = pytest.mark.portable

B, H, S, T, D = 2, 3, 10, 10, 8  # S = 10: the last block of 4 queries is padded


@pytest.fixture
def small_blocks(monkeypatch):
    force_blocked_attention(monkeypatch, 4)


def _masks(rng, queries=S):
    keys = rng.random((B, 1, 1, T)) > 0.3
    keys[1] = False  # the second example has no key at all
    keys[0, ..., :3] = False  # left padding: under causality the first rows see nothing
    dense = rng.random((B, 1, queries, T)) > 0.4
    dense[0, 0, 6] = False  # one fully masked row
    per_head = rng.random((B, H, queries, T)) > 0.4
    shared = rng.random((1, 1, queries, T)) > 0.4
    return {"none": None, "keys": keys, "dense": dense, "per_head": per_head, "shared": shared}


def _composed(q, k, v, mask, causal):
    if causal:
        mask = merge_masks(attention_mask=mask, causal=causal_mask(q.shape[2], k.shape[2]))
    return keras.ops.matmul(masked_softmax(dot_scores(q, k, scale=0.3), mask), v)


def _values_and_gradients(fn, q, k, v, probe):
    out = fn(q, k, v)
    _, grads = value_and_grads(lambda q, k, v: keras.ops.sum(fn(q, k, v) * probe), q, k, v)
    return [np_(out)] + [np_(g) for g in grads]


@pytest.mark.parametrize("queries", [S, 7])  # 7 < T: fewer queries than keys
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("mask_kind", ["none", "keys", "dense", "per_head", "shared"])
def test_backend_path_equals_composed_ops_with_every_mask(small_blocks, mask_kind, causal, queries):
    rng = np.random.default_rng(0)
    q, k, v = (rng.normal(size=(B, H, n, D)).astype("float32") for n in (queries, T, T))
    mask = _masks(rng, queries)[mask_kind]
    probe = keras.ops.convert_to_tensor(rng.normal(size=(B, H, queries, D)).astype("float32"))
    tensor_mask = None if mask is None else keras.ops.convert_to_tensor(mask)
    fast = _values_and_gradients(
        lambda q, k, v: scaled_dot_product_attention(q, k, v, tensor_mask, 0.3, causal=causal),
        q,
        k,
        v,
        probe,
    )
    reference = _values_and_gradients(
        lambda q, k, v: _composed(q, k, v, tensor_mask, causal), q, k, v, probe
    )
    for got, want in zip(fast, reference):
        assert np.all(np.isfinite(got))
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    if mask_kind == "keys":
        assert np.all(fast[0][1] == 0)  # no key: zero context, not an average of the values
        if causal:
            assert np.all(fast[0][0, :, :3] == 0)  # rows that see only padded keys


def test_the_backend_path_is_the_one_taken(small_blocks, monkeypatch):
    """The comparison above would pass on the composed ops alone: check the dispatch."""
    taken = []
    real = _kernels.backend_attention

    def spy(*args):
        out = real(*args)
        taken.append(out is not None)
        return out

    monkeypatch.setattr(attention_ops, "backend_attention", spy)
    q = np.ones((1, 1, 6, 8), "float32")
    scaled_dot_product_attention(q, q, q, None, 0.5)
    scaled_dot_product_attention(q[0], q[0], q[0], None, 0.5)  # rank 3: the composed ops
    # JAX's fused path is cuDNN's, for 16-bit floats on a GPU: float32 keeps the composed ops.
    assert taken == [backend() != "jax", False]


@pytest.mark.tf_only  # JAX and PyTorch take their kernels at every size
def test_tensorflow_takes_the_blocked_path_only_for_large_score_tensors(monkeypatch):
    monkeypatch.setattr(_kernels, "QUERY_BLOCK", 4)
    monkeypatch.setattr(_kernels, "BLOCKED_MIN_SCORES", 2 * 3 * 8 * 8)
    q = np.ones((2, 3, 8, 4), "float32")
    assert _kernels.backend_attention(q, q, q, None, 1.0, False) is not None
    assert _kernels.backend_attention(q[:1], q[:1], q[:1], None, 1.0, False) is None
    short = q[:, :, :4]  # one block of queries: nothing to save
    assert _kernels.backend_attention(short, q, q, None, 1.0, False) is None


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_low_precision_stays_close_to_float32(small_blocks, dtype):
    rng = np.random.default_rng(1)
    q, k, v = (rng.normal(size=(B, H, S, D)).astype("float32") for _ in range(3))
    mask = keras.ops.convert_to_tensor(_masks(rng)["keys"])
    reference = np_(scaled_dot_product_attention(q, k, v, mask, 0.3, causal=True))
    low = [keras.ops.cast(x, dtype) for x in (q, k, v)]
    out = scaled_dot_product_attention(*low, mask, 0.3, causal=True)
    assert keras.backend.standardize_dtype(out.dtype) == dtype
    out = np_(keras.ops.cast(out, "float32"))
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, reference, atol=3e-2, rtol=3e-2)
    assert np.all(out[1] == 0)
    probe = keras.ops.convert_to_tensor(rng.normal(size=(B, H, S, D)).astype("float32"))

    def loss(q, k, v):
        out = scaled_dot_product_attention(q, k, v, mask, 0.3, causal=True)
        return keras.ops.sum(keras.ops.cast(out, "float32") * probe)

    _, want = value_and_grads(loss, q, k, v)
    _, got = value_and_grads(loss, *(np_(x) for x in low))
    for g, w in zip(got, want):
        g = np_(keras.ops.cast(g, "float32"))
        assert np.all(np.isfinite(g))
        np.testing.assert_allclose(g, np_(w), atol=6e-2, rtol=6e-2)


@pytest.mark.tf_only
def test_blocked_path_compiles_with_xla_and_its_gradient_matches(small_blocks):
    import tensorflow as tf

    rng = np.random.default_rng(2)
    q, k, v = (tf.constant(rng.normal(size=(B, H, S, D)).astype("float32")) for _ in range(3))
    mask = tf.constant(_masks(rng)["keys"])

    def step(q, k, v):
        with tf.GradientTape() as tape:
            tape.watch([q, k, v])
            out = scaled_dot_product_attention(q, k, v, mask, 0.3, causal=True)
            loss = tf.reduce_sum(tf.sin(out))
        return [out] + tape.gradient(loss, [q, k, v])

    eager = step(q, k, v)
    compiled = tf.function(step, jit_compile=True)(q, k, v)
    for got, want in zip(compiled, eager):
        np.testing.assert_allclose(np_(got), np_(want), rtol=1e-5, atol=1e-6)


@pytest.mark.tf_only
def test_an_unknown_length_chooses_the_path_at_run_time(monkeypatch):
    """A graph traced for any size runs the blocked path only from the threshold."""
    import tensorflow as tf

    monkeypatch.setattr(_kernels, "BLOCKED_MIN_SCORES", B * H * 8 * 8)
    monkeypatch.setattr(_kernels, "QUERY_BLOCK", 4)
    blocked_runs = tf.Variable(0)
    real = _kernels._blocked_tensorflow

    def counted(*args):
        with tf.control_dependencies([blocked_runs.assign_add(1)]):
            return tf.identity(real(*args))

    monkeypatch.setattr(_kernels, "_blocked_tensorflow", counted)
    spec = tf.TensorSpec((None, H, None, D), tf.float32)

    @tf.function(input_signature=[spec])
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.sin(scaled_dot_product_attention(x, x, x, None, 0.3, True)))
        return loss, tape.gradient(loss, x)

    rng = np.random.default_rng(3)
    for length, runs in ((6, 0), (10, 1)):  # below and above the threshold, one graph
        x = rng.normal(size=(B, H, length, D)).astype("float32")
        loss, grad = step(x)
        want_loss, (want_grad,) = value_and_grads(_causal_self_attention_loss, x)
        np.testing.assert_allclose(np_(loss), np_(want_loss), rtol=1e-5)
        np.testing.assert_allclose(np_(grad), np_(want_grad), rtol=1e-4, atol=1e-5)
        assert int(blocked_runs.numpy()) == runs


@pytest.mark.tf_only
def test_a_mask_whose_rows_are_unknown_until_run_time(small_blocks):
    """[.., 1, T] fed through a graph traced for [.., None, T] masks keys only, on every row."""
    import tensorflow as tf

    rng = np.random.default_rng(4)
    q, k, v = (rng.normal(size=(B, H, S, D)).astype("float32") for _ in range(3))
    keys = _masks(rng)["keys"]
    specs = [tf.TensorSpec(q.shape, tf.float32)] * 3 + [tf.TensorSpec((B, 1, None, T), tf.bool)]
    attend = tf.function(
        lambda q, k, v, m: scaled_dot_product_attention(q, k, v, m, 0.3), input_signature=specs
    )
    got = np_(attend(q, k, v, keys))
    np.testing.assert_allclose(got, np_(_composed(q, k, v, keys, False)), rtol=1e-5, atol=1e-6)


def _causal_self_attention_loss(x):
    length = x.shape[2]
    weights = masked_softmax(dot_scores(x, x, scale=0.3), causal_mask(length, length))
    return keras.ops.sum(keras.ops.sin(keras.ops.matmul(weights, x)))

import keras
import numpy as np
import pytest
from keras import ops

from keras_adl.ops.attention import (
    additive_scores,
    causal_mask,
    dot_scores,
    large_negative,
    masked_softmax,
    merge_heads,
    merge_masks,
    split_heads,
    weighted_sum,
)
from tests.harness import np_, value_and_grads

pytestmark = pytest.mark.portable  # run on every backend by make test-backends


def test_masked_softmax_matches_softmax_over_unmasked_and_zero_elsewhere():
    scores = np.random.randn(3, 5).astype("float32")
    mask = np.array([[1, 1, 0, 1, 0], [1, 0, 0, 0, 0], [1, 1, 1, 1, 1]], bool)
    w = np_(masked_softmax(scores, mask))
    for row in range(3):
        kept = scores[row][mask[row]]
        ref = np.exp(kept - kept.max()) / np.exp(kept - kept.max()).sum()
        np.testing.assert_allclose(w[row][mask[row]], ref, rtol=1e-5)
        assert np.all(w[row][~mask[row]] == 0.0)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_fully_masked_row_is_zero_not_nan(dtype):
    scores = ops.cast(np.random.randn(2, 4) * 100, dtype)
    mask = np.array([[0, 0, 0, 0], [1, 0, 0, 1]], bool)
    w = np_(ops.cast(masked_softmax(scores, mask), "float32"))
    assert np.all(np.isfinite(w))
    assert np.all(w[0] == 0)
    assert w[1].sum() == pytest.approx(1.0, abs=1e-2)
    assert keras.backend.standardize_dtype(masked_softmax(scores, mask).dtype) == dtype


def test_large_negative_fits_the_dtype():
    assert np.isfinite(np.float16(large_negative("float16")))
    assert large_negative("float32") <= -1e9


def test_masked_softmax_broadcasts_mask_over_heads():
    scores = np.random.randn(2, 3, 4, 5).astype("float32")
    mask = np.random.rand(2, 1, 4, 5) > 0.3
    w = np_(masked_softmax(scores, mask))
    assert np.all(w[np.broadcast_to(~mask, w.shape)] == 0)


def test_additive_scores_formula_and_single_step():
    q = np.random.randn(2, 3, 4).astype("float32")
    k = np.random.randn(2, 5, 4).astype("float32")
    v = np.random.randn(4).astype("float32")
    b = np.random.randn(4).astype("float32")
    e = np_(additive_scores(q, k, v, b))
    ref = np.tanh(q[:, :, None, :] + k[:, None, :, :] + b) @ v
    np.testing.assert_allclose(e, ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        np_(additive_scores(q[:, 1], k, v, b)), ref[:, 1], rtol=1e-5, atol=1e-5
    )


def test_dot_scores_formula_scale_and_single_step():
    q = np.random.randn(2, 3, 4).astype("float32")
    k = np.random.randn(2, 5, 4).astype("float32")
    e = np_(dot_scores(q, k, scale=0.5))
    np.testing.assert_allclose(e, 0.5 * np.einsum("bsd,btd->bst", q, k), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        np_(dot_scores(q[:, 0], k)), np.einsum("bd,btd->bt", q[:, 0], k), rtol=1e-5
    )


def test_causal_mask_with_offset():
    m = np_(causal_mask(3, 3))
    np.testing.assert_array_equal(m, np.tril(np.ones((3, 3), bool)))
    m = np_(causal_mask(1, 5, offset=2))
    np.testing.assert_array_equal(m, [[True, True, True, False, False]])


def test_weighted_sum_and_merge_masks():
    w = np.random.rand(2, 3, 4).astype("float32")
    v = np.random.rand(2, 4, 6).astype("float32")
    np.testing.assert_allclose(np_(weighted_sum(w, v)), w @ v, rtol=1e-5)
    np.testing.assert_allclose(np_(weighted_sum(w[:, 0], v)), (w @ v)[:, 0], rtol=1e-5)
    q = np.array([[1, 1, 0]], bool)
    k = np.array([[1, 0, 1, 1]], bool)
    m = np_(merge_masks(q, k, causal=causal_mask(3, 4)))
    np.testing.assert_array_equal(m, q[:, :, None] & k[:, None, :] & np.tril(np.ones((3, 4), bool)))
    assert merge_masks() is None


def test_split_and_merge_heads_are_inverse():
    x = np.random.rand(2, 5, 12).astype("float32")
    heads = split_heads(x, 3)
    assert tuple(heads.shape) == (2, 3, 5, 4)
    np.testing.assert_array_equal(np_(heads)[:, 1], x[:, :, 4:8])
    np.testing.assert_array_equal(np_(merge_heads(heads)), x)


def _composed(q, k, v, mask, scale):
    return weighted_sum(masked_softmax(dot_scores(q, k, scale=scale), mask), v)


@pytest.mark.parametrize("use_mask", [False, True])
def test_scaled_dot_product_attention_values_and_gradients_match_composed_ops(use_mask):
    from keras_adl.ops.attention import scaled_dot_product_attention

    rng = np.random.RandomState(3)
    q = rng.randn(2, 3, 4, 5).astype("float32")
    k = rng.randn(2, 3, 6, 5).astype("float32")
    v = rng.randn(2, 3, 6, 7).astype("float32")
    mask = None
    if use_mask:
        mask = rng.rand(2, 1, 4, 6) > 0.4
        mask[0, 0, 1] = False  # a fully masked row
    probe = keras.ops.convert_to_tensor(rng.randn(2, 3, 4, 7).astype("float32"))
    results = []
    for fn in (scaled_dot_product_attention, _composed):
        out = fn(q, k, v, mask, 0.4)
        _, grads = value_and_grads(
            lambda q, k, v, fn=fn: keras.ops.sum(keras.ops.sin(fn(q, k, v, mask, 0.4)) * probe),
            q,
            k,
            v,
        )
        results.append([out] + list(grads))
    for fast, reference in zip(*results):
        np.testing.assert_allclose(np_(fast), np_(reference), rtol=1e-4, atol=1e-5)
    if use_mask:
        assert np.all(np_(results[0][0])[0, :, 1] == 0)


@pytest.mark.tf_only
def test_scaled_dot_product_attention_compiles_and_runs_in_float16():
    import tensorflow as tf

    from keras_adl.ops.attention import scaled_dot_product_attention

    q32 = tf.random.normal((2, 2, 3, 4))
    mask = tf.constant([[True, False, True]])

    @tf.function(jit_compile=True)
    def step(q):
        with tf.GradientTape() as tape:
            tape.watch(q)
            out = scaled_dot_product_attention(q, q, q, mask, 0.5)
            loss = tf.reduce_sum(tf.square(out))
        return out, tape.gradient(loss, q)

    out, grad = step(tf.cast(q32, "float16"))
    ref_out, ref_grad = step(q32)
    assert out.dtype == tf.float16
    np.testing.assert_allclose(np_(out).astype("float32"), np_(ref_out), rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(np_(grad).astype("float32"), np_(ref_grad), rtol=2e-2, atol=2e-2)


def test_masked_softmax_over_one_position():
    scores = np.random.randn(3, 1).astype("float32")
    np.testing.assert_array_equal(np_(masked_softmax(scores)), np.ones((3, 1)))
    mask = np.array([[True], [False], [True]])
    np.testing.assert_array_equal(np_(masked_softmax(scores, mask)), mask.astype("float32"))


def test_context_scores_formula_and_gradient():
    from keras_adl.ops.attention import context_scores

    rng = np.random.default_rng(4)
    keys = rng.standard_normal((2, 3, 5, 4)).astype("float32")
    context = rng.standard_normal(4).astype("float32")
    np.testing.assert_allclose(
        np_(context_scores(keys, context)), keys @ context, rtol=1e-5, atol=1e-6
    )
    _, (d_keys, d_context) = value_and_grads(
        lambda k, u: keras.ops.sum(context_scores(k, u)), keys, context
    )
    np.testing.assert_allclose(np_(d_keys), np.broadcast_to(context, keys.shape), rtol=1e-6)
    np.testing.assert_allclose(np_(d_context), keys.sum(axis=(0, 1, 2)), rtol=1e-5)


def test_doubly_stochastic_penalty_formula_mask_and_dtype():
    from keras_adl.ops.attention import doubly_stochastic_penalty

    rng = np.random.default_rng(5)
    alpha = rng.random((2, 4, 3)).astype("float32")
    alpha /= alpha.sum(-1, keepdims=True)
    mask = np.array([[True, True, False, False], [True, True, True, True]])
    expected = ((1.0 - (alpha * mask[..., None]).sum(1)) ** 2).sum(-1)
    got = doubly_stochastic_penalty(alpha.astype("float16"), mask)
    assert keras.backend.standardize_dtype(got.dtype) == "float32"
    np.testing.assert_allclose(np_(got), expected, rtol=2e-3)
    # A padded step changes nothing: its weights are left out.
    changed = alpha.copy()
    changed[0, 3] = [1.0, 0.0, 0.0]
    np.testing.assert_allclose(
        np_(doubly_stochastic_penalty(changed, mask))[0], expected[0], rtol=1e-5
    )

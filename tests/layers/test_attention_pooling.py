import keras
import numpy as np
import pytest

from keras_adl.layers import AttentionPooling
from keras_adl.ops import context_scores
from tests.harness import np_, run_layer_test

RNG = np.random.default_rng(0)
H = RNG.normal(size=(3, 5, 6)).astype("float32")
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool)


def test_harness():
    run_layer_test(AttentionPooling, {"units": 4}, H, (3, 6), expected_num_trainable_weights=3)


@pytest.mark.portable
def test_full_harness_with_weights_and_mask():
    run_layer_test(
        AttentionPooling,
        {"units": 4, "use_bias": False},
        {"inputs": H, "mask": MASK},
        [(3, 6), (3, 5)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=2,
        full=True,
    )


def test_values_against_the_formula():
    layer = AttentionPooling(4)
    pooled, alpha = layer(H, mask=MASK, return_attention_scores=True)
    kernel, bias = np_(layer.projection.kernel), np_(layer.projection.bias)
    u_ctx = np_(layer.context_vector)
    u = np.tanh(H @ kernel + bias)  # u_t = tanh(W h_t + b)
    scores = u @ u_ctx  # u_tᵀ u_ctx
    scores = np.where(MASK, scores, -np.inf)
    expected = np.exp(scores - scores.max(1, keepdims=True))
    expected /= expected.sum(1, keepdims=True)
    np.testing.assert_allclose(np_(alpha), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(
        np_(pooled), np.einsum("bt,btd->bd", expected, H), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(np_(context_scores(u, u_ctx)), u @ u_ctx, rtol=1e-5, atol=1e-6)


def test_masked_steps_get_exactly_zero_weight_and_change_nothing():
    layer = AttentionPooling(4)
    pooled, alpha = layer(H, mask=MASK, return_attention_scores=True)
    assert np.all(np_(alpha)[~MASK] == 0.0)
    np.testing.assert_allclose(np_(alpha).sum(1), 1.0, rtol=1e-6)
    noisy = np.where(MASK[..., None], H, 1e4 * RNG.normal(size=H.shape)).astype("float32")
    np.testing.assert_array_equal(np_(layer(noisy, mask=MASK)), np_(pooled))


def test_all_masked_row_gives_zeros_not_nan():
    layer = AttentionPooling(4)
    mask = MASK.copy()
    mask[1] = False
    pooled, alpha = layer(H, mask=mask, return_attention_scores=True)
    assert np.all(np_(pooled)[1] == 0.0) and np.all(np_(alpha)[1] == 0.0)
    assert np.isfinite(np_(pooled)).all()


def test_keras_mask_is_read_and_not_propagated():
    ids = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(10, 6, mask_zero=True)(ids)
    pooled, alpha = AttentionPooling(4)(x, return_attention_scores=True)
    model = keras.Model(ids, [pooled, alpha])
    weights = np_(model(np.array([[3, 4, 0, 0]]))[1])
    assert weights[0, 2:].tolist() == [0.0, 0.0]
    assert getattr(pooled, "_keras_mask", None) is None


def test_float16_masking_is_finite():
    keras.config.set_dtype_policy("mixed_float16")
    layer = AttentionPooling(4)
    pooled, alpha = layer(H * 100, mask=MASK, return_attention_scores=True)
    assert np.isfinite(np_(pooled)).all() and np.all(np_(alpha)[~MASK] == 0.0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="`units` must be a positive integer; received 0"):
        AttentionPooling(0)
    with pytest.raises(ValueError, match="`inputs` must have rank 3"):
        AttentionPooling(4)(H[0])
    with pytest.raises(ValueError, match="`keys` and `context_vector`"):
        context_scores(H, np.ones(4, "float32"))

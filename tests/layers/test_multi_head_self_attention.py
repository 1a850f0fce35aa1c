import keras
import numpy as np
import pytest

from keras_adl.layers import MultiHeadSelfAttention
from tests.harness import force_blocked_attention, np_, run_layer_test


def test_harness():
    x = np.random.rand(2, 5, 8).astype("float32")
    run_layer_test(
        MultiHeadSelfAttention, {"num_heads": 2}, x, (2, 5, 8), expected_num_trainable_weights=4
    )


@pytest.mark.portable
def test_full_harness_with_scores_and_causal_mask():
    x = np.random.rand(2, 5, 8).astype("float32")
    run_layer_test(
        MultiHeadSelfAttention,
        {"num_heads": 3, "key_dim": 4, "value_dim": 5, "output_dim": 6, "dropout": 0.1},
        x,
        [(2, 5, 6), (2, 3, 5, 5)],
        call_kwargs={"return_attention_scores": True, "use_causal_mask": True},
        expected_num_trainable_weights=4,
        full=True,
        no_gradient={1: ("/output/",)},  # the scores come before the output projection
    )


def test_matches_reference_formula():
    layer = MultiHeadSelfAttention(num_heads=2, key_dim=3, value_dim=4)
    x = np.random.rand(1, 4, 6).astype("float32")
    out, weights = layer(x, return_attention_scores=True)
    kernel, bias = (np_(w) for w in layer.qkv_dense.weights)
    qkv = x @ kernel + bias
    q, k, v = qkv[..., :6], qkv[..., 6:12], qkv[..., 12:]
    heads = []
    for h in range(2):
        qh, kh, vh = (
            q[0, :, 3 * h : 3 * h + 3],
            k[0, :, 3 * h : 3 * h + 3],
            v[0, :, 4 * h : 4 * h + 4],
        )
        s = qh @ kh.T / np.sqrt(3)
        a = np.exp(s - s.max(-1, keepdims=True))
        a /= a.sum(-1, keepdims=True)
        np.testing.assert_allclose(np_(weights)[0, h], a, rtol=1e-5, atol=1e-6)
        heads.append(a @ vh)
    ok, ob = (np_(w) for w in layer.output_dense.weights)
    np.testing.assert_allclose(
        np_(out)[0], np.concatenate(heads, -1) @ ok + ob, rtol=1e-5, atol=1e-5
    )


def test_causality_future_tokens_change_nothing_in_the_past():
    layer = MultiHeadSelfAttention(num_heads=2)
    x = np.random.rand(2, 6, 8).astype("float32")
    y = x.copy()
    y[:, 4:] = np.random.rand(2, 2, 8)
    a = np_(layer(x, use_causal_mask=True))
    b = np_(layer(y, use_causal_mask=True))
    np.testing.assert_allclose(a[:, :4], b[:, :4], atol=1e-6)
    assert not np.allclose(a[:, 4:], b[:, 4:])


def _masked_model(num_heads=2):
    tokens = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(50, 8, mask_zero=True)(tokens)
    y, w = MultiHeadSelfAttention(num_heads)(x, return_attention_scores=True)
    return keras.Model(tokens, [y, w])


def test_padding_changes_no_unpadded_output_and_weights_ignore_padding():
    model = _masked_model()
    a = np.array([[3, 4, 5, 0, 0], [7, 8, 0, 0, 0]])
    b = np.array([[3, 4, 5, 0, 0, 0, 0, 0], [7, 8, 0, 0, 0, 0, 0, 0]])
    ya, wa = (np_(t) for t in model(a))
    yb, wb = (np_(t) for t in model(b))
    np.testing.assert_allclose(ya[0, :3], yb[0, :3], atol=1e-6)
    np.testing.assert_allclose(ya[1, :2], yb[1, :2], atol=1e-6)
    valid = a != 0
    # Unmasked queries: weights sum to 1 over unmasked keys and are exactly 0 on masked keys.
    for row in range(2):
        for q in np.flatnonzero(valid[row]):
            np.testing.assert_allclose(wa[row, :, q].sum(-1), 1.0, rtol=1e-6)
            assert np.all(wa[row, :, q, ~valid[row]] == 0)
        # Padded queries attend to nothing.
        assert np.all(wa[row, :, ~valid[row]] == 0)


def test_fully_padded_row_gives_finite_zero_weights():
    model = _masked_model()
    y, w = (np_(t) for t in model(np.array([[0, 0, 0], [1, 2, 3]])))
    assert np.all(np.isfinite(y))
    assert np.all(w[0] == 0)


def test_explicit_padding_mask_equals_keras_mask_and_attention_mask_combines():
    layer = MultiHeadSelfAttention(num_heads=2)
    x = np.random.rand(1, 4, 8).astype("float32")
    mask = np.array([[True, True, True, False]])
    attention_mask = np.array([[[1, 0, 1, 1]] * 4], bool)
    _, w = layer(x, mask=mask, attention_mask=attention_mask, return_attention_scores=True)
    w = np_(w)
    assert np.all(w[0, :, :3, 1] == 0) and np.all(w[0, :, :3, 3] == 0)
    np.testing.assert_allclose(w[0, :, :3].sum(-1), 1.0, rtol=1e-6)


def test_cached_incremental_calls_equal_causal_full_call():
    layer = MultiHeadSelfAttention(num_heads=2)
    x = np.random.rand(2, 6, 8).astype("float32")
    full = np_(layer(x, use_causal_mask=True))
    cache = layer.initial_cache(2, 6)
    steps = []
    for t in range(6):
        out, cache = layer(x[:, t : t + 1], cache=cache, cache_index=t)
        steps.append(np_(out))
    np.testing.assert_allclose(np.concatenate(steps, 1), full, rtol=1e-5, atol=1e-5)


def test_bad_input_raises_clear_errors():
    with pytest.raises(ValueError, match=r"not divisible by `num_heads`=3"):
        MultiHeadSelfAttention(num_heads=3)(np.zeros((1, 2, 8), "float32"))
    with pytest.raises(ValueError, match=r"`inputs` must have rank 3; received shape \(2, 8\)"):
        MultiHeadSelfAttention(num_heads=2)(np.zeros((2, 8), "float32"))
    with pytest.raises(ValueError, match="num_heads"):
        MultiHeadSelfAttention(num_heads=0)
    with pytest.raises(ValueError, match="dropout"):
        MultiHeadSelfAttention(num_heads=2, dropout=1.5)
    with pytest.raises(ValueError, match="cache_index"):
        layer = MultiHeadSelfAttention(num_heads=2)
        layer.build((1, 1, 8))
        layer(np.zeros((1, 1, 8), "float32"), cache=layer.initial_cache(1, 4))


@pytest.mark.parametrize("blocks", [None, 2])
def test_fast_path_equals_composed_path_with_masks(blocks, monkeypatch):
    # return_attention_scores=False uses scaled_dot_product_attention; True the composed ops.
    # With `blocks`, TensorFlow's blocked path runs on these short sequences.
    if blocks:
        force_blocked_attention(monkeypatch, blocks)
    layer = MultiHeadSelfAttention(num_heads=2)
    x = np.random.rand(2, 5, 8).astype("float32")
    mask = np.array([[0, 1, 1, 1, 0], [0, 0, 0, 0, 0]], bool)
    fast = layer(x, mask=mask, use_causal_mask=True)
    composed, _ = layer(x, mask=mask, use_causal_mask=True, return_attention_scores=True)
    np.testing.assert_allclose(np_(fast), np_(composed), rtol=1e-5, atol=1e-6)


def test_prompt_chunk_then_single_steps_equals_full_call():
    layer = MultiHeadSelfAttention(num_heads=2)
    x = np.random.rand(2, 6, 8).astype("float32")
    full = np_(layer(x, use_causal_mask=True))
    out, cache = layer(x[:, :4], cache=layer.initial_cache(2, 6), cache_index=0)
    steps = [np_(out)]
    for t in (4, 5):
        out, cache = layer(x[:, t : t + 1], cache=cache, cache_index=t)
        steps.append(np_(out))
    np.testing.assert_allclose(np.concatenate(steps, 1), full, rtol=1e-5, atol=1e-5)


def test_mask_of_the_wrong_length_and_unbuilt_cache_raise():
    layer = MultiHeadSelfAttention(num_heads=2)
    with pytest.raises(ValueError, match="must be built"):
        layer.initial_cache(1, 4)
    with pytest.raises(ValueError, match=r"time steps of `mask` and `inputs` must match"):
        layer(np.zeros((1, 3, 8), "float32"), mask=np.ones((1, 4), bool))

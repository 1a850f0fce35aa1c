import numpy as np
import pytest

from keras_adl.layers import MultiHeadCrossAttention
from tests.harness import force_blocked_attention, np_, run_layer_test


@pytest.mark.portable
def test_full_harness():
    data = {
        "query": np.random.rand(2, 3, 8).astype("float32"),
        "value": np.random.rand(2, 5, 6).astype("float32"),
    }
    run_layer_test(
        MultiHeadCrossAttention,
        {"num_heads": 2},
        data,
        [(2, 3, 8), (2, 2, 3, 5)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=6,
        full=True,
        no_gradient={1: ("/output/",)},  # the scores come before the output projection
    )


def test_memory_padding_gets_zero_weight_and_changes_nothing():
    layer = MultiHeadCrossAttention(num_heads=2)
    q = np.random.rand(2, 3, 8).astype("float32")
    v = np.random.rand(2, 5, 6).astype("float32")
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0]], bool)
    out, w = layer(q, v, value_mask=mask, return_attention_scores=True)
    v2 = v.copy()
    v2[~mask] = 100.0
    out2 = layer(q, v2, value_mask=mask)
    np.testing.assert_allclose(np_(out), np_(out2), atol=1e-5)
    w = np_(w)
    assert np.all(w.transpose(0, 1, 2, 3)[np.broadcast_to(~mask[:, None, None, :], w.shape)] == 0)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)


def test_precomputed_key_value_equals_fresh_projection():
    layer = MultiHeadCrossAttention(num_heads=2)
    q = np.random.rand(2, 3, 8).astype("float32")
    v = np.random.rand(2, 5, 6).astype("float32")
    fresh = layer(q, v)
    cached = layer(q, key_value=layer.precompute_key_value(v))
    np.testing.assert_allclose(np_(fresh), np_(cached), atol=1e-6)


def test_bad_input():
    layer = MultiHeadCrossAttention(num_heads=2)
    with pytest.raises(ValueError, match=r"batch sizes of `query` and `value` must match"):
        layer(np.zeros((2, 3, 8), "float32"), np.zeros((3, 5, 6), "float32"))
    with pytest.raises(ValueError, match=r"`value` must have rank 3; received shape \(2, 6\)"):
        layer(np.zeros((2, 3, 8), "float32"), np.zeros((2, 6), "float32"))


def test_value_mask_of_the_wrong_length_and_unbuilt_precompute_raise():
    layer = MultiHeadCrossAttention(num_heads=2)
    with pytest.raises(ValueError, match="must be built"):
        layer.precompute_key_value(np.zeros((2, 5, 6), "float32"))
    with pytest.raises(ValueError, match=r"time steps of `value_mask` and `value` must match"):
        layer(
            np.zeros((2, 3, 8), "float32"),
            np.zeros((2, 5, 6), "float32"),
            value_mask=np.ones((2, 4), bool),
        )


@pytest.mark.parametrize("blocks", [None, 2])
def test_fast_path_equals_composed_path_with_query_and_memory_masks(blocks, monkeypatch):
    # return_attention_scores=True takes the composed ops, False the attention op (with
    # `blocks`, TensorFlow's blocked path); padded queries give exactly the projection's bias.
    if blocks:
        force_blocked_attention(monkeypatch, blocks)
    layer = MultiHeadCrossAttention(num_heads=2)
    rng = np.random.default_rng(0)
    query, memory = rng.random((2, 5, 8), "float32"), rng.random((2, 6, 8), "float32")
    query_mask = np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0]], bool)
    value_mask = np.array([[1, 1, 1, 1, 0, 0], [0, 0, 0, 0, 0, 0]], bool)
    masks = {"query_mask": query_mask, "value_mask": value_mask}
    fast = np_(layer(query, memory, **masks))
    composed, _ = layer(query, memory, return_attention_scores=True, **masks)
    np.testing.assert_allclose(fast, np_(composed), rtol=1e-5, atol=1e-6)
    bias = np_(layer.output_dense.bias)
    np.testing.assert_allclose(fast[0, 3:], np.broadcast_to(bias, (2, 8)), atol=1e-7)
    np.testing.assert_allclose(fast[1], np.broadcast_to(bias, (5, 8)), atol=1e-7)

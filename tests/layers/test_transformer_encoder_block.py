import keras
import numpy as np
import pytest

from keras_adl.layers import TransformerEncoderBlock
from tests.harness import np_, run_layer_test


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        TransformerEncoderBlock,
        {"num_heads": 2, "intermediate_dim": 16, "dropout": 0.1, "activation": "gelu"},
        np.random.rand(2, 5, 8).astype("float32"),
        (2, 5, 8),
        expected_num_trainable_weights=12,
        full=True,
    )


def test_harness_norm_first():
    run_layer_test(
        TransformerEncoderBlock,
        {
            "num_heads": 2,
            "intermediate_dim": 16,
            "dropout": 0.1,
            "norm_first": True,
            "activation": "gelu",
        },
        np.random.rand(2, 5, 8).astype("float32"),
        (2, 5, 8),
        expected_num_trainable_weights=12,
    )


def test_post_norm_structure_matches_reference():
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    x = np.random.rand(2, 4, 8).astype("float32")
    out = np_(block(x))

    def layer_norm(h, norm):
        mean = h.mean(-1, keepdims=True)
        var = h.var(-1, keepdims=True)
        return (h - mean) / np.sqrt(var + 1e-5) * np_(norm.gamma) + np_(norm.beta)

    h = layer_norm(x + np_(block.self_attention(x)), block.self_attention_norm)
    inner = np.maximum(h @ np_(block.ffn_intermediate.kernel) + np_(block.ffn_intermediate.bias), 0)
    ffn = inner @ np_(block.ffn_output.kernel) + np_(block.ffn_output.bias)
    np.testing.assert_allclose(out, layer_norm(h + ffn, block.ffn_norm), rtol=1e-4, atol=1e-4)


def _masked_model(**kwargs):
    tokens = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(50, 8, mask_zero=True)(tokens)
    y = TransformerEncoderBlock(num_heads=2, intermediate_dim=16, **kwargs)(x)
    return keras.Model(tokens, y)


@pytest.mark.parametrize("norm_first", [False, True])
def test_padding_changes_no_unpadded_output(norm_first):
    model = _masked_model(norm_first=norm_first)
    a = np.array([[3, 4, 5, 0], [7, 8, 0, 0]])
    b = np.array([[3, 4, 5, 0, 0, 0, 0], [7, 8, 0, 0, 0, 0, 0]])
    ya, yb = np_(model(a)), np_(model(b))
    np.testing.assert_allclose(ya[0, :3], yb[0, :3], atol=1e-5)
    np.testing.assert_allclose(ya[1, :2], yb[1, :2], atol=1e-5)
    assert np.all(np.isfinite(np_(model(np.zeros((1, 4), "int32")))))


def test_causal_option():
    block = TransformerEncoderBlock(num_heads=2, intermediate_dim=16)
    x = np.random.rand(1, 5, 8).astype("float32")
    y = x.copy()
    y[:, 3:] += 1.0
    np.testing.assert_allclose(
        np_(block(x, use_causal_mask=True))[:, :3],
        np_(block(y, use_causal_mask=True))[:, :3],
        atol=1e-5,
    )


def test_mask_propagates():
    tokens = np.array([[3, 4, 0, 0], [5, 0, 0, 0]])
    x = keras.layers.Embedding(50, 8, mask_zero=True)(tokens)
    for causal in (False, True):  # the causal mask shapes attention, not the padding mask
        y = TransformerEncoderBlock(2, 16)(x, use_causal_mask=causal)
        np.testing.assert_array_equal(np_(y._keras_mask), tokens != 0)


def test_bad_input():
    with pytest.raises(
        ValueError, match=r"model dimension of `inputs` \(10\) is not divisible by `num_heads`=4"
    ):
        TransformerEncoderBlock(num_heads=4, intermediate_dim=8)(np.zeros((1, 3, 10), "float32"))
    with pytest.raises(ValueError, match=r"`inputs` must have rank 3; received shape \(3, 8\)"):
        TransformerEncoderBlock(num_heads=2, intermediate_dim=8)(np.zeros((3, 8), "float32"))
    with pytest.raises(ValueError, match="intermediate_dim"):
        TransformerEncoderBlock(num_heads=2, intermediate_dim=0)

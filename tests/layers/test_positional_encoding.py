import keras
import numpy as np
import pytest

from keras_adl.layers import PositionalEncoding
from tests.harness import run_layer_test


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        PositionalEncoding,
        {},
        np.random.rand(2, 5, 6).astype("float32"),
        (2, 5, 6),
        expected_num_trainable_weights=0,
        full=True,
    )


def test_harness_encoding_mode():
    run_layer_test(
        PositionalEncoding,
        {"mode": "encoding", "max_wavelength": 100},
        np.random.rand(2, 5, 7).astype("float32"),
        (2, 5, 7),
        expected_num_trainable_weights=0,
        inputs_without_gradient=("inputs",),
    )


def test_values_match_formula_interleaved():
    dim, length = 6, 4
    out = PositionalEncoding(mode="encoding")(np.zeros((1, length, dim), "float32"))
    out = keras.ops.convert_to_numpy(out)[0]
    for t in range(length):
        for k in range(dim // 2):
            angle = t / 10000 ** (2 * k / dim)
            assert out[t, 2 * k] == pytest.approx(np.sin(angle), abs=1e-6)
            assert out[t, 2 * k + 1] == pytest.approx(np.cos(angle), abs=1e-6)


def test_add_mode_adds_encoding():
    x = np.random.rand(3, 5, 8).astype("float32")
    added = PositionalEncoding()(x)
    enc = PositionalEncoding(mode="encoding")(x)
    np.testing.assert_allclose(added, x + keras.ops.convert_to_numpy(enc), atol=1e-6)


def test_start_index_equals_slice_of_longer_call():
    x = np.zeros((2, 12, 10), "float32")
    layer = PositionalEncoding()
    full = keras.ops.convert_to_numpy(layer(x))
    part = keras.ops.convert_to_numpy(layer(x[:, 5:8], start_index=5))
    np.testing.assert_allclose(part, full[:, 5:8], atol=1e-5)


def test_mask_passes_through_and_mixed_precision_dtype():
    tokens = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(10, 4, mask_zero=True)(tokens)
    y = PositionalEncoding()(x)
    assert y._keras_mask.shape[1] is None
    tokens = np.array([[3, 4, 0], [5, 0, 0]])
    eager = PositionalEncoding()(keras.layers.Embedding(10, 4, mask_zero=True)(tokens))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(eager._keras_mask), tokens != 0)
    mixed = PositionalEncoding(dtype="mixed_float16")(np.zeros((1, 3, 4), "float32"))
    assert keras.backend.standardize_dtype(mixed.dtype) == "float16"


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode"):
        PositionalEncoding(mode="concat")
    with pytest.raises(ValueError, match="max_wavelength"):
        PositionalEncoding(max_wavelength=1)
    with pytest.raises(ValueError, match=r"`inputs` must have rank 3; received shape \(2, 5\)"):
        PositionalEncoding()(np.zeros((2, 5), "float32"))

"""MaskedLMHead: the transform of BERT's masked-LM head at the masked positions only."""

import keras
import numpy as np
import pytest

from keras_adl.layers import MaskedLMHead
from tests.harness import np_, run_layer_test

SEQUENCE = np.random.default_rng(0).normal(size=(2, 6, 8)).astype("float32")
POSITIONS = np.array([[1, 4, 0], [5, 2, 2]], "int32")


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        MaskedLMHead,
        {},
        {"inputs": SEQUENCE, "mask_positions": POSITIONS},
        (2, 3, 8),
        expected_num_trainable_weights=4,
        full=True,
    )


def test_values_are_layer_norm_of_gelu_dense_at_the_masked_positions():
    head = MaskedLMHead()
    out = np_(head(SEQUENCE, POSITIONS))
    kernel, bias = np_(head.dense.kernel), np_(head.dense.bias)
    gathered = np.take_along_axis(SEQUENCE, POSITIONS[..., None], axis=1)
    h = np_(keras.activations.gelu(gathered @ kernel + bias))
    mean, var = h.mean(-1, keepdims=True), h.var(-1, keepdims=True)
    expected = (h - mean) / np.sqrt(var + 1e-12) * np_(head.norm.gamma) + np_(head.norm.beta)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    # Positions not asked for do not matter.
    other = SEQUENCE.copy()
    other[0, 3] += 10.0
    np.testing.assert_allclose(np_(head(other, POSITIONS))[0], out[0], rtol=1e-6)

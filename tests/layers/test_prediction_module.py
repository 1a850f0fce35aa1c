import keras
import numpy as np
import pytest

from keras_adl.layers import PredictionModule
from tests.harness import np_, run_layer_test

RNG = np.random.default_rng(0)
H = RNG.normal(size=(3, 5, 6)).astype("float32")
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool)


def test_harness_without_dropout():
    run_layer_test(
        PredictionModule,
        {"num_classes": 4, "hidden_units": 7},
        H,
        (3, 5, 4),
        expected_num_trainable_weights=4,
    )


@pytest.mark.portable
def test_full_harness_with_dropout_and_regularizer():
    run_layer_test(
        PredictionModule,
        {"num_classes": 4, "hidden_units": 7, "dropout": 0.1, "kernel_regularizer": "l2"},
        H,
        (3, 5, 4),
        expected_num_trainable_weights=4,
        full=True,
    )


@pytest.mark.portable
def test_values_against_the_formula():
    module = PredictionModule(num_classes=4, hidden_units=7, dropout=0.5)
    logits = np_(module(H))  # inference: no dropout
    w1, b1 = np_(module.hidden.kernel), np_(module.hidden.bias)
    w2, b2 = np_(module.output_projection.kernel), np_(module.output_projection.bias)
    expected = np.maximum(H @ w1 + b1, 0.0) @ w2 + b2  # W · ReLU(W' h + b') + b
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)
    dropped = np_(module(H, training=True))
    assert np.all(np.isfinite(dropped)) and np.any(dropped != logits)


@pytest.mark.portable
def test_mask_is_propagated():
    ids = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(10, 6, mask_zero=True)(ids)
    logits = PredictionModule(num_classes=3, hidden_units=5)(x)
    assert getattr(logits, "_keras_mask", None) is not None
    module = PredictionModule(num_classes=3, hidden_units=5)
    assert module.compute_mask(H, MASK) is MASK


def test_bad_arguments():
    with pytest.raises(ValueError, match="`num_classes` must be a positive integer; received 0"):
        PredictionModule(0, 4)
    with pytest.raises(ValueError, match="`hidden_units` must be a positive integer"):
        PredictionModule(3, -1)
    with pytest.raises(ValueError, match=r"`dropout` must be a float in \[0, 1\); received 1.0"):
        PredictionModule(3, 4, dropout=1.0)
    with pytest.raises(ValueError, match="`inputs` must have rank"):
        PredictionModule(3, 4)(np.ones((2, 3, 4, 5, 6), "float32"))

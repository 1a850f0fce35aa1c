"""Highway: y = T·H + (1 - T)·x per layer, the gate bias starts at transform_bias, the mask
passes through."""

import keras
import numpy as np
import pytest

from keras_adl.layers import Highway
from keras_adl.utils import keras_mask_of
from tests.harness import np_, run_layer_test

X = np.random.default_rng(0).normal(size=(2, 3, 6)).astype("float32")


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        Highway,
        {"num_layers": 2, "transform_bias": -0.5},
        X,
        (2, 3, 6),
        expected_num_trainable_weights=4,
        full=True,
    )


def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_values_follow_the_highway_formula(activation):
    layer = Highway(num_layers=2, activation=activation, transform_bias=-2.0)
    out = np_(layer(X))
    act = np.tanh if activation == "tanh" else (lambda z: np.maximum(z, 0.0))
    x = X
    for dense in layer.highway_layers:
        kernel, bias = np_(dense.kernel), np_(dense.bias)
        # The gate's bias starts at transform_bias, H's at zero.
        np.testing.assert_array_equal(bias, np.r_[np.zeros(6), np.full(6, -2.0)])
        w_h, w_t, b_h, b_t = kernel[:, :6], kernel[:, 6:], bias[:6], bias[6:]
        t = _sigmoid(x @ w_t + b_t)
        x = t * act(x @ w_h + b_h) + (1.0 - t) * x
    np.testing.assert_allclose(out, x, rtol=1e-5, atol=1e-5)


def test_a_very_negative_gate_bias_carries_the_input():
    layer = Highway(num_layers=3, transform_bias=-30.0)
    np.testing.assert_allclose(np_(layer(X)), X, atol=1e-6)


def test_mask_passes_through():
    ids = np.array([[3, 4, 0], [5, 0, 0]], "int32")
    x = keras.layers.Embedding(10, 6, mask_zero=True)(ids)
    y = Highway()(x)
    np.testing.assert_array_equal(np_(keras_mask_of(y)), ids != 0)
    inputs = keras.Input((None,), dtype="int32")
    model_out = Highway()(keras.layers.Embedding(10, 6, mask_zero=True)(inputs))
    assert keras_mask_of(model_out) is not None


def test_bad_arguments_are_named():
    with pytest.raises(
        ValueError, match=r"Highway: `num_layers` must be a positive integer; received 0"
    ):
        Highway(num_layers=0)
    with pytest.raises(
        TypeError, match=r"Highway: `transform_bias` must be a number; received 'x'"
    ):
        Highway(transform_bias="x")
    with pytest.raises(ValueError, match=r"Highway: `inputs` must have rank >= 2 and a known last"):
        Highway().build((None, None))

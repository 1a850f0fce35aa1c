"""ScalarMix: γ · Σ_j softmax(s)_j · h_j with AllenNLP's semantics, masked layer-norm statistics,
learned weights on the simplex."""

import keras
import numpy as np
import pytest

from keras_adl.layers import ScalarMix
from keras_adl.utils import keras_mask_of
from tests.harness import np_, run_layer_test

RNG = np.random.default_rng(0)
# [B, L, T, D], each layer with its own offset and scale so the statistics differ.
LAYERS = (
    RNG.normal(size=(2, 3, 4, 5)) * np.array([1.0, 3.0, 0.5])[None, :, None, None]
    + np.array([0.0, 2.0, -1.0])[None, :, None, None]
).astype("float32")
MASK = np.array([[True, True, True, False], [True, True, False, False]])


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        ScalarMix,
        {"num_layers": 3, "layer_norm": True, "initial_scalar_parameters": [0.1, -0.2, 0.3]},
        {"inputs": LAYERS, "mask": MASK},
        (2, 4, 5),
        expected_num_trainable_weights=2,
        full=True,
    )


def _softmax(s):
    e = np.exp(s - s.max())
    return e / e.sum()


def _allennlp_layer_norm(h, mask):
    """AllenNLP's `_do_layer_norm` on one layer ``[B, T, D]``: one mean and variance over the
    unmasked elements."""
    m = mask[..., None].astype("float64")
    n = m.sum() * h.shape[-1]
    mean = (h * m).sum() / n
    variance = (((h * m - mean) * m) ** 2).sum() / n
    return (h - mean) / np.sqrt(variance + 1e-12)


def _expected(layer, layers, mask=None):
    weights = _softmax(np_(layer.scalar_parameters).astype("float64"))
    gamma = float(np_(layer.gamma))
    if layer.layer_norm:
        mask = np.ones(layers.shape[:1] + layers.shape[2:3], bool) if mask is None else mask
        layers = np.stack([_allennlp_layer_norm(layers[:, j], mask) for j in range(3)], 1)
    return gamma * np.einsum("j,bjtd->btd", weights, layers)


def _set(layer, scalars, gamma):
    layer.scalar_parameters.assign(np.asarray(scalars, "float32"))
    layer.gamma.assign(gamma)


def test_values_without_layer_norm_and_the_list_form():
    layer = ScalarMix(3)
    out = np_(layer(LAYERS))
    np.testing.assert_allclose(out, LAYERS.mean(axis=1), rtol=1e-5, atol=1e-6)  # s = 0, γ = 1
    _set(layer, [0.5, -1.0, 2.0], 1.7)
    np.testing.assert_allclose(np_(layer(LAYERS)), _expected(layer, LAYERS), rtol=1e-5, atol=1e-5)
    as_list = [LAYERS[:, j] for j in range(3)]
    np.testing.assert_allclose(np_(layer(as_list)), _expected(layer, LAYERS), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("masked", [False, True])
def test_values_with_layer_norm(masked):
    layer = ScalarMix(3, layer_norm=True)
    layer(LAYERS)
    _set(layer, [0.5, -1.0, 2.0], 0.8)
    mask = MASK if masked else None
    out = np_(layer(LAYERS, mask=mask))
    np.testing.assert_allclose(out, _expected(layer, LAYERS, mask), rtol=1e-4, atol=1e-5)
    if masked:  # the statistics are not those over every position
        unmasked = np_(layer(LAYERS))
        assert not np.allclose(out[MASK], unmasked[MASK], atol=1e-3)
        # A 0/1 float mask means the same.
        np.testing.assert_allclose(np_(layer(LAYERS, mask=MASK.astype("float32"))), out, rtol=1e-6)


def test_masked_values_do_not_change_the_unmasked_outputs():
    layer = ScalarMix(3, layer_norm=True)
    out = np_(layer(LAYERS, mask=MASK))
    changed = LAYERS.copy()
    changed[:, :, ~MASK[0]] = 1e4  # batch row 0's padding
    changed[1, :, ~MASK[1]] = np.nan  # even non-finite padding
    got = np_(layer(changed, mask=MASK))
    np.testing.assert_allclose(got[MASK], out[MASK], rtol=1e-6)


def test_an_all_masked_batch_is_finite():
    layer = ScalarMix(3, layer_norm=True)
    out = np_(layer(LAYERS, mask=np.zeros_like(MASK)))
    assert np.all(np.isfinite(out))
    # Nothing to normalise with: the plain mix.
    np.testing.assert_allclose(out, LAYERS.mean(axis=1), rtol=1e-5, atol=1e-6)


def test_statistics_in_float32_under_mixed_float16():
    layer = ScalarMix(3, layer_norm=True, dtype="mixed_float16")
    big = LAYERS * 300.0  # squares overflow float16 (> 65504)
    out = layer(big, mask=MASK)
    assert keras.backend.standardize_dtype(out.dtype) == "float16"
    reference = ScalarMix(3, layer_norm=True)
    np.testing.assert_allclose(
        np_(out).astype("float32"), np_(reference(big, mask=MASK)), rtol=2e-2, atol=2e-2
    )


def test_weights_are_a_simplex_and_gamma_and_s_learn():
    inputs = keras.Input((3, None, 5))
    mix = ScalarMix(3, initial_scalar_parameters=[1.0, 0.0, -1.0])
    model = keras.Model(inputs, mix(inputs))
    weights = mix.mixing_weights()
    assert weights.shape == (3,) and np.all(weights >= 0) and np.isclose(weights.sum(), 1.0)
    np.testing.assert_allclose(weights, _softmax(np.array([1.0, 0.0, -1.0])), rtol=1e-6)
    s_before, gamma_before = np_(mix.scalar_parameters), np_(mix.gamma)
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    model.fit(LAYERS, np.zeros((2, 4, 5), "float32") + 3.0, epochs=1, batch_size=2, verbose=0)
    assert np.all(np_(mix.scalar_parameters) != s_before)
    assert np_(mix.gamma) != gamma_before
    weights = mix.mixing_weights()
    assert np.all(weights >= 0) and np.isclose(weights.sum(), 1.0)


def test_mask_is_propagated():
    layer = ScalarMix(3)
    out = layer(LAYERS, mask=MASK.astype("int32"))
    np.testing.assert_array_equal(np_(keras_mask_of(out)), MASK)
    # The list form takes the Keras mask of its first tensor.
    ids = np.array([[4, 5, 6, 0], [7, 8, 0, 0]], "int32")
    embedded = keras.layers.Embedding(10, 5, mask_zero=True)(ids)
    mixed = ScalarMix(2, layer_norm=True)([embedded, embedded * 2.0])
    np.testing.assert_array_equal(np_(keras_mask_of(mixed)), ids != 0)
    stacked = np.stack([np_(embedded), np_(embedded) * 2.0], axis=1)
    expected = ScalarMix(2, layer_norm=True)(stacked, mask=ids != 0)
    np.testing.assert_allclose(np_(mixed), np_(expected), rtol=1e-5, atol=1e-5)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"ScalarMix: `num_layers` must be a positive integer"):
        ScalarMix(0)
    with pytest.raises(TypeError, match=r"ScalarMix: `layer_norm` must be a bool; received 1"):
        ScalarMix(3, layer_norm=1)
    with pytest.raises(ValueError, match=r"`initial_scalar_parameters` must be None or a list"):
        ScalarMix(3, initial_scalar_parameters=[0.0, 1.0])
    with pytest.raises(ValueError, match=r"`inputs` holds 3 layers .* but num_layers = 2"):
        ScalarMix(2)(LAYERS)
    with pytest.raises(ValueError, match=r"`inputs` holds 2 layers .* but num_layers = 3"):
        ScalarMix(3)([LAYERS[:, 0], LAYERS[:, 1]])
    with pytest.raises(ValueError, match=r"ScalarMix: `inputs` must have rank 4"):
        ScalarMix(3)(LAYERS[0])
    with pytest.raises(ValueError, match=r"ScalarMix: `mask` must have rank 2"):
        ScalarMix(3)(LAYERS, mask=MASK[0])
    with pytest.raises(ValueError, match=r"must be built .* before `mixing_weights\(\)`"):
        ScalarMix(3).mixing_weights()

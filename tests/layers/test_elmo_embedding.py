"""ELMoEmbedding: a frozen biLM's layers mixed by a learned ScalarMix (ELMo, eq. 1)."""

import os
import tempfile

import keras
import numpy as np
import pytest

from keras_adl.layers import ELMoEmbedding
from keras_adl.models import elmo_bilm, elmo_embedder
from tests.harness import np_, run_layer_test

CHARACTERS = np.random.default_rng(0).integers(3, 259, size=(2, 5, 8)).astype("int32")
CHARACTERS[:, :, 0] = 1  # begin-of-word marker
CHARACTERS[1, 3:] = 0  # two padded words


def _embedder(seed=0):
    keras.utils.set_random_seed(seed)
    bilm = elmo_bilm(30, max_characters=8, filters=((1, 4), (2, 4)), projection_dim=4, units=6)
    return elmo_embedder(bilm)


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        ELMoEmbedding,
        {"embedder": _embedder(), "layer_norm": True},
        CHARACTERS,
        (2, 5, 8),
        expected_num_trainable_weights=2,
        full=True,
    )


def test_output_is_gamma_times_the_softmax_weighted_layers_zero_at_padding():
    embedder = _embedder()
    layer = ELMoEmbedding(embedder)
    layer(CHARACTERS)
    layer.scalar_mix.scalar_parameters.assign(np.array([0.3, -1.0, 0.7], "float32"))
    layer.scalar_mix.gamma.assign(1.7)
    layers = np_(embedder(CHARACTERS))
    s = np.array([0.3, -1.0, 0.7])
    weights = np.exp(s) / np.exp(s).sum()
    expected = 1.7 * np.einsum("j,bjtd->btd", weights, layers)
    expected[1, 3:] = 0.0
    out = layer(CHARACTERS)
    np.testing.assert_allclose(np_(out), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(np_(layer.compute_mask(CHARACTERS)), CHARACTERS[..., 0] != 0)
    top = ELMoEmbedding(embedder, mix="top")
    top(CHARACTERS)
    top.scalar_mix.gamma.assign(0.5)
    expected_top = 0.5 * layers[:, -1]
    expected_top[1, 3:] = 0.0
    np.testing.assert_allclose(np_(top(CHARACTERS)), expected_top, rtol=1e-5, atol=1e-6)


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_biLM_stays_frozen_through_fit_and_keras_round_trip():
    embedder = _embedder()
    before = [np_(w).copy() for w in embedder.weights]
    inputs = keras.Input((5, 8), dtype="int32")
    logits = keras.layers.Dense(3)(
        keras.layers.GlobalAveragePooling1D()(ELMoEmbedding(embedder)(inputs))
    )
    model = keras.Model(inputs, logits)
    assert len(model.trainable_weights) == 4  # s, γ and the dense layer
    model.compile("adam", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(CHARACTERS, np.array([0, 2]), epochs=2, verbose=0)
    for old, new in zip(before, embedder.weights):
        np.testing.assert_array_equal(old, np_(new))
    path = os.path.join(tempfile.mkdtemp(), "m.keras")
    model.save(path)
    loaded = keras.models.load_model(path)
    assert len(loaded.trainable_weights) == 4
    np.testing.assert_allclose(
        np_(loaded(CHARACTERS)), np_(model(CHARACTERS)), rtol=1e-6, atol=1e-6
    )
    tuned = ELMoEmbedding(_embedder(), trainable_embedder=True)
    tuned(CHARACTERS)
    assert len(tuned.trainable_weights) > 20


def test_bad_arguments_name_what_was_expected():
    with pytest.raises(TypeError, match="`embedder` must be a keras.Model"):
        ELMoEmbedding("bilm")
    bilm = elmo_bilm(30, max_characters=8, filters=((1, 4),), projection_dim=4, units=6)
    with pytest.raises(TypeError, match="`embedder` must be a keras.Model"):
        ELMoEmbedding(bilm)  # the biLM itself (two outputs), not its embedder
    with pytest.raises(ValueError, match="`mix` must be one of"):
        ELMoEmbedding(_embedder(), mix="bottom")
    with pytest.raises(ValueError, match="`inputs` must have rank 3"):
        ELMoEmbedding(_embedder())(CHARACTERS[0])

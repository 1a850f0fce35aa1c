import json

import keras
import numpy as np
import pytest

from keras_adl.layers import DoublyStochasticRegularization
from keras_adl.ops import doubly_stochastic_penalty
from tests.harness import np_, run_layer_test

# 2 captions, 3 steps, 4 locations; the second caption has 2 real steps (its third is padding).
ALPHA = np.array(
    [
        [[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.0, 0.0, 0.5, 0.5]],
        [[0.25, 0.25, 0.25, 0.25], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0]],
    ],
    "float32",
)
MASK = np.array([[True, True, True], [True, True, False]])


def _reference(alpha, mask):
    coverage = (alpha * mask[..., None]).sum(1)  # Σ_t m_t α_ti
    return ((1.0 - coverage) ** 2).sum(-1)  # Σ_i (1 − ·)²


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        DoublyStochasticRegularization,
        {"strength": 0.5},
        {"attention": ALPHA, "mask": MASK},
        ALPHA.shape,
        expected_num_trainable_weights=0,
        full=True,
    )


def test_penalty_against_a_hand_built_alpha_with_a_caption_mask():
    # By hand: caption 0 covers (0.8, 0.8, 0.7, 0.7) → 0.04 + 0.04 + 0.09 + 0.09 = 0.26;
    # caption 1 (steps 0, 1 only) covers (1.25, 0.25, 0.25, 0.25) → 0.0625 + 3 · 0.5625 = 1.75.
    penalty = np_(doubly_stochastic_penalty(ALPHA, MASK))
    np.testing.assert_allclose(penalty, [0.26, 1.75], rtol=1e-5)
    np.testing.assert_allclose(penalty, _reference(ALPHA, MASK), rtol=1e-6)
    # Without a mask, the padded step counts: caption 1 covers (1.25, 0.25, 0.25, 1.25).
    np.testing.assert_allclose(
        np_(doubly_stochastic_penalty(ALPHA)), [0.26, 0.0625 * 2 + 0.5625 * 2], rtol=1e-5
    )
    layer = DoublyStochasticRegularization(strength=2.0)
    out = layer(ALPHA, mask=MASK)
    np.testing.assert_array_equal(np_(out), ALPHA)  # the identity
    assert len(layer.losses) == 1
    assert float(layer.losses[0]) == pytest.approx(2.0 * (0.26 + 1.75) / 2, rel=1e-5)


def test_padded_steps_do_not_count():
    changed = ALPHA.copy()
    changed[1, 2] = [0.5, 0.5, 0.0, 0.0]  # the padded step of caption 1
    np.testing.assert_allclose(
        np_(doubly_stochastic_penalty(changed, MASK)), np_(doubly_stochastic_penalty(ALPHA, MASK))
    )
    # All steps masked: every location is uncovered, Σ_i 1² = L (finite, no NaN).
    none = np.zeros_like(MASK)
    np.testing.assert_allclose(np_(doubly_stochastic_penalty(ALPHA, none)), [4.0, 4.0])


def test_float16_attention_gives_a_float32_penalty():
    penalty = doubly_stochastic_penalty(keras.ops.cast(ALPHA, "float16"), MASK)
    assert keras.backend.standardize_dtype(penalty.dtype) == "float32"
    np.testing.assert_allclose(np_(penalty), [0.26, 1.75], rtol=1e-3)
    keras.config.set_dtype_policy("mixed_float16")
    layer = DoublyStochasticRegularization()
    assert keras.backend.standardize_dtype(layer(ALPHA, mask=MASK).dtype) == "float16"
    assert keras.backend.standardize_dtype(layer.losses[0].dtype) == "float32"


def test_strength_zero_adds_nothing():
    layer = DoublyStochasticRegularization(strength=0.0)
    np.testing.assert_array_equal(np_(layer(ALPHA, mask=MASK)), ALPHA)
    assert layer.losses == []


def _model(strength):
    attention = keras.Input((3, 4), name="attention_in")
    mask = keras.Input((3,), dtype="bool", name="mask")
    regularized = DoublyStochasticRegularization(strength, name="regularizer")(attention, mask=mask)
    # The caption mask propagates to the readout [B, 3, 1] (and so to the mse).
    output = keras.layers.Dense(1, name="readout")(regularized)
    return keras.Model([attention, mask], output)


@pytest.mark.parametrize("jit_compile", [False, True])
def test_the_penalty_enters_the_training_loss_of_a_functional_model(jit_compile):
    # Keras 3.15 collects add_loss from a layer inside a functional model into model.losses
    # and adds it to the compiled loss: with the same weights, evaluate's loss with λ = 3
    # exceeds the loss with λ = 0 (the masked mse alone) by exactly λ·mean(P).
    targets = np.zeros((2, 3, 1), "float32")
    results = {}
    for strength in (0.0, 3.0):
        model = _model(strength)
        model.get_layer("readout").set_weights([np.full((4, 1), 0.1, "float32"), np.ones(1)])
        model.compile(loss="mse", jit_compile=jit_compile)
        results[strength] = model.evaluate([ALPHA, MASK], targets, batch_size=2, verbose=0)
        model([ALPHA, MASK])
        if strength == 0:
            assert model.losses == []
            assert results[strength] == pytest.approx(1.1**2, rel=1e-5)  # every output is 1.1
        else:
            assert float(model.losses[0]) == pytest.approx(3.0 * 1.005, rel=1e-5)
    assert results[3.0] - results[0.0] == pytest.approx(3.0 * (0.26 + 1.75) / 2, rel=1e-5)
    # fit includes the penalty in the loss it reports.
    model = _model(3.0)
    model.compile(loss="mse", jit_compile=jit_compile)
    history = model.fit([ALPHA, MASK], targets, batch_size=2, epochs=1, verbose=0)
    assert history.history["loss"][0] > 3.0 * 1.005


def test_config_round_trip_and_mask_propagation():
    layer = DoublyStochasticRegularization(strength=0.25, name="dsr")
    config = layer.get_config()
    assert config["strength"] == 0.25
    restored = keras.saving.deserialize_keras_object(
        json.loads(json.dumps(keras.saving.serialize_keras_object(layer)))
    )
    assert isinstance(restored, DoublyStochasticRegularization)
    assert restored.get_config() == config
    assert np_(layer.compute_mask(ALPHA, MASK)).tolist() == MASK.tolist()


def test_bad_input():
    with pytest.raises(ValueError, match="`strength` must be a non-negative float; received -1"):
        DoublyStochasticRegularization(strength=-1)
    with pytest.raises(ValueError, match="`strength`.*received True"):
        DoublyStochasticRegularization(strength=True)
    with pytest.raises(ValueError, match="`attention` must have rank 3; received shape \\(3, 4\\)"):
        doubly_stochastic_penalty(ALPHA[0])
    with pytest.raises(ValueError, match="`mask` must have rank 2"):
        doubly_stochastic_penalty(ALPHA, MASK[0])
    with pytest.raises(ValueError, match="The step counts of `attention` and `mask` must match"):
        doubly_stochastic_penalty(ALPHA, MASK[:, :2])
    with pytest.raises(ValueError, match="`attention` must have rank 3"):
        DoublyStochasticRegularization()(ALPHA[0])

import math

import keras
import numpy as np
import pytest

from keras_adl.metrics import (
    BitErrorsPerSequence,
    BitsPerSequence,
    SequenceBitCrossEntropy,
)

# ------------------------------------------------------------------ memory losses and metrics


def test_bit_costs_on_a_hand_checked_batch():
    # Logits 0 are p = 1/2 for every bit: ln 2 nats (1 bit) each, and read as 0.
    y = np.zeros((2, 3, 4), "float32")
    y[0, 0] = [1, 1, 0, 0]
    y[0, 2] = [1, 1, 1, 1]  # an unweighted step: never counted
    y[1, 0] = [0, 0, 0, 1]
    w = np.array([[1, 1, 0], [1, 0, 0]], "float32")  # 2 + 1 answer steps of 4 bits
    logits = np.zeros((2, 3, 4), "float32")
    loss = SequenceBitCrossEntropy()(y, logits, sample_weight=w)
    assert float(loss) == pytest.approx((8 + 4) / 2 * math.log(2), rel=1e-6)  # nats/sequence
    bits = BitsPerSequence()
    bits.update_state(y, logits, w)
    assert float(bits.result()) == pytest.approx(6.0, rel=1e-6)  # (8 + 4) bits / 2
    errors = BitErrorsPerSequence()
    errors.update_state(y, logits, w)
    assert float(errors.result()) == 1.5  # the 1s on weighted steps: (2 + 1) / 2


def test_bit_metrics_accumulate_over_batches_and_reset():
    y = np.ones((1, 2, 3), "float32")
    errors = BitErrorsPerSequence()
    errors.update_state(y, -np.ones((1, 2, 3), "float32"))  # 6 wrong bits, 1 sequence
    errors.update_state(np.ones((2, 2, 3), "float32"), np.ones((2, 2, 3), "float32"))  # 0
    assert float(errors.result()) == 2.0  # 6 wrong bits over 3 sequences
    errors.reset_state()
    assert float(errors.result()) == 0.0
    errors.update_state(y, np.array([[[1, -1, 1], [-1, -1, 1]]], "float32"))
    assert float(errors.result()) == 3.0


def test_bit_cross_entropy_is_stable_for_large_logits():
    y = np.array([[[1, 0]]], "float32")
    right = np.array([[[100, -100]]], "float32")
    assert float(SequenceBitCrossEntropy()(y, right)) == pytest.approx(0.0, abs=1e-30)
    wrong = -right  # CE = |logit| for a confident wrong bit: 100 nats each
    assert float(SequenceBitCrossEntropy()(y, wrong)) == pytest.approx(200.0, rel=1e-6)
    bits = BitsPerSequence()
    bits.update_state(y, wrong)
    assert float(bits.result()) == pytest.approx(200.0 / math.log(2), rel=1e-6)


def test_loss_and_metrics_against_formulas():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, size=(3, 5, 4)).astype("float32")
    logits = rng.normal(size=(3, 5, 4)).astype("float32")
    w = (rng.uniform(size=(3, 5)) > 0.4).astype("float32")
    p = 1 / (1 + np.exp(-logits))
    ce = -(y * np.log(p) + (1 - y) * np.log(1 - p))  # nats per bit
    per_sequence = (ce.sum(-1) * w).sum(-1)
    loss = SequenceBitCrossEntropy()(y, logits, sample_weight=w)
    np.testing.assert_allclose(float(loss), per_sequence.mean(), rtol=1e-5)
    bits = BitsPerSequence()
    bits.update_state(y, logits, w)
    np.testing.assert_allclose(float(bits.result()), per_sequence.mean() / math.log(2), rtol=1e-5)
    errors = BitErrorsPerSequence()
    errors.update_state(y, logits, w)
    wrong = (((logits > 0) != (y > 0.5)).sum(-1) * w).sum(-1)
    np.testing.assert_allclose(float(errors.result()), wrong.mean(), rtol=1e-6)
    # One weight per sequence ([B]) counts every step of the weighted sequences.
    per_sequence_weights = BitErrorsPerSequence()
    per_sequence_weights.update_state(y, logits, np.array([1.0, 0.0, 1.0], "float32"))
    all_wrong = ((logits > 0) != (y > 0.5)).sum((1, 2))
    np.testing.assert_allclose(
        float(per_sequence_weights.result()), (all_wrong[0] + all_wrong[2]) / 3, rtol=1e-6
    )
    # Unweighted steps do not count: changing them changes nothing.
    logits2 = np.where(w[..., None] == 0, -logits * 5, logits)
    np.testing.assert_allclose(
        float(SequenceBitCrossEntropy()(y, logits2, sample_weight=w)), float(loss), rtol=1e-6
    )


def test_bit_metrics_config_round_trip():
    for cls in (SequenceBitCrossEntropy, BitErrorsPerSequence, BitsPerSequence):
        obj = cls(name="custom")
        clone = cls.from_config(obj.get_config())
        assert type(clone) is cls and clone.name == "custom"
        again = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(obj))
        assert type(again) is cls

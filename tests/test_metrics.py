import math

import keras
import numpy as np
import pytest

from keras_adl.conventions import PAD
from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE, digit_strips
from keras_adl.metrics import (
    BitErrorsPerSequence,
    BitsPerSequence,
    SequenceBitCrossEntropy,
    alignment_hit_rate,
    exact_match,
    glimpses_on_digit,
)
from tests.data.images import distinct_images

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


# ---------------------------------------------------------------------------- glimpses on digit


def test_glimpses_on_digit_hand_checked():
    # 16-pixel digits on a 32-pixel canvas: a glimpse is on the digit when |l - centre| < 0.5
    # on both axes (units of half the canvas). Digit 0 at (0, 0): centre (-0.5, -0.5);
    # digit 1 at (16, 8): centre (0.5, 0.0). The first location of each row is never counted.
    locations = np.array(
        [
            [
                [-0.5, -0.5],
                [-0.5, -0.5],
                [-0.1, -0.5],
                [0.0, -0.5],
                [0.5, 0.5],
            ],  # hit hit miss miss
            [[0.5, 0.0], [0.5, 0.0], [0.9, 0.4], [0.5, -0.6], [0.2, 0.3]],  # hit hit miss hit
        ],
        "float32",
    )
    offsets = np.array([[0, 0], [16, 8]])
    assert glimpses_on_digit(locations, offsets, 16, 32) == 5 / 8
    moved = locations.copy()
    moved[:, 0] = 0.99  # the fixed first glimpse is not the policy's choice: not counted
    assert glimpses_on_digit(moved, offsets, 16, 32) == 5 / 8
    far = np.full((2, 5, 2), 0.99, "float32")
    assert glimpses_on_digit(far, offsets, 16, 32) == 0.0


# --------------------------------------------------------------------------- digit-strip figures


def _attention_on_columns(columns, grid_width, grid_height=2, rows=None):
    """One-hot attention [B, S, grid_height * grid_width] on the given grid columns."""
    columns = np.asarray(columns)
    rows = np.ones_like(columns) if rows is None else rows  # second row: tests the modulo
    attention = np.zeros(columns.shape + (grid_height * grid_width,), "float32")
    np.put_along_axis(attention, (rows * grid_width + columns)[..., None], 1.0, axis=-1)
    return attention


def test_alignment_hit_rate():
    images, labels = distinct_images(20, 5, 8)
    _, captions, spans = digit_strips(images, labels, 32, num_digits=(1, 3), rng=0)
    grid_width, strip_width = 6, 24  # two grid columns per digit of 8 pixels
    lengths = (captions != PAD).sum(1)
    steps = np.arange(4)[None, :].repeat(32, 0)  # T + 1 = 4 steps, the last one is END
    on_digit = np.minimum(2 * steps + 1, grid_width - 1)
    wrong = (on_digit + 2) % grid_width  # the next digit's column (wraps to the first)
    assert (
        alignment_hit_rate(
            _attention_on_columns(on_digit, grid_width), spans, captions, grid_width, strip_width
        )
        == 1.0
    )
    assert (
        alignment_hit_rate(
            _attention_on_columns(wrong, grid_width), spans, captions, grid_width, strip_width
        )
        == 0.0
    )
    # Padding steps and the END step may look anywhere.
    real = steps < lengths[:, None]
    mixed = np.where(real, on_digit, wrong)
    assert (
        alignment_hit_rate(
            _attention_on_columns(mixed, grid_width), spans, captions, grid_width, strip_width
        )
        == 1.0
    )
    # First digit right, the others wrong: the rate counts real steps only.
    first_only = np.where(steps == 0, on_digit, wrong)
    expected = len(captions) / lengths.sum()
    assert alignment_hit_rate(
        _attention_on_columns(first_only, grid_width), spans, captions, grid_width, strip_width
    ) == pytest.approx(expected)


def test_alignment_hit_rate_bad_arguments():
    captions, spans = np.array([[4, 5]]), np.array([[[0, 4], [4, 8]]])
    with pytest.raises(ValueError, match="S ≥ 2"):
        alignment_hit_rate(np.ones((1, 1, 4)), spans, captions, 2, 8)
    with pytest.raises(ValueError, match="whole number of rows of `grid_width`=3"):
        alignment_hit_rate(np.ones((1, 3, 4)), spans, captions, 3, 8)
    with pytest.raises(ValueError, match="`spans` must have shape \\(1, 2, 2\\)"):
        alignment_hit_rate(np.ones((1, 3, 4)), spans[:, :1], captions, 2, 8)
    with pytest.raises(ValueError, match="holds no digit"):
        alignment_hit_rate(np.ones((1, 3, 4)), spans, np.zeros((1, 2), int), 2, 8)


def test_exact_match():
    targets = np.array([[5, 6, 2, 0], [4, 2, 0, 0], [7, 7, 7, 2]])
    assert exact_match(targets, targets) == 1.0
    tokens = np.array([[5, 6, 2, 9], [4, 2, 1, 1], [7, 7, 7, 3]])  # after END: ignored
    assert exact_match(tokens, targets) == pytest.approx(2 / 3)
    assert exact_match(np.concatenate([targets, np.full((3, 2), 8)], 1), targets) == 1.0
    assert exact_match(targets[:, :1], targets) == 0.0  # missing steps count as PAD
    assert exact_match(targets[:, :2], targets) == pytest.approx(1 / 3)  # [4, END] is complete
    scores = np.eye(13)[targets]
    assert exact_match(scores, targets) == 1.0
    assert exact_match(np.eye(13)[tokens], targets) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="B = 3"):
        exact_match(tokens[:2], targets)


def test_alignment_hit_rate_hand_checked():
    # A 2 x 4 grid over an 8-pixel strip: grid column c is centred on pixel 2c + 1.
    captions = np.array([[5, 6, PAD], [7, PAD, PAD]])
    spans = np.array([[[0, 4], [4, 8], [0, 0]], [[0, 4], [0, 0], [0, 0]]])
    attention = np.zeros((2, 3, 8), "float32")
    attention[0, 0, 5] = 1.0  # column 1 (pixel 3) on digit 0 [0, 4): hit
    attention[0, 1, 2] = 1.0  # column 2 (pixel 5) on digit 1 [4, 8): hit
    attention[0, 2, 0] = 1.0  # a padding step: ignored
    attention[1, 0, 7] = 1.0  # column 3 (pixel 7), not on digit 0: miss
    assert alignment_hit_rate(attention, spans, captions, 4, 8) == pytest.approx(2 / 3)
    attention[1, 0] = np.roll(attention[1, 0], -3)  # region 4: column 0 (pixel 1): a hit
    assert alignment_hit_rate(attention, spans, captions, 4, 8) == 1.0


def test_exact_match_one_hot_scores_over_the_caption_vocabulary():
    targets = np.array([[5, 2, 0], [6, 7, 2]])
    scores = np.eye(CAPTION_VOCAB_SIZE)[np.array([[5, 2, 9], [6, 8, 2]])]
    assert exact_match(scores, targets) == 0.5

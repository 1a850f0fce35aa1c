"""The vision family's scorers: where the RAM's glimpses land, and the digit strips' exact
match and attention alignment."""

import numpy as np
import pytest

from keras_adl.conventions import PAD
from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE, digit_strips
from keras_adl.recipes.vision.evaluate import (
    alignment_hit_rate,
    exact_match,
    glimpses_on_digit,
)
from tests.data.images import distinct_images

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

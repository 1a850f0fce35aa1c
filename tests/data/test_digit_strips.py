import numpy as np
import pytest

from keras_adl.conventions import END, PAD, START
from keras_adl.data.digit_strips import (
    CAPTION_VOCAB_SIZE,
    DIGIT_OFFSET,
    DigitStrips,
    caption_arrays,
    digit_strips,
)
from tests.data.images import distinct_images


def test_caption_vocabulary_follows_the_conventions():
    assert (DIGIT_OFFSET, CAPTION_VOCAB_SIZE) == (3, 13)
    assert DIGIT_OFFSET == END + 1  # digit tokens come right after the specials they use


def test_digit_strips_columns_are_the_captioned_digits():
    images, labels = distinct_images(20, 5, 4)
    strips, captions, spans = digit_strips(images, labels, 64, num_digits=3, rng=0)
    assert strips.shape == (64, 5, 12, 1) and strips.dtype == np.float32
    assert captions.shape == (64, 3) and captions.dtype == np.int32
    assert spans.shape == (64, 3, 2) and spans.dtype == np.int32
    for b in range(64):
        for t in range(3):
            start, end = spans[b, t]
            assert (start, end) == (4 * t, 4 * t + 4)
            block = strips[b, :, start:end, 0]
            match = np.flatnonzero((images == block).all(axis=(1, 2)))
            assert len(match) == 1 and labels[match[0]] + DIGIT_OFFSET == captions[b, t]


def test_digit_strips_variable_length_padding(sk_digits):
    images, labels = sk_digits
    strips, captions, spans = digit_strips(images, labels, 300, num_digits=(1, 4), rng=3)
    assert strips.shape == (300, 16, 64, 1)
    lengths = (captions != PAD).sum(axis=1)
    assert set(lengths.tolist()) == {1, 2, 3, 4}
    # 300 strips of up to 4 digits draw every class; no token outside the caption vocabulary.
    np.testing.assert_array_equal(
        np.unique(captions), [PAD] + list(range(DIGIT_OFFSET, CAPTION_VOCAB_SIZE))
    )
    for b in range(300):
        n = lengths[b]
        assert (captions[b, :n] >= DIGIT_OFFSET).all() and (captions[b, n:] == PAD).all()
        assert not strips[b, :, 16 * n :].any() and (spans[b, n:] == 0).all()
        for t in range(n):
            block = strips[b, :, 16 * t : 16 * t + 16, 0]
            same = (images == block).all(axis=(1, 2))
            assert same.any() and (labels[same] + DIGIT_OFFSET == captions[b, t]).all()
    np.testing.assert_array_equal(
        digit_strips(images, labels, 5, (1, 4), rng=3)[0],
        digit_strips(images, labels, 5, (1, 4), rng=3)[0],
    )


@pytest.mark.parametrize(
    "num_digits, message",
    [
        (0, "`num_digits` must be a positive integer"),
        ((3, 2), "min ≤ max"),
        ((1, 2, 3), "`num_digits`"),
    ],
)
def test_digit_strips_bad_num_digits(num_digits, message):
    with pytest.raises(ValueError, match=message):
        digit_strips(np.zeros((2, 3, 3)), [0, 1], 4, num_digits)


def test_caption_arrays():
    decoder_input, targets = caption_arrays(np.array([[5, 7, 9], [4, 0, 0], [6, 3, 0]]))
    np.testing.assert_array_equal(decoder_input, [[1, 5, 7, 9], [1, 4, 0, 0], [1, 6, 3, 0]])
    np.testing.assert_array_equal(targets, [[5, 7, 9, 2], [4, 2, 0, 0], [6, 3, 2, 0]])
    assert decoder_input.dtype == np.int32 and targets.dtype == np.int32
    assert (START, END) == (1, 2)
    with pytest.raises(ValueError, match="padded at the end only"):
        caption_arrays(np.array([[5, 0, 7]]))
    with pytest.raises(TypeError, match="`captions` must be integer tokens"):
        caption_arrays(np.array([[5.0, 0.0]]))


def test_digit_strips_dataset():
    images, labels = distinct_images(50, 5, 4)
    data = DigitStrips(images, labels, batch_size=16, num_digits=(2, 3), seed=1)
    assert len(data) == 3
    inputs, targets = data[0]
    assert set(inputs) == {"image", "decoder_input"}
    assert inputs["image"].shape == (16, 5, 12, 1) and inputs["image"].dtype == np.float32
    assert inputs["decoder_input"].shape == (16, 4) and targets.shape == (16, 4)
    expected = caption_arrays(inputs["decoder_input"][:, 1:])
    np.testing.assert_array_equal(expected[0], inputs["decoder_input"])
    np.testing.assert_array_equal(expected[1], targets)
    np.testing.assert_array_equal(DigitStrips(images, labels, 16, (2, 3), seed=1)[0][1], targets)
    assert not np.array_equal(data[1][1], targets)
    data.on_epoch_end()
    assert not np.array_equal(data[0][0]["image"], inputs["image"])
    for i in range(3):
        assert data[i][0]["image"].shape == (16, 5, 12, 1)


def test_digit_strips_dataset_without_teacher_forcing_gives_the_same_strips():
    images, labels = distinct_images(50, 5, 4)
    forced = DigitStrips(images, labels, batch_size=16, num_digits=(2, 3), seed=1)
    plain = DigitStrips(images, labels, 16, (2, 3), seed=1, teacher_forcing=False)
    strips, targets = plain[1]
    np.testing.assert_array_equal(strips, forced[1][0]["image"])
    np.testing.assert_array_equal(targets, forced[1][1])

import keras
import numpy as np
import pytest

from keras_adl.data.translated_digits import TranslatedDigits, translate_digits
from tests.data.images import distinct_images


def test_translate_digits_places_the_digit_inside_the_canvas(sk_digits):
    images, labels = sk_digits[0][:300], sk_digits[1][:300]
    x, y, offsets = translate_digits(images, labels, canvas_size=32, rng=0)
    assert x.shape == (300, 32, 32, 1) and x.dtype == np.float32
    assert y.dtype == np.int32 and offsets.shape == (300, 2) and offsets.dtype == np.int32
    np.testing.assert_array_equal(y, labels)
    assert offsets.min() == 0 and offsets.max() == 16  # the whole range of positions is used
    assert len(np.unique(offsets, axis=0)) > 150  # ~187 of the 17 x 17 positions expected
    for b in range(300):
        top, left = offsets[b]
        np.testing.assert_array_equal(x[b, top : top + 16, left : left + 16, 0], images[b])
        outside = x[b, :, :, 0].copy()
        outside[top : top + 16, left : left + 16] = 0
        assert not outside.any()


def test_translate_digits_is_seeded():
    images, labels = distinct_images()
    a, b, c = (translate_digits(images, labels, 12, 2, 2, rng=seed) for seed in (3, 3, 4))
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    generator = np.random.default_rng(3)
    from_generator = translate_digits(images, labels, 12, 2, 2, rng=generator)
    np.testing.assert_array_equal(from_generator[0], a[0])


def test_clutter_comes_from_other_images_and_stays_in_range(sk_digits):
    images, labels = sk_digits[0][:200], sk_digits[1][:200]
    x, _, offsets = translate_digits(images, labels, 40, num_clutter=6, clutter_size=8, rng=1)
    assert x.min() >= 0.0 and x.max() <= 1.0
    outside_counts, brightened = [], []
    for b in range(200):
        top, left = offsets[b]
        crop = x[b, top : top + 16, left : left + 16, 0]
        assert (crop >= images[b]).all()  # the digit is intact (pieces combine by maximum)
        brightened.append((crop > images[b]).any())  # clutter over the digit is not erased
        outside = x[b, :, :, 0].copy()
        outside[top : top + 16, left : left + 16] = 0
        outside_counts.append(np.count_nonzero(outside))
    assert np.mean(np.array(outside_counts) > 0) > 0.9 and np.mean(brightened) > 0.5
    # Constant images: every clutter pixel outside the digit carries another image's value.
    values = np.linspace(0.1, 0.9, 9, dtype="float32")
    flat = np.broadcast_to(values[:, None, None], (9, 4, 4))
    x, _, offsets = translate_digits(flat, np.arange(9), 24, num_clutter=5, clutter_size=3, rng=2)
    for b in range(9):
        top, left = offsets[b]
        outside = x[b, :, :, 0].copy()
        outside[top : top + 4, left : left + 4] = 0
        assert outside.any() and not np.isclose(outside, values[b]).any()
        assert np.isin(outside[outside > 0], values).all()


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(canvas_size=4), ValueError, "must fit in the canvas"),
        (dict(num_clutter=1, clutter_size=6), ValueError, "`clutter_size` must be at most"),
        (dict(num_clutter=-1), ValueError, "`num_clutter` must be a non-negative integer"),
        (dict(labels=np.zeros(3, int)), ValueError, "`labels` must have shape \\[N\\] with N = 2"),
        (dict(labels=np.zeros(2)), TypeError, "`labels` must be integers"),
        (dict(images=np.zeros((2, 5))), ValueError, "`images` must have shape"),
    ],
)
def test_translate_digits_bad_arguments(kwargs, error, message):
    arguments = dict(images=np.zeros((2, 5, 5)), labels=np.zeros(2, int), canvas_size=8)
    arguments.update(kwargs)
    with pytest.raises(error, match=message):
        translate_digits(**arguments)


def test_clutter_needs_another_image():
    with pytest.raises(ValueError, match="at least 2 images"):
        translate_digits(np.zeros((1, 5, 5)), [0], 8, num_clutter=1, clutter_size=2)
    with pytest.raises(ValueError, match="at least 2 images"):
        TranslatedDigits(np.zeros((1, 5, 5)), [0], 1, canvas_size=8, num_clutter=1, clutter_size=2)


def test_translated_digits_dataset_epochs_and_determinism():
    images, labels = distinct_images(100, 6, 6)
    data = TranslatedDigits(
        images,
        labels,
        batch_size=32,
        canvas_size=12,
        num_clutter=1,
        clutter_size=3,
        seed=5,
        workers=2,
    )
    assert len(data) == 3 and data.workers == 2
    batches = [data[i] for i in range(3)]
    for x, y in batches:
        assert x.shape == (32, 12, 12, 1) and x.dtype == np.float32
        assert y.shape == (32,) and y.dtype == np.int32
    np.testing.assert_array_equal(data[1][0], batches[1][0])  # asked again: the same batch
    again = TranslatedDigits(images, labels, 32, 12, 1, 3, seed=5)
    np.testing.assert_array_equal(again[2][0], batches[2][0])
    np.testing.assert_array_equal(again[2][1], batches[2][1])
    other_seed = TranslatedDigits(images, labels, 32, 12, 1, 3, seed=6)
    assert not np.array_equal(other_seed[0][0], batches[0][0])
    # One epoch's batches hold distinct examples (a shuffled order, the remainder dropped).
    seen = np.concatenate([y for _, y in batches])
    assert len(seen) == 96
    data.on_epoch_end()
    again.on_epoch_end()
    assert data.epoch == 1
    np.testing.assert_array_equal(data[0][0], again[0][0])
    assert not np.array_equal(data[0][0], batches[0][0])
    with pytest.raises(IndexError):
        data[3]


def test_translated_digits_shuffle_and_placements():
    images, labels = distinct_images(40, 4, 4)
    labels = np.arange(40)  # identify the examples of a batch by their label
    fixed = TranslatedDigits(images, labels, batch_size=10, canvas_size=10, shuffle=False)
    shuffled = TranslatedDigits(images, labels, batch_size=10, canvas_size=10, shuffle=True)
    first_fixed, first_shuffled = fixed[0], shuffled[0]
    np.testing.assert_array_equal(first_fixed[1], np.arange(10))
    assert not np.array_equal(first_shuffled[1], np.arange(10))
    fixed.on_epoch_end()
    shuffled.on_epoch_end()
    # Same examples in a new epoch, placed elsewhere.
    np.testing.assert_array_equal(fixed[0][1], np.arange(10))
    assert not np.array_equal(fixed[0][0], first_fixed[0])
    assert not np.array_equal(shuffled[0][1], first_shuffled[1])
    # Each canvas holds its example's image.
    x, y = shuffled[1]
    for canvas, label in zip(x[..., 0], y):
        rows, cols = np.nonzero(canvas)
        top, left = rows.min(), cols.min()
        np.testing.assert_array_equal(canvas[top : top + 4, left : left + 4], images[label])


def test_translated_digits_trains_with_fit():
    images, labels = distinct_images(16, 4, 4)
    data = TranslatedDigits(images, labels, batch_size=8, canvas_size=8, seed=0)
    model = keras.Sequential(
        [keras.Input((8, 8, 1)), keras.layers.Flatten(), keras.layers.Dense(10)]
    )
    model.compile("sgd", keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(data, epochs=2, verbose=0)
    # Keras calls on_epoch_end after every epoch (and once more when fit starts).
    assert len(history.history["loss"]) == 2 and data.epoch >= 2
    with pytest.raises(ValueError, match="`batch_size` must be at most the number of images 16"):
        TranslatedDigits(images, labels, batch_size=17)

import gzip
import importlib.util
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.tasks import digits
from keras_adl.tasks.digits import (
    DIGIT_OFFSET,
    END,
    PAD,
    START,
    DigitStrips,
    TranslatedDigits,
    alignment_hit_rate,
    caption_arrays,
    digit_strips,
    exact_match,
    find_fashion_mnist,
    load_idx_dataset,
    load_sklearn_digits,
    read_idx,
    split_dataset,
    translate_digits,
)


@pytest.fixture(scope="module")
def sk_digits():
    return load_sklearn_digits(16)


def _distinct_images(n=20, h=5, w=4, seed=0):
    """Images that identify themselves (random values, no two equal) and their labels."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.05, 1.0, (n, h, w)).astype("float32"), rng.integers(0, 10, n)


# ------------------------------------------------------------------------------ sklearn digits


def test_load_sklearn_digits_shapes_range_and_classes(sk_digits):
    images, labels = sk_digits
    assert images.shape == (1797, 16, 16) and images.dtype == np.float32
    assert labels.shape == (1797,) and labels.dtype == np.int32
    assert images.min() == 0.0 and images.max() == 1.0
    np.testing.assert_array_equal(np.bincount(labels) > 170, np.ones(10, bool))


def test_load_sklearn_digits_equals_scikit_learn_and_tf_resize(sk_digits):
    from sklearn.datasets import load_digits

    reference = load_digits()
    images8, labels8 = load_sklearn_digits(8)
    np.testing.assert_allclose(images8, reference.images / 16.0, atol=1e-7)
    np.testing.assert_array_equal(labels8, reference.target)
    for size, ours in ((16, sk_digits[0]), (21, load_sklearn_digits(21)[0])):
        expected = tf.image.resize(
            images8[:50, :, :, None], (size, size), "bilinear", antialias=True
        ).numpy()[..., 0]
        np.testing.assert_allclose(ours[:50], expected, atol=1e-5)


def test_load_sklearn_digits_errors(monkeypatch):
    with pytest.raises(ValueError, match="`size` must be an integer >= 8.*received 7"):
        load_sklearn_digits(7)
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *args: None if name == "sklearn" else find_spec(name, *args),
    )
    with pytest.raises(ImportError, match="pip install scikit-learn"):
        load_sklearn_digits()


# ---------------------------------------------------------------------------- translated digits


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
    images, labels = _distinct_images()
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
    images, labels = _distinct_images(100, 6, 6)
    data = TranslatedDigits(images, labels, batch_size=32, canvas_size=12, num_clutter=1,
                            clutter_size=3, seed=5, workers=2)
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
    images, labels = _distinct_images(40, 4, 4)
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
    images, labels = _distinct_images(16, 4, 4)
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


# ------------------------------------------------------------------------------------ IDX files


def _write_idx(path, array, code, compress=False):
    dtype = {0x08: ">u1", 0x0C: ">i4", 0x0D: ">f4"}[code]
    header = bytes([0, 0, code, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    data = header + np.asarray(array, dtype).tobytes()
    with open(path, "wb") as f:
        f.write(gzip.compress(data) if compress else data)


def _write_split(directory, prefix, images, labels, compress):
    suffix = ".gz" if compress else ""
    for kind, array in (("images-idx3", images), ("labels-idx1", labels)):
        path = os.path.join(directory, f"{prefix}-{kind}-ubyte{suffix}")
        _write_idx(path, array, 0x08, compress)


@pytest.mark.parametrize("compress", [False, True])
def test_read_idx_round_trip(tmp_path, compress):
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (5, 4, 3)).astype("uint8")
    path = tmp_path / ("images-idx3-ubyte" + (".gz" if compress else ""))
    _write_idx(path, images, 0x08, compress)
    read = read_idx(path)
    assert read.dtype == np.uint8 and read.shape == (5, 4, 3)
    np.testing.assert_array_equal(read, images)
    read[0, 0, 0] = 1  # writable
    values = rng.normal(size=(3, 2)).astype("float32")
    _write_idx(tmp_path / "floats", values, 0x0D, compress)
    np.testing.assert_array_equal(read_idx(tmp_path / "floats"), values)
    assert read_idx(tmp_path / "floats").dtype == np.dtype("float32")  # native byte order
    counts = np.array([-3, 70000, 2], "int32")
    _write_idx(tmp_path / "ints", counts, 0x0C, compress)
    np.testing.assert_array_equal(read_idx(tmp_path / "ints"), counts)


def test_read_idx_bad_files(tmp_path):
    bad_magic = tmp_path / "bad-magic"
    bad_magic.write_bytes(bytes([0, 1, 8, 1, 0, 0, 0, 1, 5]))
    with pytest.raises(ValueError, match="bad-magic: not an IDX file.*00 01 08 01"):
        read_idx(bad_magic)
    bad_type = tmp_path / "bad-type"
    bad_type.write_bytes(bytes([0, 0, 7, 1, 0, 0, 0, 1, 5]))
    with pytest.raises(ValueError, match="bad-type: not an IDX file"):
        read_idx(bad_type)
    short = tmp_path / "short.gz"
    short.write_bytes(gzip.compress(bytes([0, 0, 8, 2, 0, 0, 0, 2, 0, 0, 0, 3, 1, 2, 3])))
    with pytest.raises(ValueError, match="short.gz: IDX size mismatch.*\\(2, 3\\)"):
        read_idx(short)
    truncated = tmp_path / "truncated-header"
    truncated.write_bytes(bytes([0, 0, 8, 3, 0, 0, 0, 2]))
    with pytest.raises(ValueError, match="truncated-header: truncated IDX header"):
        read_idx(truncated)
    corrupt = tmp_path / "corrupt.gz"
    corrupt.write_bytes(gzip.compress(bytes(100))[:20])
    with pytest.raises(ValueError, match="corrupt.gz: not a valid gzip file"):
        read_idx(corrupt)
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "absent")


def test_load_idx_dataset_plain_and_gzip(tmp_path):
    rng = np.random.default_rng(1)
    train_x, train_y = rng.integers(0, 256, (6, 28, 28)).astype("uint8"), np.arange(6) % 10
    test_x, test_y = rng.integers(0, 256, (3, 28, 28)).astype("uint8"), np.array([9, 0, 4])
    _write_split(tmp_path, "train", train_x, train_y, compress=False)
    _write_split(tmp_path, "t10k", test_x, test_y, compress=True)
    for split, (x, y) in (("train", (train_x, train_y)), ("test", (test_x, test_y))):
        images, labels = load_idx_dataset(tmp_path, split)
        assert images.dtype == np.float32 and labels.dtype == np.int32
        np.testing.assert_allclose(images, x / 255.0, rtol=1e-6)
        np.testing.assert_array_equal(labels, y)
    with pytest.raises(ValueError, match="`split` must be one of \\['test', 'train'\\]"):
        load_idx_dataset(tmp_path, "validation")
    os.remove(tmp_path / "t10k-labels-idx1-ubyte.gz")
    missing = "t10k-labels-idx1-ubyte or t10k-labels-idx1-ubyte.gz"
    with pytest.raises(FileNotFoundError, match=missing):
        load_idx_dataset(tmp_path, "test")
    with pytest.raises(FileNotFoundError, match="train-images-idx3-ubyte"):
        load_idx_dataset(tmp_path / "nowhere")
    _write_split(tmp_path, "t10k", test_x, test_y[:2], compress=False)
    with pytest.raises(ValueError, match="expected 3 labels"):
        load_idx_dataset(tmp_path, "test")


def test_find_fashion_mnist_looks_for_both_splits(tmp_path, monkeypatch):
    monkeypatch.setattr(digits, "FASHION_MNIST_DIRS", (str(tmp_path / "absent"), str(tmp_path)))
    x, y = np.zeros((2, 28, 28), "uint8"), np.zeros(2, "uint8")
    _write_split(tmp_path, "train", x, y, compress=True)
    assert find_fashion_mnist() is None  # the test split is missing
    _write_split(tmp_path, "t10k", x, y, compress=True)
    assert find_fashion_mnist() == str(tmp_path)


@pytest.mark.skipif(
    find_fashion_mnist() is None,
    reason="Debian's dataset-fashion-mnist is not installed (make data)",
)
def test_real_fashion_mnist():
    directory = find_fashion_mnist()
    images, labels = load_idx_dataset(directory, "test")
    assert images.shape == (10000, 28, 28) and images.dtype == np.float32
    assert images.min() == 0.0 and images.max() == 1.0
    np.testing.assert_array_equal(np.bincount(labels), np.full(10, 1000))
    assert labels[:5].tolist() == [9, 2, 1, 1, 6]  # ankle boot, pullover, trouser, trouser, shirt
    images, labels = load_idx_dataset(directory, "train")
    assert images.shape == (60000, 28, 28)
    np.testing.assert_array_equal(np.bincount(labels), np.full(10, 6000))


def test_split_dataset():
    images, labels = np.arange(50)[:, None] * np.ones((50, 3)), np.arange(50)
    (x, y), (xt, yt) = split_dataset(images, labels, 0.2, seed=0)
    assert len(x) == 40 and len(xt) == 10
    np.testing.assert_array_equal(x[:, 0], y)  # images and labels stay paired
    np.testing.assert_array_equal(np.sort(np.concatenate([y, yt])), labels)
    assert not np.array_equal(y, np.arange(40))  # shuffled
    np.testing.assert_array_equal(split_dataset(images, labels, 0.2, seed=0)[1][1], yt)
    assert not np.array_equal(split_dataset(images, labels, 0.2, seed=1)[1][1], yt)
    message = "`test_fraction` must be a float in \\(0, 1\\); received 1.5"
    with pytest.raises(ValueError, match=message):
        split_dataset(images, labels, 1.5)
    with pytest.raises(ValueError, match="each side needs at least one"):
        split_dataset(images[:2], labels[:2], 0.1)
    with pytest.raises(ValueError, match="same length"):
        split_dataset(images, labels[:3])


# --------------------------------------------------------------------------------- digit strips


def test_digit_strips_columns_are_the_captioned_digits():
    images, labels = _distinct_images(20, 5, 4)
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
    assert captions.min() >= PAD and captions.max() <= 9 + DIGIT_OFFSET
    for b in range(300):
        n = lengths[b]
        assert (captions[b, :n] >= DIGIT_OFFSET).all() and (captions[b, n:] == PAD).all()
        assert not strips[b, :, 16 * n :].any() and (spans[b, n:] == 0).all()
        for t in range(n):
            block = strips[b, :, 16 * t : 16 * t + 16, 0]
            same = (images == block).all(axis=(1, 2))
            assert same.any() and (labels[same] + DIGIT_OFFSET == captions[b, t]).all()
    np.testing.assert_array_equal(digit_strips(images, labels, 5, (1, 4), rng=3)[0],
                                  digit_strips(images, labels, 5, (1, 4), rng=3)[0])


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
    images, labels = _distinct_images(50, 5, 4)
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


# --------------------------------------------------------------------------------------- figures


def _attention_on_columns(columns, grid_width, grid_height=2, rows=None):
    """One-hot attention [B, S, grid_height * grid_width] on the given grid columns."""
    columns = np.asarray(columns)
    rows = np.ones_like(columns) if rows is None else rows  # second row: tests the modulo
    attention = np.zeros(columns.shape + (grid_height * grid_width,), "float32")
    np.put_along_axis(attention, (rows * grid_width + columns)[..., None], 1.0, axis=-1)
    return attention


def test_alignment_hit_rate():
    images, labels = _distinct_images(20, 5, 8)
    _, captions, spans = digit_strips(images, labels, 32, num_digits=(1, 3), rng=0)
    grid_width, strip_width = 6, 24  # two grid columns per digit of 8 pixels
    lengths = (captions != PAD).sum(1)
    steps = np.arange(4)[None, :].repeat(32, 0)  # T + 1 = 4 steps, the last one is END
    on_digit = np.minimum(2 * steps + 1, grid_width - 1)
    wrong = (on_digit + 2) % grid_width  # the next digit's column (wraps to the first)
    assert alignment_hit_rate(_attention_on_columns(on_digit, grid_width), spans, captions,
                              grid_width, strip_width) == 1.0
    assert alignment_hit_rate(_attention_on_columns(wrong, grid_width), spans, captions,
                              grid_width, strip_width) == 0.0
    # Padding steps and the END step may look anywhere.
    real = steps < lengths[:, None]
    mixed = np.where(real, on_digit, wrong)
    assert alignment_hit_rate(_attention_on_columns(mixed, grid_width), spans, captions,
                              grid_width, strip_width) == 1.0
    # First digit right, the others wrong: the rate counts real steps only.
    first_only = np.where(steps == 0, on_digit, wrong)
    expected = len(captions) / lengths.sum()
    assert alignment_hit_rate(_attention_on_columns(first_only, grid_width), spans, captions,
                              grid_width, strip_width) == pytest.approx(expected)


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

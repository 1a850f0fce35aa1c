import gzip
import importlib.util
import os

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.data import image_sources
from keras_adl.data.image_sources import (
    find_fashion_mnist,
    load_idx_dataset,
    load_sklearn_digits,
    read_idx,
)
from tests import debian_data


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
    with pytest.raises(ImportError, match=r"pip install 'keras-adl\[data\]'"):
        load_sklearn_digits()


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
    monkeypatch.setattr(
        image_sources, "FASHION_MNIST_DIRS", (str(tmp_path / "absent"), str(tmp_path))
    )
    x, y = np.zeros((2, 28, 28), "uint8"), np.zeros(2, "uint8")
    _write_split(tmp_path, "train", x, y, compress=True)
    assert find_fashion_mnist() is None  # the test split is missing
    _write_split(tmp_path, "t10k", x, y, compress=True)
    assert find_fashion_mnist() == str(tmp_path)


@debian_data.needs("dataset-fashion-mnist")
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

"""Images of digits (and clothes) without a download at run time.

- `load_sklearn_digits`: scikit-learn's bundled 8×8 digits (1797 images), upscaled;
- `load_idx_dataset`: MNIST or Fashion-MNIST from their standard IDX files (`read_idx`), e.g.
  the files of Debian's ``dataset-fashion-mnist`` package (`find_fashion_mnist`, ``make data``).

Both return float32 images in ``[0, 1]`` and int32 labels: the input of `translate_digits`
and `digit_strips`.

References:
    LeCun, Bottou, Bengio, Haffner (1998). Gradient-based learning applied to document
    recognition (MNIST and its IDX format).
    Xiao, Rasul, Vollgraf (2017). Fashion-MNIST. arXiv:1708.07747.
"""

import gzip
import os

import numpy as np

from keras_adl.extras import require_spec

# Where Debian's `dataset-fashion-mnist` package installs the four gzip-compressed IDX files
# (`train-images-idx3-ubyte.gz`, `train-labels-idx1-ubyte.gz`, `t10k-images-idx3-ubyte.gz`,
# `t10k-labels-idx1-ubyte.gz`). `make data` installs it.
FASHION_MNIST_DIRS = ("/usr/share/datasets/fashion-mnist",)

_SPLITS = {"train": "train", "test": "t10k"}

# IDX type codes (the third magic byte) and their big-endian numpy dtypes.
_IDX_DTYPES = {
    0x08: np.dtype("u1"),
    0x09: np.dtype("i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_GZIP_MAGIC = b"\x1f\x8b"


def _resize_weights(in_size, out_size):
    """``[out_size, in_size]`` weights of the triangle (bilinear) kernel, widened by the
    downscaling factor (antialiasing) and renormalised at the borders: the weights of
    ``tf.image.resize(..., "bilinear", antialias=True)``."""
    scale = in_size / out_size
    support = max(scale, 1.0)
    centres = (np.arange(out_size) + 0.5) * scale
    pixels = np.arange(in_size) + 0.5
    weights = np.maximum(0.0, 1.0 - np.abs(centres[:, None] - pixels[None, :]) / support)
    return weights / weights.sum(axis=1, keepdims=True)


def _sklearn_digits():
    """The 8×8 digits (values 0..16) and labels bundled with scikit-learn."""
    # Read the bundled file directly: importing sklearn.datasets takes about a second.
    spec = require_spec("sklearn", "data", "load_sklearn_digits (scikit-learn's 8x8 digits)")
    for location in spec.submodule_search_locations or ():
        path = os.path.join(location, "datasets", "data", "digits.csv.gz")
        if os.path.isfile(path):
            data = np.loadtxt(path, delimiter=",", dtype="int64")
            return data[:, :-1].reshape(-1, 8, 8), data[:, -1]
    from sklearn.datasets import load_digits  # another layout: ask scikit-learn

    digits = load_digits()
    return digits.images, digits.target


def load_sklearn_digits(size=16):
    """scikit-learn's bundled 8×8 digits (1797 images, no download), upscaled.

    The images are resized to ``size × size`` with antialiased bilinear interpolation (the
    weights of ``tf.image.resize(..., antialias=True)``, computed in numpy) and scaled to
    ``[0, 1]``.

    Args:
        size: side of the returned images, an integer ≥ 8.

    Returns:
        ``(images, labels)``: float32 ``[1797, size, size]`` in ``[0, 1]`` and int32 ``[1797]``
        (classes 0–9).

    Raises:
        ImportError: scikit-learn is not installed (`keras_adl.extras.MissingExtra`, naming
            ``pip install 'keras-adl[data]'``).
        ValueError: ``size`` is not an integer ≥ 8.

    Example:

    >>> images, labels = load_sklearn_digits(size=16)
    >>> images.shape, images.dtype, labels[:5].tolist()
    ((1797, 16, 16), dtype('float32'), [0, 1, 2, 3, 4])
    >>> round(float(images.min()), 3), round(float(images.max()), 3)
    (0.0, 1.0)
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 8:
        raise ValueError(
            f"load_sklearn_digits: `size` must be an integer >= 8 (the digits are 8x8); "
            f"received {size!r}."
        )
    images, labels = _sklearn_digits()
    weights = _resize_weights(8, int(size))
    images = weights @ (np.asarray(images, "float64") / 16.0) @ weights.T
    return np.clip(images, 0.0, 1.0).astype("float32"), np.asarray(labels, "int32")


def read_idx(path):
    """Reads one IDX file: the format of MNIST and Fashion-MNIST.

    The header is two zero bytes, a type code (``0x08`` uint8, ``0x09`` int8, ``0x0B`` int16,
    ``0x0C`` int32, ``0x0D`` float32, ``0x0E`` float64), the number of dimensions, then each
    dimension as a big-endian uint32; the values follow, big-endian. gzip compression
    (``*-ubyte.gz``) is detected by its magic bytes, so a misnamed file reads as well.

    Args:
        path: an IDX file, e.g. ``train-images-idx3-ubyte`` or ``t10k-labels-idx1-ubyte.gz``.

    Returns:
        A numpy array with the file's dtype (in native byte order) and shape: uint8
        ``[N, 28, 28]`` for MNIST images, uint8 ``[N]`` for labels.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: the file is not valid gzip, has a bad magic number, or its size does not
            match its header (the message names ``path``).

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "labels-idx1-ubyte")
    >>> with open(path, "wb") as f:
    ...     _ = f.write(bytes([0, 0, 0x08, 1, 0, 0, 0, 3, 7, 2, 1]))
    >>> read_idx(path)
    array([7, 2, 1], dtype=uint8)
    """
    path = os.fspath(path)
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise ValueError(f"{path}: not a valid gzip file ({error}).") from None
    if len(data) < 4 or data[:2] != b"\x00\x00" or data[2] not in _IDX_DTYPES or data[3] == 0:
        raise ValueError(
            f"{path}: not an IDX file: expected the magic number 00 00 <type code in "
            f"{sorted(_IDX_DTYPES)}> <number of dimensions ≥ 1>; received bytes "
            f"{data[:4].hex(' ') or '(empty file)'}."
        )
    dtype, ndim = _IDX_DTYPES[data[2]], data[3]
    header = 4 + 4 * ndim
    if len(data) < header:
        raise ValueError(
            f"{path}: truncated IDX header: {ndim} dimensions need {header} bytes; the file "
            f"has {len(data)}."
        )
    shape = tuple(int(d) for d in np.frombuffer(data, ">u4", ndim, 4))
    expected = header + int(np.prod(shape, dtype="int64")) * dtype.itemsize
    if len(data) != expected:
        raise ValueError(
            f"{path}: IDX size mismatch: the header declares shape {shape} of {dtype.name} "
            f"({expected} bytes with the header); the data has {len(data)} bytes."
        )
    array = np.frombuffer(data, dtype, offset=header).reshape(shape)
    return array.astype(dtype.newbyteorder("="))  # a writable native-endian copy


def _find_idx(directory, name):
    """The path of ``name`` or ``name.gz`` in ``directory``, or ``None``."""
    for candidate in (name, name + ".gz"):
        path = os.path.join(directory, candidate)
        if os.path.isfile(path):
            return path
    return None


def load_idx_dataset(directory, split="train"):
    """Loads one split of MNIST or Fashion-MNIST from its IDX files.

    Looks in ``directory`` for ``train-images-idx3-ubyte`` and ``train-labels-idx1-ubyte``
    (``split="train"``) or ``t10k-images-idx3-ubyte`` and ``t10k-labels-idx1-ubyte``
    (``split="test"``), each plain or gzip-compressed (``.gz``): the names both datasets use.

    Args:
        directory: the folder of the files (e.g. ``find_fashion_mnist()``).
        split: ``"train"`` or ``"test"``.

    Returns:
        ``(images, labels)``: float32 ``[N, 28, 28]`` in ``[0, 1]`` and int32 ``[N]``.

    Raises:
        FileNotFoundError: a file is missing (the message lists the names looked for).
        ValueError: a bad ``split``, a bad file, or images and labels that do not match.

    Example:

    >>> directory = find_fashion_mnist()
    >>> if directory is not None:
    ...     images, labels = load_idx_dataset(directory, "test")
    ...     assert images.shape == (10000, 28, 28) and labels.max() == 9
    """
    if split not in _SPLITS:
        raise ValueError(
            f"load_idx_dataset: `split` must be one of {sorted(_SPLITS)}; received {split!r}."
        )
    directory = os.fspath(directory)
    paths = []
    for kind in ("images-idx3-ubyte", "labels-idx1-ubyte"):
        name = f"{_SPLITS[split]}-{kind}"
        path = _find_idx(directory, name)
        if path is None:
            raise FileNotFoundError(
                f"load_idx_dataset: no {name} or {name}.gz in {directory!r} (split={split!r})."
            )
        paths.append(path)
    images, labels = read_idx(paths[0]), read_idx(paths[1])
    if images.ndim != 3 or images.dtype != np.uint8:
        raise ValueError(
            f"{paths[0]}: expected uint8 images [N, height, width]; received {images.dtype} "
            f"of shape {images.shape}."
        )
    if labels.ndim != 1 or len(labels) != len(images):
        raise ValueError(
            f"{paths[1]}: expected {len(images)} labels (one per image of {paths[0]}); "
            f"received shape {labels.shape}."
        )
    return images.astype("float32") / 255.0, labels.astype("int32")


def find_fashion_mnist():
    """The directory of the Fashion-MNIST IDX files if installed, else ``None``.

    Looks in `FASHION_MNIST_DIRS` (where Debian's ``dataset-fashion-mnist`` package, installed
    by ``make data``, puts them) for a directory holding both splits.

    Returns:
        A directory of `FASHION_MNIST_DIRS`, or ``None``.

    Example:

    >>> directory = find_fashion_mnist()
    >>> directory is None or directory in FASHION_MNIST_DIRS
    True
    """
    names = [
        f"{prefix}-{kind}"
        for prefix in _SPLITS.values()
        for kind in ("images-idx3-ubyte", "labels-idx1-ubyte")
    ]
    for directory in FASHION_MNIST_DIRS:
        if all(_find_idx(directory, name) for name in names):
            return directory
    return None

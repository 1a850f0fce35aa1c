"""Digits for visual attention: translated / cluttered digits and captioned digit strips.

Two sources of images, both without a download at run time:

- `load_sklearn_digits`: scikit-learn's bundled 8×8 digits (1797 images), upscaled;
- `load_idx_dataset`: MNIST or Fashion-MNIST from their standard IDX files (`read_idx`), e.g.
  the files of Debian's ``dataset-fashion-mnist`` package (`find_fashion_mnist`, ``make data``).

Two tasks built from them:

- the Recurrent Attention Model's translated (and cluttered) digits: `translate_digits`, and
  `TranslatedDigits`, a `keras.utils.PyDataset` placing the digits afresh every epoch;
- Show-Attend-Tell captioning of digit strips: `digit_strips` (image, caption, where each digit
  is), `caption_arrays` (teacher forcing), `DigitStrips` (a `PyDataset`), and the two figures
  `alignment_hit_rate` (does step ``t`` look at digit ``t``?) and `exact_match`.

Caption tokens: ``PAD=0``, ``START=1``, ``END=2``, and class ``d`` is token
``d + DIGIT_OFFSET``, so 10 classes give a vocabulary of 13.

Every generator takes ``rng`` (a ``numpy.random.Generator``, an int seed or ``None``) and is
vectorised over the batch; the datasets derive their generator from ``(seed, epoch, index)``,
so a batch is reproducible and every epoch brings new placements.

References:
    Mnih, Heess, Graves, Kavukcuoglu (2014). Recurrent Models of Visual Attention.
    arXiv:1406.6247.
    Xu, Ba, Kiros, Cho, Courville, Salakhutdinov, Zemel, Bengio (2015). Show, Attend and Tell:
    Neural Image Caption Generation with Visual Attention. arXiv:1502.03044.
    LeCun, Bottou, Bengio, Haffner (1998). Gradient-based learning applied to document
    recognition (MNIST and its IDX format).
    Xiao, Rasul, Vollgraf (2017). Fashion-MNIST. arXiv:1708.07747.
"""

import gzip
import importlib.util
import numbers
import os

import keras
import numpy as np

from keras_adl.utils import check_positive_int, check_seed

PAD, START, END = 0, 1, 2
DIGIT_OFFSET = 3  # caption token of class d is d + DIGIT_OFFSET; vocabulary size 13 for 10 classes

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


def _rng(rng):
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _check_count(where, name, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
        raise ValueError(f"{where}`{name}` must be a non-negative integer; received {value!r}.")
    return int(value)


def _check_images(where, images, labels):
    """``images`` as float32 ``[N, h, w]`` (a trailing channel of 1 is dropped), ``labels``
    as int32 ``[N]``."""
    images = np.asarray(images)
    labels = np.asarray(labels)
    if images.ndim == 4 and images.shape[-1] == 1:
        images = images[..., 0]
    if images.ndim != 3:
        raise ValueError(
            f"{where}`images` must have shape [N, height, width] (or [N, height, width, 1]); "
            f"received shape {images.shape}."
        )
    if not (np.issubdtype(images.dtype, np.floating) or np.issubdtype(images.dtype, np.integer)):
        raise TypeError(f"{where}`images` must be numeric; received dtype {images.dtype}.")
    if labels.ndim != 1 or len(labels) != len(images):
        raise ValueError(
            f"{where}`labels` must have shape [N] with N = {len(images)} (the number of "
            f"images); received shape {labels.shape}."
        )
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"{where}`labels` must be integers; received dtype {labels.dtype}.")
    if len(images) == 0:
        raise ValueError(f"{where}`images` is empty; at least one image is needed.")
    return images.astype("float32", copy=False), labels.astype("int32", copy=False)


# ------------------------------------------------------------------------------------ loaders


def _check_batches(where, images, labels, batch_size):
    """Checked ``(images, labels, batch_size)`` of a dataset of fixed-size batches."""
    images, labels = _check_images(where, images, labels)
    check_positive_int("batch_size", batch_size, where)
    if batch_size > len(images):
        raise ValueError(
            f"{where}`batch_size` must be at most the number of images {len(images)}; "
            f"received {batch_size}."
        )
    return images, labels, batch_size


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
    spec = importlib.util.find_spec("sklearn")
    if spec is None:
        raise ImportError(
            "load_sklearn_digits needs scikit-learn (it ships the 8x8 digits): "
            "`pip install scikit-learn` (a dependency of keras-adl)."
        )
    # Read the bundled file directly: importing sklearn.datasets takes about a second.
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
        ImportError: scikit-learn is not installed.
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
                f"load_idx_dataset: no {name} or {name}.gz in {directory!r} "
                f"(split={split!r})."
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

    Example:

    >>> directory = find_fashion_mnist()
    >>> directory is None or directory in FASHION_MNIST_DIRS
    True
    """
    names = [f"{prefix}-{kind}" for prefix in _SPLITS.values()
             for kind in ("images-idx3-ubyte", "labels-idx1-ubyte")]
    for directory in FASHION_MNIST_DIRS:
        if all(_find_idx(directory, name) for name in names):
            return directory
    return None


def split_dataset(images, labels, test_fraction=0.2, seed=0):
    """A seeded random split into training and test sets.

    Args:
        images: ``[N, ...]`` array.
        labels: ``[N]`` array.
        test_fraction: share of the examples in the test set, in ``(0, 1)`` (rounded; each
            side keeps at least one example).
        seed: seed of the permutation.

    Returns:
        ``((train_images, train_labels), (test_images, test_labels))``.

    Example:

    >>> (x, y), (xt, yt) = split_dataset(np.arange(10), np.arange(10), 0.3, seed=0)
    >>> len(x), len(xt), sorted(x.tolist() + xt.tolist()) == list(range(10))
    (7, 3, True)
    """
    images, labels = np.asarray(images), np.asarray(labels)
    if images.ndim == 0 or labels.ndim == 0 or len(images) != len(labels):
        raise ValueError(
            f"split_dataset: `images` and `labels` must have the same length; received "
            f"shapes {images.shape} and {labels.shape}."
        )
    if isinstance(test_fraction, bool) or not isinstance(test_fraction, (int, float)) or not (
        0 < test_fraction < 1
    ):
        raise ValueError(
            f"split_dataset: `test_fraction` must be a float in (0, 1); received "
            f"{test_fraction!r}."
        )
    num_test = int(round(len(images) * test_fraction))
    if not 0 < num_test < len(images):
        raise ValueError(
            f"split_dataset: `test_fraction`={test_fraction} of {len(images)} examples leaves "
            f"{num_test} for the test set; each side needs at least one."
        )
    order = np.random.default_rng(seed).permutation(len(images))
    test, train = order[:num_test], order[num_test:]
    return (images[train], labels[train]), (images[test], labels[test])


# --------------------------------------------------------------- translated, cluttered digits


def _paste_max(canvases, pieces, top, left):
    """``canvases[n, top[n]:, left[n]:] = max(canvas, pieces[n])`` for every ``n`` at once."""
    n, h, w = pieces.shape
    rows = (top[:, None] + np.arange(h))[:, :, None]
    cols = (left[:, None] + np.arange(w))[:, None, :]
    batch = np.arange(n)[:, None, None]
    canvases[batch, rows, cols] = np.maximum(canvases[batch, rows, cols], pieces)


def translate_digits(images, labels, canvas_size=32, num_clutter=0, clutter_size=8, rng=None):
    """Places each image at a uniformly random position of a larger blank canvas.

    With ``num_clutter > 0`` the canvas first gets ``num_clutter`` random
    ``clutter_size × clutter_size`` crops of other images of the batch (each chosen at random,
    never the example's own image) at random positions: the "cluttered translated MNIST" of
    Mnih et al. (2014). Pieces combine with ``np.maximum`` (the digit too), so values stay in
    the images' range ``[0, 1]``.

    Args:
        images: ``[N, h, w]`` (or ``[N, h, w, 1]``) images with values in ``[0, 1]``;
            ``h, w ≤ canvas_size``.
        labels: ``[N]`` integer labels.
        canvas_size: side of the square canvas.
        num_clutter: number of clutter pieces per canvas (needs ``N ≥ 2``).
        clutter_size: side of each clutter piece (≤ ``h``, ``w``).
        rng: a ``numpy.random.Generator``, an int seed or ``None``.

    Returns:
        ``(canvases, labels, offsets)``: float32 ``[N, canvas_size, canvas_size, 1]``, int32
        ``[N]``, and int32 ``[N, 2]``, the ``(top, left)`` of each digit on its canvas.

    Example:

    >>> images = np.full((2, 3, 3), 0.5, "float32")
    >>> x, y, offsets = translate_digits(images, np.array([4, 7]), canvas_size=6, rng=0)
    >>> x.shape, y.tolist(), offsets.shape
    ((2, 6, 6, 1), [4, 7], (2, 2))
    >>> top, left = offsets[0]
    >>> bool((x[0, top:top + 3, left:left + 3, 0] == 0.5).all()), round(float(x[0].sum()), 2)
    (True, 4.5)
    """
    where = "translate_digits: "
    images, labels = _check_images(where, images, labels)
    check_positive_int("canvas_size", canvas_size, where)
    num_clutter = _check_count(where, "num_clutter", num_clutter)
    n, h, w = images.shape
    if h > canvas_size or w > canvas_size:
        raise ValueError(
            f"{where}the images ({h}x{w}) must fit in the canvas; received "
            f"`canvas_size`={canvas_size}."
        )
    if num_clutter:
        check_positive_int("clutter_size", clutter_size, where)
        if clutter_size > min(h, w):
            raise ValueError(
                f"{where}`clutter_size` must be at most the image size {min(h, w)} (pieces are "
                f"cropped from images); received {clutter_size}."
            )
        if n < 2:
            raise ValueError(
                f"{where}`num_clutter` > 0 takes clutter from the other images of the batch, "
                f"so it needs at least 2 images; received {n}."
            )
    rng = _rng(rng)
    canvases = np.zeros((n, canvas_size, canvas_size), "float32")
    span = np.arange(clutter_size)
    for _ in range(num_clutter):
        source = (np.arange(n) + rng.integers(1, n, size=n)) % n  # never the example itself
        crop_top = rng.integers(0, h - clutter_size + 1, size=n)
        crop_left = rng.integers(0, w - clutter_size + 1, size=n)
        pieces = images[
            source[:, None, None],
            (crop_top[:, None] + span)[:, :, None],
            (crop_left[:, None] + span)[:, None, :],
        ]
        _paste_max(
            canvases,
            pieces,
            rng.integers(0, canvas_size - clutter_size + 1, size=n),
            rng.integers(0, canvas_size - clutter_size + 1, size=n),
        )
    top = rng.integers(0, canvas_size - h + 1, size=n)
    left = rng.integers(0, canvas_size - w + 1, size=n)
    offsets = np.stack([top, left], axis=1)
    _paste_max(canvases, images, offsets[:, 0], offsets[:, 1])
    return canvases[..., None], labels, offsets.astype("int32")


class TranslatedDigits(keras.utils.PyDataset):
    """Batches of translated (optionally cluttered) digits, placed afresh every epoch.

    Batch ``i`` of epoch ``e`` is drawn by a generator seeded with ``(seed, e, i)``: the same
    dataset configuration gives the same batch, whatever the order or the worker that asks
    for it, and each epoch brings new positions and clutter. ``on_epoch_end`` (called by
    ``fit``) advances the epoch and, with ``shuffle``, reorders the examples.

    Args:
        images: ``[N, h, w]`` images in ``[0, 1]`` (e.g. from `load_sklearn_digits`).
        labels: ``[N]`` integer labels.
        batch_size: examples per batch; the last ``N % batch_size`` examples of each epoch's
            order are dropped, so every batch has the same shape (no retracing).
        canvas_size, num_clutter, clutter_size: as in `translate_digits`.
        seed: a non-negative integer.
        shuffle: reorder the examples every epoch.
        **kwargs: ``workers``, ``use_multiprocessing``, ``max_queue_size`` of
            ``keras.utils.PyDataset``.

    Returns (``__getitem__``):
        ``(x, y)``: float32 ``[batch_size, canvas_size, canvas_size, 1]`` and int32
        ``[batch_size]``.

    Example:

    >>> data = TranslatedDigits(np.ones((10, 4, 4)), np.arange(10), batch_size=4,
    ...                         canvas_size=8)
    >>> x, y = data[0]
    >>> len(data), x.shape, y.dtype
    (2, (4, 8, 8, 1), dtype('int32'))
    """

    def __init__(
        self,
        images,
        labels,
        batch_size=64,
        canvas_size=32,
        num_clutter=0,
        clutter_size=8,
        seed=0,
        shuffle=True,
        **kwargs,
    ):
        super().__init__(**kwargs)
        where = "TranslatedDigits: "
        self.images, self.labels, self.batch_size = _check_batches(where, images, labels,
                                                                   batch_size)
        self.canvas_size = canvas_size
        self.num_clutter = num_clutter
        self.clutter_size = clutter_size
        self.seed = check_seed(where, seed)
        self.shuffle = shuffle
        self.epoch = 0
        # Validates the canvas and clutter arguments now rather than in the first batch.
        translate_digits(self.images[:2], self.labels[:2], canvas_size, num_clutter,
                         clutter_size, rng=0)
        self._order = self._epoch_order()

    def _epoch_order(self):
        if not self.shuffle:
            return np.arange(len(self.images))
        return np.random.default_rng([self.seed, self.epoch]).permutation(len(self.images))

    def __len__(self):
        return len(self.images) // self.batch_size

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f"TranslatedDigits: batch {index} out of range [0, {len(self)}).")
        rows = self._order[index * self.batch_size : (index + 1) * self.batch_size]
        x, y, _ = translate_digits(
            self.images[rows],
            self.labels[rows],
            self.canvas_size,
            self.num_clutter,
            self.clutter_size,
            rng=np.random.default_rng([self.seed, self.epoch, index]),
        )
        return x, y

    def on_epoch_end(self):
        self.epoch += 1
        self._order = self._epoch_order()


# ----------------------------------------------------------------- digit strips and captions


def _digit_range(where, num_digits):
    if isinstance(num_digits, (tuple, list)) and len(num_digits) == 2:
        low, high = num_digits
    else:
        low = high = num_digits
    for value in (low, high):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(
                f"{where}`num_digits` must be a positive integer or a (min, max) pair of them; "
                f"received {num_digits!r}."
            )
    if low > high:
        raise ValueError(f"{where}`num_digits` (min, max) must have min ≤ max; received "
                         f"{num_digits!r}.")
    return int(low), int(high)


def digit_strips(images, labels, batch_size, num_digits=3, rng=None):
    """Strips of random digits side by side, with their captions and positions.

    Digit ``t`` of a strip occupies columns ``[t·w, (t+1)·w)`` of an
    ``[h, max_digits·w]`` strip; the slots after the caption's last digit stay blank (0).

    Args:
        images: ``[N, h, w]`` (or ``[N, h, w, 1]``) images to draw digits from.
        labels: ``[N]`` integer labels (class ``d`` becomes token ``d + DIGIT_OFFSET``).
        batch_size: number of strips.
        num_digits: digits per strip, an int, or a ``(min, max)`` pair for captions of
            uniformly random length.
        rng: a ``numpy.random.Generator``, an int seed or ``None``.

    Returns:
        ``(strips, captions, spans)``: float32 ``[B, h, max_digits·w, 1]``; int32
        ``[B, max_digits]`` tokens, ``PAD``-padded; int32 ``[B, max_digits, 2]``, the
        ``[start, end)`` pixel columns of each digit and ``(0, 0)`` for padding.

    Example:

    >>> images = np.arange(3)[:, None, None] * np.ones((3, 2, 2)) / 2
    >>> strips, captions, spans = digit_strips(images, np.arange(3), 2, (1, 3), rng=1)
    >>> strips.shape, captions.tolist(), spans[0].tolist()
    ((2, 2, 6, 1), [[5, 5, 0], [3, 5, 0]], [[0, 2], [2, 4], [0, 0]])
    >>> strips[1, 0, :, 0].tolist()  # digits 0 (all 0.0) and 2 (all 1.0), then a blank slot
    [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    """
    where = "digit_strips: "
    images, labels = _check_images(where, images, labels)
    check_positive_int("batch_size", batch_size, where)
    low, high = _digit_range(where, num_digits)
    if labels.min() < 0:
        raise ValueError(f"{where}`labels` must be ≥ 0; received {int(labels.min())}.")
    rng = _rng(rng)
    n, h, w = images.shape
    lengths = rng.integers(low, high + 1, size=batch_size)
    chosen = rng.integers(0, n, size=(batch_size, high))
    real = np.arange(high)[None, :] < lengths[:, None]  # [B, T]
    digits = images[chosen] * real[:, :, None, None]  # [B, T, h, w]
    strips = digits.transpose(0, 2, 1, 3).reshape(batch_size, h, high * w, 1)
    captions = np.where(real, labels[chosen] + DIGIT_OFFSET, PAD).astype("int32")
    starts = np.arange(high) * w
    spans = np.stack([starts, starts + w], axis=-1)[None] * real[..., None]
    return strips.astype("float32"), captions, spans.astype("int32")


def _check_captions(where, name, captions):
    captions = np.asarray(captions)
    if captions.ndim != 2:
        raise ValueError(f"{where}`{name}` must have shape [B, T]; received shape "
                         f"{captions.shape}.")
    if not np.issubdtype(captions.dtype, np.integer):
        raise TypeError(f"{where}`{name}` must be integer tokens; received dtype "
                        f"{captions.dtype}.")
    real = captions != PAD
    if (real[:, 1:] & ~real[:, :-1]).any():
        raise ValueError(f"{where}`{name}` must be padded at the end only (a token after a "
                         f"PAD={PAD}).")
    return captions, real


def caption_arrays(captions):
    """Teacher-forcing arrays from ``PAD``-padded captions.

    Args:
        captions: int ``[B, T]`` tokens, each row ``c_1..c_n`` then ``PAD``.

    Returns:
        ``(decoder_input, targets)``, int32 ``[B, T+1]``: ``[START, c_1..c_n, PAD…]`` and
        ``[c_1..c_n, END, PAD…]``.

    Example:

    >>> decoder_input, targets = caption_arrays(np.array([[5, 7, 0], [4, 0, 0]]))
    >>> decoder_input.tolist(), targets.tolist()
    ([[1, 5, 7, 0], [1, 4, 0, 0]], [[5, 7, 2, 0], [4, 2, 0, 0]])
    """
    captions, real = _check_captions("caption_arrays: ", "captions", captions)
    batch, steps = captions.shape
    decoder_input = np.full((batch, steps + 1), PAD, "int32")
    decoder_input[:, 0] = START
    decoder_input[:, 1:] = captions
    targets = np.full((batch, steps + 1), PAD, "int32")
    targets[:, :steps] = captions
    targets[np.arange(batch), real.sum(axis=1)] = END
    return decoder_input, targets


class DigitStrips(keras.utils.PyDataset):
    """Batches of captioned digit strips for teacher-forced training, fresh every epoch.

    Batch ``i`` of epoch ``e`` is `digit_strips` drawn with a generator seeded with
    ``(seed, e, i)``, then `caption_arrays`; ``on_epoch_end`` (called by ``fit``) advances the
    epoch. For `alignment_hit_rate`, which needs the digits' spans, call `digit_strips`.

    Args:
        images: ``[N, h, w]`` images to draw digits from.
        labels: ``[N]`` integer labels.
        batch_size: strips per batch; ``len`` is ``N // batch_size`` (one epoch draws about as
            many digits as there are images per digit slot).
        num_digits: an int or a ``(min, max)`` pair, as in `digit_strips`.
        seed: a non-negative integer.
        **kwargs: ``workers``, ``use_multiprocessing``, ``max_queue_size`` of
            ``keras.utils.PyDataset``.

    Returns (``__getitem__``):
        ``({"image": strips, "decoder_input": decoder_input}, targets)``: float32
        ``[B, h, max_digits·w, 1]``, int32 ``[B, max_digits+1]`` and int32
        ``[B, max_digits+1]``.

    Example:

    >>> data = DigitStrips(np.ones((8, 4, 4)), np.arange(8) % 10, batch_size=4, num_digits=2)
    >>> inputs, targets = data[0]
    >>> len(data), inputs["image"].shape, inputs["decoder_input"].shape, targets.shape
    (2, (4, 4, 8, 1), (4, 3), (4, 3))
    """

    def __init__(self, images, labels, batch_size=64, num_digits=3, seed=0, **kwargs):
        super().__init__(**kwargs)
        where = "DigitStrips: "
        self.images, self.labels, self.batch_size = _check_batches(where, images, labels,
                                                                   batch_size)
        self.num_digits = num_digits
        _digit_range(where, num_digits)
        self.seed = check_seed(where, seed)
        self.epoch = 0

    def __len__(self):
        return len(self.images) // self.batch_size

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f"DigitStrips: batch {index} out of range [0, {len(self)}).")
        strips, captions, _ = digit_strips(
            self.images,
            self.labels,
            self.batch_size,
            self.num_digits,
            rng=np.random.default_rng([self.seed, self.epoch, index]),
        )
        decoder_input, targets = caption_arrays(captions)
        return {"image": strips, "decoder_input": decoder_input}, targets

    def on_epoch_end(self):
        self.epoch += 1


# -------------------------------------------------------------------------------- figures


def alignment_hit_rate(attention, spans, captions, grid_width, strip_width):
    """How often each caption step attends to the digit it names.

    ``attention`` weighs an annotation grid of ``L = grid_height · grid_width`` regions laid
    out row-major (region ``l`` is in grid column ``l % grid_width``). Step ``t`` of a caption
    with ``n`` digits (``t < n``) is a hit when the column centre of its most-attended region,
    ``(col + 0.5) · strip_width / grid_width`` pixels, lies in digit ``t``'s span
    ``[start, end)``. The END step and padding steps are ignored.

    Args:
        attention: ``[B, S, L]`` attention weights, ``S ≥ T`` (e.g. the ``T + 1`` steps of a
            teacher-forced decoder).
        spans: int ``[B, T, 2]`` from `digit_strips`.
        captions: int ``[B, T]`` ``PAD``-padded captions from `digit_strips`.
        grid_width: columns of the annotation grid.
        strip_width: width of the strips in pixels.

    Returns:
        The hit rate over all real digit steps, a float in ``[0, 1]``.

    Example:

    >>> spans = np.array([[[0, 4], [4, 8]]])
    >>> attention = np.zeros((1, 3, 2))
    >>> attention[0, 0, 0] = attention[0, 1, 1] = 1.0  # step 0 on the left, step 1 on the right
    >>> round(alignment_hit_rate(attention, spans, np.array([[5, 6]]), 2, 8), 2)
    1.0
    >>> round(alignment_hit_rate(attention[..., ::-1], spans, np.array([[5, 6]]), 2, 8), 2)
    0.0
    """
    where = "alignment_hit_rate: "
    captions, real = _check_captions(where, "captions", captions)
    attention, spans = np.asarray(attention), np.asarray(spans)
    batch, steps = captions.shape
    if attention.ndim != 3 or attention.shape[0] != batch or attention.shape[1] < steps:
        raise ValueError(
            f"{where}`attention` must have shape [B, S, L] with B = {batch} and S ≥ {steps} "
            f"(the captions' shape is {captions.shape}); received shape {attention.shape}."
        )
    if spans.shape != (batch, steps, 2):
        raise ValueError(f"{where}`spans` must have shape {(batch, steps, 2)}; received shape "
                         f"{spans.shape}.")
    check_positive_int("grid_width", grid_width, where)
    if attention.shape[2] % grid_width:
        raise ValueError(
            f"{where}the {attention.shape[2]} attention regions must be a whole number of rows "
            f"of `grid_width`={grid_width}."
        )
    if isinstance(strip_width, bool) or not isinstance(strip_width, numbers.Real) or not (
        strip_width > 0
    ):
        raise ValueError(f"{where}`strip_width` must be a positive number; received "
                         f"{strip_width!r}.")
    if not real.any():
        raise ValueError(f"{where}`captions` holds no digit (all PAD); there is nothing to score.")
    column = attention[:, :steps].argmax(axis=-1) % grid_width
    centre = (column + 0.5) * strip_width / grid_width
    hit = (centre >= spans[..., 0]) & (centre < spans[..., 1])
    return float(hit[real].mean())


def glimpses_on_digit(locations, offsets, digit_size, canvas_size):
    """Fraction of a Recurrent Attention Model's chosen glimpses centred on the digit.

    Args:
        locations: ``[B, n, 2]`` glimpse centres ``(y, x)`` in ``[-1, 1]`` (the first, fixed
            glimpse is left out: only ``l_1 … l_{n−1}`` are chosen by the policy).
        offsets: ``[B, 2]`` ``(top, left)`` of each digit, from `translate_digits`.
        digit_size: side of the digits in pixels.
        canvas_size: side of the canvas in pixels.

    Returns:
        A float in ``[0, 1]``; uniformly random locations give about
        ``(digit_size / canvas_size)²``.

    Example:

    >>> glimpses_on_digit(np.array([[[0.0, 0.0], [-0.5, -0.5]]]), np.array([[0, 0]]), 16, 32)
    1.0
    """
    locations = np.asarray(locations, "float32")
    centres = (np.asarray(offsets, "float32") + digit_size / 2.0) / (canvas_size / 2.0) - 1.0
    distance = np.abs(locations[:, 1:] - centres[:, None])  # in units of half the canvas
    return float(np.mean(np.all(distance < digit_size / canvas_size, axis=-1)))


def exact_match(tokens, targets):
    """Fraction of captions predicted exactly, up to and including ``END``.

    Args:
        tokens: int ``[B, S]`` predicted tokens (or ``[B, S, V]`` scores, argmax-ed). Steps past
            ``T`` are ignored; missing steps count as ``PAD`` (a mismatch where a target is
            expected).
        targets: int ``[B, T]`` targets, e.g. from `caption_arrays`; positions where
            ``targets == PAD`` are ignored.

    Returns:
        A float in ``[0, 1]``.

    Example:

    >>> targets = np.array([[5, 6, 2, 0], [4, 2, 0, 0]])
    >>> round(exact_match(np.array([[5, 6, 2, 9], [4, 7, 0, 0]]), targets), 2)
    0.5
    """
    where = "exact_match: "
    targets, _ = _check_captions(where, "targets", targets)
    tokens = np.asarray(tokens)
    if tokens.ndim == 3:
        tokens = tokens.argmax(axis=-1)
    if tokens.ndim != 2 or tokens.shape[0] != targets.shape[0]:
        raise ValueError(
            f"{where}`tokens` must have shape [B, S] (or [B, S, V] scores) with "
            f"B = {targets.shape[0]}; received shape {np.shape(tokens)}."
        )
    if len(targets) == 0:
        raise ValueError(f"{where}`targets` is empty.")
    steps = targets.shape[1]
    if tokens.shape[1] < steps:
        tokens = np.pad(tokens, ((0, 0), (0, steps - tokens.shape[1])), constant_values=PAD)
    correct = (tokens[:, :steps] == targets) | (targets == PAD)
    return float(correct.all(axis=1).mean())

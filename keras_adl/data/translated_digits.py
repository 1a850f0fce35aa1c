"""Translated and cluttered digits for the Recurrent Attention Model.

`translate_digits` places each digit at a random position of a larger blank canvas, with
optional clutter (crops of other digits), and `TranslatedDigits`, a `keras.utils.PyDataset`,
places the digits afresh every epoch. The images come from `keras_adl.data.image_sources`.

Every generator takes ``rng`` (a ``numpy.random.Generator``, an int seed or ``None``) and is
vectorised over the batch; the dataset derives its generator from ``(seed, epoch, index)``, so
a batch is reproducible and every epoch brings new placements. The figure of this task,
`glimpses_on_digit`, is in `keras_adl.recipes.vision.evaluate`.

References:
    Mnih, Heess, Graves, Kavukcuoglu (2014). Recurrent Models of Visual Attention.
    arXiv:1406.6247.
"""

import keras
import numpy as np

from keras_adl.data._checks import (
    as_generator,
    check_batches,
    check_images,
    check_int,
    check_positive_int,
    check_seed,
)


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
    images, labels = check_images(images, labels, where=where)
    check_positive_int("canvas_size", canvas_size, where=where)
    num_clutter = check_int("num_clutter", num_clutter, 0, where=where)
    n, h, w = images.shape
    if h > canvas_size or w > canvas_size:
        raise ValueError(
            f"{where}the images ({h}x{w}) must fit in the canvas; received "
            f"`canvas_size`={canvas_size}."
        )
    if num_clutter:
        check_positive_int("clutter_size", clutter_size, where=where)
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
    rng = as_generator(rng)
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
        canvas_size: as in `translate_digits`.
        num_clutter: as in `translate_digits`.
        clutter_size: as in `translate_digits`.
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
        self.images, self.labels, self.batch_size = check_batches(
            images, labels, batch_size, where=where
        )
        self.canvas_size = canvas_size
        self.num_clutter = num_clutter
        self.clutter_size = clutter_size
        self.seed = check_seed(seed, where=where)
        self.shuffle = shuffle
        self.epoch = 0
        # Validates the canvas and clutter arguments now rather than in the first batch.
        translate_digits(
            self.images[:2], self.labels[:2], canvas_size, num_clutter, clutter_size, rng=0
        )
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

"""Argument checks and the random generator shared by the data tasks (and their figures).

Each check follows `keras_adl.utils`' convention, ``(name, value, ...)`` then a keyword-only
``where=""`` last, and raises a ``ValueError`` (or ``TypeError``) whose message starts with
``where`` (the function or class, e.g. ``"digit_strips: "``) and names the argument, what was
expected and what was received.
"""

import os

import numpy as np

from keras_adl.utils import check_captions, check_positive_int, check_seed  # noqa: F401

__all__ = [
    "as_generator",
    "check_batches",
    "check_captions",
    "check_images",
    "check_int",
    "check_path",
    "check_positive_int",
    "check_range",
    "check_seed",
]


def as_generator(rng):
    """``rng`` if it is a ``numpy.random.Generator``, else a generator seeded with it (an int
    or ``None``)."""
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def check_int(name, value, low, high=None, *, where=""):
    """``value`` as an ``int`` in ``low..high`` (``high=None``: no upper bound); Python and
    numpy integers are accepted, ``bool`` is not."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, np.integer))
        or value < low
        or (high is not None and value > high)
    ):
        if high is not None:
            bounds = f"an integer in {low}..{high}"
        elif low == 0:
            bounds = "a non-negative integer"
        else:
            bounds = f"an integer >= {low}"
        raise ValueError(f"{where}`{name}` must be {bounds}; received {value!r}.")
    return int(value)


def check_range(name, value, minimum=1, *, where=""):
    """``value`` as ``(low, high)`` integers with ``minimum <= low <= high``."""
    ok = (
        isinstance(value, (tuple, list))
        and len(value) == 2
        and all(not isinstance(v, bool) and isinstance(v, (int, np.integer)) for v in value)
    )
    if not ok:
        raise ValueError(
            f"{where}`{name}` must be a pair (low, high) of integers; received {value!r}."
        )
    low, high = int(value[0]), int(value[1])
    if not minimum <= low <= high:
        raise ValueError(
            f"{where}`{name}` must satisfy {minimum} <= low <= high; received {value!r}."
        )
    return low, high


def check_path(name, path, *, where=""):
    """``path`` (a ``str`` or ``os.PathLike``) as a ``str``."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"{where}`{name}` must be a path (str or os.PathLike); received {type(path).__name__}."
        )
    return os.fspath(path)


def check_images(images, labels, *, where=""):
    """``images`` as float32 ``[N, h, w]`` (a trailing channel of 1 is dropped), ``labels``
    as int32 ``[N]``; at least one image."""
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


def check_batches(images, labels, batch_size, *, where=""):
    """Checked ``(images, labels, batch_size)`` of a dataset of fixed-size batches."""
    images, labels = check_images(images, labels, where=where)
    check_positive_int("batch_size", batch_size, where=where)
    if batch_size > len(images):
        raise ValueError(
            f"{where}`batch_size` must be at most the number of images {len(images)}; "
            f"received {batch_size}."
        )
    return images, labels, batch_size

"""Seeded train/test splits of any paired arrays: images and labels, documents and labels; and
the keyed hash that splits a stream, one example at a time."""

import hashlib

import numpy as np


def hash_bucket(text, key, buckets):
    """The bucket of ``text`` in ``[0, buckets)``: a keyed hash (BLAKE2b) of its UTF-8 bytes, the
    same in every run and for every copy, so a stream is split without a list of it.

    >>> hash_bucket("Été", b"split", 100) == hash_bucket("Été", b"split", 100)
    True
    """
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=8, key=key).digest()
    return int.from_bytes(digest, "little") % buckets


def split_dataset(images, labels, test_fraction=0.2, seed=0):
    """A seeded random split into training and test sets.

    Args:
        images: ``[N, ...]`` array, or a sequence of ``N`` examples (e.g. a list of documents,
            returned as a numpy array of strings).
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
    if (
        isinstance(test_fraction, bool)
        or not isinstance(test_fraction, (int, float))
        or not (0 < test_fraction < 1)
    ):
        raise ValueError(
            f"split_dataset: `test_fraction` must be a float in (0, 1); received {test_fraction!r}."
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

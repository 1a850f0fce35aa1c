"""Training data as one endless, deterministic stream of global batches that can start anywhere.

`batch_stream` turns what the recipes hand to ``fit`` (arrays, a ``tf.data.Dataset``, a
``keras.utils.PyDataset``) into ``stream(start)``: a ``tf.data.Dataset`` of the batches from
the ``start``-th on. Epoch ``e`` is batches ``e * steps … (e + 1) * steps - 1`` of it. A run
resumed from a checkpoint taken ``global_step`` batches in trains on ``stream(global_step)``, so
it sees exactly the batches an uninterrupted run would have seen next, rather than replaying
the first epoch's (the memory tasks' generators, reseeded at 0, used to do that).

Determinism: arrays are shuffled by ``tf.data`` with a fixed ``seed`` (a new order every epoch,
the same orders in every run); datasets and ``PyDataset``s are deterministic when they are
seeded (the library's are). Every worker of a multi-worker run builds the same stream; it is
marked for ``tf.data`` auto-sharding by data, so that each global batch is split across the
workers (worker ``i`` takes the ``i``-th slice of every global batch) and the workers together
train on exactly the single-process batches.
"""

import copy

import keras
import numpy as np
import tensorflow as tf

__all__ = ["batch_stream", "split_stream"]


def batch_stream(x, y=None, batch_size=None, steps_per_epoch=None, shuffle=False, seed=0):
    """``(steps_per_epoch, stream)`` of the training data ``fit`` would get.

    Args:
        x: arrays (or a dict of arrays), a ``tf.data.Dataset`` of batches, or a
            ``keras.utils.PyDataset``.
        y: targets when ``x`` holds arrays.
        batch_size: batch size for arrays (default 32).
        steps_per_epoch: batches per epoch; needed for an endless dataset, else the data's
            length (a dataset of unknown length is counted once, unless this is given).
        shuffle: shuffle arrays every epoch (datasets shuffle themselves).
        seed: the shuffle seed.

    Returns:
        ``steps_per_epoch`` and a function ``start -> tf.data.Dataset`` of batches from the
        ``start``-th, endless.

    Raises:
        ValueError: an endless dataset without ``steps_per_epoch``, or no batches at all.
    """
    if isinstance(x, tf.data.Dataset):
        cardinality = int(x.cardinality())
        if cardinality == tf.data.INFINITE_CARDINALITY and not steps_per_epoch:
            raise ValueError(
                "batch_stream: an endless dataset needs `steps_per_epoch`; received None."
            )
        if cardinality == tf.data.UNKNOWN_CARDINALITY and not steps_per_epoch:
            cardinality = int(x.reduce(np.int64(0), lambda count, _: count + 1))  # counted once
        # Endless already, or endless now: epochs are `steps_per_epoch` batches of one stream.
        base = x if cardinality == tf.data.INFINITE_CARDINALITY else x.repeat()
        steps_per_epoch = steps_per_epoch or cardinality

        def stream(start):
            return _shardable(base.skip(start))

    elif isinstance(x, keras.utils.PyDataset):
        pristine = copy.deepcopy(x)  # ``fit`` would advance the user's object between epochs
        steps_per_epoch = steps_per_epoch or len(x)

        def stream(start):
            return _shardable(_pydataset_stream(pristine, start))

    else:
        data = x if y is None else (x, y)
        count = len(tf.nest.flatten(data)[0])
        batch_size = batch_size or 32
        steps_per_epoch = steps_per_epoch or -(-count // batch_size)

        def stream(start):  # built afresh: a shuffle's seed generator is shared by iterators
            dataset = tf.data.Dataset.from_tensor_slices(data)
            if shuffle:
                dataset = dataset.shuffle(count, seed=seed, reshuffle_each_iteration=True)
            return _shardable(dataset.batch(batch_size).repeat().skip(start))

    if not steps_per_epoch:
        raise ValueError("batch_stream: the training data holds no batches.")
    return steps_per_epoch, stream


def split_stream(dataset):
    """``part(count)``: successive pieces of one pass over ``dataset``, each a
    ``tf.data.Dataset`` of its next ``count`` elements (``None``: all the rest).

    A seeded ``shuffle(..., reshuffle_each_iteration=True)`` draws each new iterator's order
    from a seed generator shared by every iterator of the dataset, so a second ``fit`` on the
    same stream would not continue the first one's sequence. The pieces share one iterator
    instead, so ``fit`` on ``part(n)`` then on ``part(None)`` sees exactly the batches one
    ``fit`` would have.
    """
    iterator = iter(dataset)

    def part(count=None):
        def generate():
            produced = 0
            while count is None or produced < count:
                try:
                    element = next(iterator)
                except StopIteration:
                    return
                yield element
                produced += 1

        return _shardable(
            tf.data.Dataset.from_generator(generate, output_signature=dataset.element_spec)
        )

    return part


def _shardable(dataset):
    options = tf.data.Options()
    options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
    return dataset.with_options(options).prefetch(tf.data.AUTOTUNE)


def _pydataset_stream(pristine, start):
    """The batches of a ``PyDataset`` from the ``start``-th on, endless: a fresh copy of it is
    advanced by ``on_epoch_end`` to the epoch of ``start`` (as ``fit`` would have)."""
    length = len(pristine)
    first = pristine[0]
    if isinstance(first, list):
        first = tuple(first)
    signature = tf.nest.map_structure(
        lambda a: tf.TensorSpec((None, *np.shape(a)[1:]), tf.as_dtype(np.asarray(a).dtype)),
        first,
    )

    def generate():
        data = copy.deepcopy(pristine)
        epoch, index = divmod(start, length)
        for _ in range(epoch):
            data.on_epoch_end()
        while True:
            batch = data[index]
            yield tuple(batch) if isinstance(batch, list) else batch
            index += 1
            if index == length:
                data.on_epoch_end()
                index = 0

    return tf.data.Dataset.from_generator(generate, output_signature=signature)

"""The algorithmic tasks of the Neural Turing Machine paper, as fixed-shape batches.

Every generator returns ``(inputs, targets, weights)`` numpy arrays:

- ``inputs [B, T, input_dim]`` (float32, 0/1 bits plus control channels),
- ``targets [B, T, output_dim]`` (float32 bits),
- ``weights [B, T]`` (float32), 1 on the steps where an answer is expected and 0 elsewhere.

``T`` depends only on the task's configured maximum sizes (each sequence is padded to the
longest the configuration allows), so every batch of one configuration has the same shape and
a compiled training step never retraces. Pass ``weights`` as ``sample_weight`` to ``fit``: the
loss and the metrics of `keras_adl.metrics` count the answer phase only.

Evaluate generalisation by generating with larger sizes than in training (e.g. copy lengths 30,
50, 100 after training on 1–20); the model is the same, only ``T`` changes.

References:
    Graves, Wayne, Danihelka (2014). Neural Turing Machines, section 4. arXiv:1410.5401.
"""

import numpy as np
import tensorflow as tf

from keras_adl.data._checks import as_generator
from keras_adl.utils import check_positive_int


def _check_range(low_name, low, high_name, high, *, where=""):
    check_positive_int(low_name, low, where=where)
    check_positive_int(high_name, high, where=where)
    if low > high:
        raise ValueError(f"{where}`{low_name}` ({low}) must be ≤ `{high_name}` ({high}).")


def _lengths(rng, batch_size, low, high):
    return rng.integers(low, high + 1, size=batch_size)


def copy_batch(batch_size, min_length=1, max_length=20, bits=8, seed=None):
    """The copy task: read a sequence of random bit vectors, then write it back.

    Layout of one example of length ``L`` (padded to ``T = 2·max_length + 1``):

    - steps ``0..L−1``: the bit vectors (channel ``bits`` is 0);
    - step ``L``: the delimiter (channel ``bits`` is 1, bits 0);
    - steps ``L+1..2L``: zero input; the targets are the ``L`` vectors, weight 1.

    Args:
        batch_size: number of sequences.
        min_length: the shortest ``L`` (``L`` is uniform over the inclusive range).
        max_length: the longest ``L``.
        bits: width of each vector.
        seed: int, ``None`` or a ``numpy.random.Generator``.

    Returns:
        ``inputs [B, T, bits + 1]``, ``targets [B, T, bits]``, ``weights [B, T]``.

    Example:

    >>> x, y, w = copy_batch(2, min_length=3, max_length=3, bits=4, seed=0)
    >>> x.shape, y.shape, w.shape, w[0].tolist()
    ((2, 7, 5), (2, 7, 4), (2, 7), [0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    >>> bool((y[:, 4:] == x[:, :3, :4]).all())
    True
    """
    where = "copy_batch: "
    check_positive_int("batch_size", batch_size, where=where)
    check_positive_int("bits", bits, where=where)
    _check_range("min_length", min_length, "max_length", max_length, where=where)
    rng = as_generator(seed)
    steps = 2 * max_length + 1
    lengths = _lengths(rng, batch_size, min_length, max_length)
    t = np.arange(steps)[None, :]
    L = lengths[:, None]
    vectors = rng.integers(0, 2, size=(batch_size, max_length, bits)).astype("float32")
    vectors *= (np.arange(max_length)[None, :] < L)[..., None]
    inputs = np.zeros((batch_size, steps, bits + 1), "float32")
    inputs[:, :max_length, :bits] = vectors
    inputs[:, :, bits] = t == L
    answer = (t > L) & (t <= 2 * L)
    # Target at step t (answer phase) is vector t − L − 1.
    source = np.clip(t - L - 1, 0, max_length - 1)
    targets = np.take_along_axis(
        vectors, np.broadcast_to(source, (batch_size, steps))[..., None], 1
    )
    targets = targets * answer[..., None]
    return inputs, targets.astype("float32"), answer.astype("float32")


def repeat_copy_batch(
    batch_size,
    min_length=1,
    max_length=10,
    min_repeats=1,
    max_repeats=10,
    bits=8,
    repeat_normalizer=10.0,
    seed=None,
):
    """The repeat-copy task: copy a sequence ``n`` times, then emit an end marker.

    Layout for length ``L`` and ``n`` repeats, padded to
    ``T = max_length + 2 + max_repeats·max_length``:

    - steps ``0..L−1``: the bit vectors;
    - step ``L``: the delimiter (channel ``bits``) and the repeat count
      ``n / repeat_normalizer`` on channel ``bits + 1``;
    - steps ``L+1..L+n·L``: targets are the sequence ``n`` times;
    - step ``L+n·L+1``: the end marker (target channel ``bits`` is 1).

    The weights cover the ``n·L + 1`` answer steps. A fixed normaliser (not the training range's
    statistics) keeps the channel's meaning when evaluating more repeats than in training.

    Args:
        batch_size: number of sequences.
        min_length: the shortest ``L``.
        max_length: the longest ``L``.
        min_repeats: the fewest repeats ``n``.
        max_repeats: the most repeats ``n``.
        bits: width of each vector.
        repeat_normalizer: divides ``n`` on the repeat channel.
        seed: int, ``None`` or a ``numpy.random.Generator``.

    Returns:
        ``inputs [B, T, bits + 2]``, ``targets [B, T, bits + 1]``, ``weights [B, T]``.

    Example:

    >>> x, y, w = repeat_copy_batch(1, 2, 2, 3, 3, bits=3, seed=0)
    >>> x.shape, y.shape, int(w.sum()), round(float(x[0, 2, 4]), 3)
    ((1, 10, 5), (1, 10, 4), 7, 0.3)
    >>> bool((y[0, 3:9, :3] == np.tile(x[0, :2, :3], (3, 1))).all()), y[0, 9].tolist()
    (True, [0.0, 0.0, 0.0, 1.0])
    """
    where = "repeat_copy_batch: "
    check_positive_int("batch_size", batch_size, where=where)
    check_positive_int("bits", bits, where=where)
    _check_range("min_length", min_length, "max_length", max_length, where=where)
    _check_range("min_repeats", min_repeats, "max_repeats", max_repeats, where=where)
    rng = as_generator(seed)
    steps = max_length + 2 + max_repeats * max_length
    inputs = np.zeros((batch_size, steps, bits + 2), "float32")
    targets = np.zeros((batch_size, steps, bits + 1), "float32")
    weights = np.zeros((batch_size, steps), "float32")
    lengths = _lengths(rng, batch_size, min_length, max_length)
    repeats = _lengths(rng, batch_size, min_repeats, max_repeats)
    for b in range(batch_size):
        L, n = int(lengths[b]), int(repeats[b])
        seq = rng.integers(0, 2, size=(L, bits)).astype("float32")
        inputs[b, :L, :bits] = seq
        inputs[b, L, bits] = 1.0
        inputs[b, L, bits + 1] = n / repeat_normalizer
        targets[b, L + 1 : L + 1 + n * L, :bits] = np.tile(seq, (n, 1))
        targets[b, L + 1 + n * L, bits] = 1.0
        weights[b, L + 1 : L + 2 + n * L] = 1.0
    return inputs, targets, weights


def associative_recall_batch(
    batch_size, min_items=2, max_items=6, item_length=3, bits=6, seed=None
):
    """Associative recall: after a list of items, given one item, return the next one.

    Each item is ``item_length`` bit vectors. Layout for ``k`` items, padded to
    ``T = (item_length + 1)·max_items + 2·item_length + 2``:

    - each item: a delimiter step (channel ``bits``) then its vectors;
    - the query: a query delimiter (channel ``bits + 1``), one of the first ``k − 1`` items,
      and a second query delimiter;
    - the answer phase: the item that followed the query, weight 1.

    Args:
        batch_size: number of sequences.
        min_items: the fewest items ``k`` (at least 2).
        max_items: the most items ``k``.
        item_length: vectors per item.
        bits: width of each vector.
        seed: int, ``None`` or a ``numpy.random.Generator``.

    Returns:
        ``inputs [B, T, bits + 2]``, ``targets [B, T, bits]``, ``weights [B, T]``.

    Example:

    >>> x, y, w = associative_recall_batch(1, 2, 2, item_length=1, bits=3, seed=0)
    >>> x.shape, int(w.sum())
    ((1, 8, 5), 1)
    """
    where = "associative_recall_batch: "
    check_positive_int("batch_size", batch_size, where=where)
    check_positive_int("bits", bits, where=where)
    check_positive_int("item_length", item_length, where=where)
    _check_range("min_items", min_items, "max_items", max_items, where=where)
    if min_items < 2:
        raise ValueError(
            f"{where}`min_items` must be ≥ 2 (a query needs a next item); received {min_items}."
        )
    rng = as_generator(seed)
    step = item_length + 1
    steps = step * max_items + 2 * item_length + 2
    inputs = np.zeros((batch_size, steps, bits + 2), "float32")
    targets = np.zeros((batch_size, steps, bits), "float32")
    weights = np.zeros((batch_size, steps), "float32")
    counts = _lengths(rng, batch_size, min_items, max_items)
    for b in range(batch_size):
        k = int(counts[b])
        items = rng.integers(0, 2, size=(k, item_length, bits)).astype("float32")
        for i in range(k):
            inputs[b, i * step, bits] = 1.0
            inputs[b, i * step + 1 : (i + 1) * step, :bits] = items[i]
        query = int(rng.integers(0, k - 1))
        t = k * step
        inputs[b, t, bits + 1] = 1.0
        inputs[b, t + 1 : t + 1 + item_length, :bits] = items[query]
        inputs[b, t + 1 + item_length, bits + 1] = 1.0
        answer = t + 2 + item_length
        targets[b, answer : answer + item_length] = items[query + 1]
        weights[b, answer : answer + item_length] = 1.0
    return inputs, targets, weights


def priority_sort_batch(batch_size, num_inputs=20, num_outputs=16, bits=8, seed=None):
    """Priority sort: vectors with scalar priorities in; the highest-priority ones out, sorted.

    Layout (``T = num_inputs + 1 + num_outputs``): steps ``0..num_inputs−1`` carry a vector and
    its priority (uniform in ``[−1, 1]``, channel ``bits``); step ``num_inputs`` is the
    delimiter (channel ``bits + 1``); then the ``num_outputs`` vectors of highest priority, in
    descending priority, are the targets (weight 1).

    Args:
        batch_size: number of sequences.
        num_inputs: vectors to read.
        num_outputs: vectors to write (≤ ``num_inputs``).
        bits: width of each vector.
        seed: int, ``None`` or a ``numpy.random.Generator``.

    Returns:
        ``inputs [B, T, bits + 2]``, ``targets [B, T, bits]``, ``weights [B, T]``.

    Example:

    >>> x, y, w = priority_sort_batch(1, num_inputs=3, num_outputs=2, bits=2, seed=0)
    >>> top = np.argsort(-x[0, :3, 2])[:2]
    >>> bool((y[0, 4:] == x[0, top, :2]).all()), w[0].tolist()
    (True, [0.0, 0.0, 0.0, 0.0, 1.0, 1.0])
    """
    where = "priority_sort_batch: "
    check_positive_int("batch_size", batch_size, where=where)
    check_positive_int("bits", bits, where=where)
    _check_range("num_outputs", num_outputs, "num_inputs", num_inputs, where=where)
    rng = as_generator(seed)
    steps = num_inputs + 1 + num_outputs
    vectors = rng.integers(0, 2, size=(batch_size, num_inputs, bits)).astype("float32")
    priorities = rng.uniform(-1.0, 1.0, size=(batch_size, num_inputs)).astype("float32")
    inputs = np.zeros((batch_size, steps, bits + 2), "float32")
    inputs[:, :num_inputs, :bits] = vectors
    inputs[:, :num_inputs, bits] = priorities
    inputs[:, num_inputs, bits + 1] = 1.0
    order = np.argsort(-priorities, axis=1)[:, :num_outputs]
    targets = np.zeros((batch_size, steps, bits), "float32")
    targets[:, num_inputs + 1 :] = np.take_along_axis(vectors, order[..., None], axis=1)
    weights = np.zeros((batch_size, steps), "float32")
    weights[:, num_inputs + 1 :] = 1.0
    return inputs, targets, weights


# The batch generator of each task name: ``GENERATORS[task](batch_size, ..., seed=...)``.
GENERATORS = {
    "copy": copy_batch,
    "repeat_copy": repeat_copy_batch,
    "associative_recall": associative_recall_batch,
    "priority_sort": priority_sort_batch,
}


def _task_fn(task):
    if task not in GENERATORS:
        raise ValueError(f"`task` must be one of {sorted(GENERATORS)}; received {task!r}.")
    return GENERATORS[task]


def task_dims(task, **task_kwargs):
    """``(input_dim, output_dim)`` of a task configuration.

    Args:
        task: ``"copy"``, ``"repeat_copy"``, ``"associative_recall"`` or ``"priority_sort"``.
        **task_kwargs: the task's size arguments (e.g. ``bits``).

    Returns:
        ``(input_dim, output_dim)``: the sizes of an input and of a target vector.

    Example:

    >>> task_dims("copy", bits=8)
    (9, 8)
    """
    inputs, targets, _ = _task_fn(task)(1, seed=0, **task_kwargs)
    return inputs.shape[-1], targets.shape[-1]


def task_dataset(task, batch_size, seed=0, **task_kwargs):
    """An endless ``tf.data.Dataset`` of fresh ``(inputs, targets, weights)`` batches.

    Batches are generated by a seeded numpy generator, so a run is reproducible; all have the
    same static shape, so ``fit`` with a compiled step never retraces. Use ``steps_per_epoch``.

    Args:
        task: ``"copy"``, ``"repeat_copy"``, ``"associative_recall"`` or ``"priority_sort"``.
        batch_size: sequences per batch.
        seed: seed of the generator.
        **task_kwargs: the task's size arguments (e.g. ``min_length``, ``max_length``).

    Returns:
        A ``tf.data.Dataset``.

    Example:

    >>> ds = task_dataset("copy", 4, max_length=5)
    >>> [tuple(t.shape) for t in next(iter(ds))]
    [(4, 11, 9), (4, 11, 8), (4, 11)]
    """
    fn = _task_fn(task)
    check_positive_int("batch_size", batch_size, where="task_dataset: ")
    inputs, targets, weights = fn(batch_size, seed=0, **task_kwargs)

    def generate():
        rng = np.random.default_rng(seed)
        while True:
            yield fn(batch_size, seed=rng, **task_kwargs)

    signature = tuple(tf.TensorSpec(a.shape, tf.float32) for a in (inputs, targets, weights))
    return tf.data.Dataset.from_generator(generate, output_signature=signature).prefetch(2)

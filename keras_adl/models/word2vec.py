"""word2vec (Mikolov et al. 2013): skip-gram or CBOW with negative sampling, and its vectors.

The model reads the batches of `keras_adl.data.skipgrams.skipgram_dataset`: a centre word
(skip-gram) or the words of its window (CBOW) is scored against its true context word or
centre and ``k`` negatives by the dot product of an input and an output embedding, trained
with the sigmoid (logistic) loss. As in word2vec.c, the input table starts uniform in
``±0.5 / dim`` and the output table at zero; the word vectors are the rows of the input table.
"""

import keras
import numpy as np
from keras import ops

__all__ = ["skipgram_negative_sampling", "word_vectors", "word2vec_optimizer"]


INPUT_TABLE = "input_embedding"
OUTPUT_TABLE = "output_embedding"


def repeated_row_scale(ids, vocab_size, max_updates):
    """The factor of each id's gradient that caps a table row's update per batch.

    Batched SGD sums the gradients of every occurrence of a row in the batch; word2vec.c
    applies them one after another, so a row's step never compounds from one stale point. A
    row read ``n`` times has its occurrences' gradients scaled by ``min(1, max_updates / n)``:
    it moves at most as far as ``max_updates`` occurrences would move it, whatever the
    vocabulary size (with 58 words every row is read hundreds of times per batch).

    Args:
        ids: int ``[...]``, the rows read.
        vocab_size: the table's rows.
        max_updates: the cap ``m`` (positive).

    Returns:
        float ``[...]`` factors in ``(0, 1]``.

    Example:

    >>> ops.convert_to_numpy(repeated_row_scale(ops.array([3, 3, 3, 3, 5]), 8, 2)).tolist()
    [0.5, 0.5, 0.5, 0.5, 1.0]
    """
    flat = ops.reshape(ids, (-1,))
    counts = ops.segment_sum(ops.ones_like(flat), flat, num_segments=vocab_size)
    occurrences = ops.cast(ops.take(counts, ids, axis=0), "float32")
    return ops.minimum(1.0, float(max_updates) / ops.maximum(occurrences, 1.0))


def _scale_gradient(values, factors):
    """``values`` unchanged forward; their gradient times ``factors`` (broadcast on the last
    axis)."""
    factors = ops.cast(ops.expand_dims(factors, -1), values.dtype)
    return values * factors + ops.stop_gradient(values * (1.0 - factors))


def skipgram_negative_sampling(
    vocab_size, dim=100, negatives=5, window=5, cbow=False, max_row_updates=None, name=None
):
    """A word2vec model scoring ``1 + negatives`` candidates per example (logits).

    Args:
        vocab_size: ids in use, specials included (`WordVocabulary.size`).
        dim: vector size.
        negatives: ``k``.
        window: ``W`` (CBOW: the context input holds ``2W`` ids, 0-padded).
        cbow: continuous bag of words instead of skip-gram.
        max_row_updates: cap on how far one batch moves a table row, in occurrences
            (`repeated_row_scale`); ``None``: no cap (each occurrence adds its gradient).
        name: the model's name (default ``"skipgram"`` or ``"cbow"``).

    Returns:
        A ``keras.Model``. Skip-gram inputs: ``centre`` int ``[B]``, ``contexts`` int
        ``[B, 1 + k]``; CBOW inputs: ``contexts`` int ``[B, 2W]`` (0: none), ``targets`` int
        ``[B, 1 + k]``. Output: logits ``[B, 1 + k]`` (the first candidate is the positive);
        train with ``BinaryCrossentropy(from_logits=True)``.

    Example:

    >>> model = skipgram_negative_sampling(50, dim=8, negatives=2)
    >>> logits = model({"centre": ops.array([4, 5]), "contexts": ops.array([[6, 7, 8], [9, 4, 5]])})
    >>> tuple(logits.shape)
    (2, 3)
    """
    for argument, value in (("vocab_size", vocab_size), ("dim", dim), ("negatives", negatives)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"`{argument}` must be a positive integer; received {value!r}.")
    if vocab_size < 2:
        raise ValueError(f"`vocab_size` must be at least 2; received {vocab_size}.")
    if max_row_updates is not None and not (
        isinstance(max_row_updates, (int, float)) and max_row_updates > 0
    ):
        raise ValueError(
            f"`max_row_updates` must be a positive number or None; received {max_row_updates!r}."
        )

    def capped(table_output, ids):
        if max_row_updates is None:
            return table_output
        return _scale_gradient(table_output, repeated_row_scale(ids, vocab_size, max_row_updates))

    bound = 0.5 / dim
    input_table = keras.layers.Embedding(
        vocab_size,
        dim,
        embeddings_initializer=keras.initializers.RandomUniform(-bound, bound, seed=0),
        name=INPUT_TABLE,
    )
    output_table = keras.layers.Embedding(
        vocab_size, dim, embeddings_initializer="zeros", name=OUTPUT_TABLE
    )
    candidates_count = negatives + 1
    if cbow:
        contexts = keras.Input((2 * window,), dtype="int32", name="contexts")
        candidates = keras.Input((candidates_count,), dtype="int32", name="targets")
        vectors = capped(input_table(contexts), contexts)  # [B, 2W, D]
        present = ops.cast(ops.expand_dims(ops.greater(contexts, 0), -1), vectors.dtype)
        count = ops.maximum(ops.sum(present, axis=1), 1.0)
        hidden = ops.sum(vectors * present, axis=1) / count  # the window's mean, [B, D]
        inputs = {"contexts": contexts, "targets": candidates}
    else:
        centre = keras.Input((), dtype="int32", name="centre")
        candidates = keras.Input((candidates_count,), dtype="int32", name="contexts")
        hidden = capped(input_table(centre), centre)  # [B, D]
        inputs = {"centre": centre, "contexts": candidates}
    logits = ops.einsum("bd,bkd->bk", hidden, capped(output_table(candidates), candidates))
    return keras.Model(inputs, logits, name=name or ("cbow" if cbow else "skipgram"))


def word_vectors(model, normalize=True):
    """The word vectors of a `skipgram_negative_sampling` model: its input table ``[V, D]``
    (numpy), each row scaled to unit length (with an epsilon, so the unused special rows stay
    finite) unless ``normalize`` is false.

    Args:
        model: a `skipgram_negative_sampling` model (skip-gram or CBOW).
        normalize: scale each row to unit length.

    Returns:
        A float32 numpy array ``[V, D]``, row ``i`` the vector of word id ``i``.

    Example:

    >>> model = skipgram_negative_sampling(10, dim=4)
    >>> vectors = word_vectors(model)
    >>> vectors.shape, np.round(np.linalg.norm(vectors, axis=1), 3).tolist()[:3]
    ((10, 4), [1.0, 1.0, 1.0])
    >>> bool(word_vectors(model, normalize=False).max() <= 0.5 / 4)  # word2vec.c: ±0.5 / dim
    True
    """
    table = keras.ops.convert_to_numpy(model.get_layer(INPUT_TABLE).embeddings)
    if not normalize:
        return table
    return table / (np.linalg.norm(table, axis=1, keepdims=True) + 1e-8)


def word2vec_optimizer(
    name="sgd", learning_rate=0.025, examples_per_step=1, total_steps=None, final_fraction=1e-4
):
    """The optimizer of a `skipgram_negative_sampling` model.

    ``"sgd"`` is word2vec.c's: plain SGD, each logit's gradient scaled by ``learning_rate``
    (the C code's alpha), decaying linearly to ``final_fraction`` of it over ``total_steps``.
    The model's loss is the mean over the ``examples_per_step`` logits of a batch (batch size
    times ``1 + negatives``), so the step is ``learning_rate * examples_per_step``. The
    embedding gradients stay sparse (``IndexedSlices``): a step moves only the rows it read,
    whatever the vocabulary size.

    ``"adam"``: Adam at ``learning_rate`` (per batch), constant; its moments are dense, so each
    step costs time in proportion to the vocabulary.

    Args:
        name: ``"sgd"`` or ``"adam"``.
        learning_rate: SGD's per-example alpha, or Adam's learning rate.
        examples_per_step: logits per batch (SGD only).
        total_steps: steps of the whole run for SGD's decay (``None``: constant).
        final_fraction: SGD's last learning rate as a fraction of the first.

    Returns:
        A ``keras.optimizers.Optimizer``.

    Example:

    >>> optimizer = word2vec_optimizer("sgd", 0.025, examples_per_step=4096 * 6, total_steps=100)
    >>> round(float(optimizer.learning_rate), 1)  # before the first step: alpha times 24576
    614.4
    """
    if name not in ("sgd", "adam"):
        raise ValueError(f"`name` must be 'sgd' or 'adam'; received {name!r}.")
    if not learning_rate > 0:
        raise ValueError(f"`learning_rate` must be positive; received {learning_rate!r}.")
    if name == "adam":
        return keras.optimizers.Adam(learning_rate)
    step = learning_rate * examples_per_step
    if total_steps:
        step = keras.optimizers.schedules.PolynomialDecay(
            step, decay_steps=total_steps, end_learning_rate=step * final_fraction
        )
    return keras.optimizers.SGD(step)

"""word2vec training examples: skip-gram (and CBOW) pairs with negatives, drawn in ``tf.data``.

What the word2vec C code (Mikolov et al. 2013, ``word2vec.c``) does, vectorised over a chunk
of tokens at a time (no Python loop per token):

- **Vocabulary**: words seen at least ``min_count`` times, with their real counts
  (`WordVocabulary`); other words are removed from the text before windows are taken, as in
  the C code.
- **Subsampling** of frequent words (`keep_probabilities`): a word of corpus frequency ``f`` is
  kept with probability ``min(1, sqrt(t / f) + t / f)`` — the C code's formula (the paper's
  ``1 - sqrt(t / f)`` is the discard probability of an earlier version). Discarded words are
  removed before windows are taken, so windows reach further, as in the C code.
- **Dynamic window**: each centre word draws its window size uniformly in ``[1, W]``; its
  contexts are the words at most that far away **in the same document** (windows never cross
  a document boundary).
- **Negatives** (`sample_negatives`): ``k`` per positive from the unigram distribution raised
  to 0.75, drawn exactly from that distribution **with the positive context removed** (an
  alias-method draw, and the few draws equal to the context drawn again from the distribution
  without it), so a negative never equals its positive context — the bug of the TensorFlow
  tutorial's sampler.

Ids follow `keras_adl.conventions`: 0-3 are the specials (unused here), words start at 4.
"""

import collections

import numpy as np
import tensorflow as tf

from keras_adl.conventions import NUM_SPECIAL_TOKENS

__all__ = ["WordVocabulary", "skipgram_dataset", "skipgram_stream"]


DEFAULT_SUBSAMPLE = 1e-4  # t
DEFAULT_POWER = 0.75


class WordVocabulary:
    """Words and their corpus counts, most frequent first: word ``i`` has id
    ``i + NUM_SPECIAL_TOKENS``.

    Args:
        words: a list of str.
        counts: their counts in the training corpus (positive integers).

    Example:

    >>> vocab = WordVocabulary.build([["the", "cat"], ["the", "dog", "the"]], min_count=1)
    >>> vocab.words, vocab.counts.tolist(), vocab.id("cat"), vocab.id("emu")
    (['the', 'cat', 'dog'], [3, 1, 1], 5, None)
    """

    def __init__(self, words, counts):
        self.words = list(words)
        self.counts = np.asarray(counts, dtype="int64")
        if len(self.words) != len(self.counts):
            raise ValueError(
                f"WordVocabulary: `words` and `counts` must have one length; received "
                f"{len(self.words)} and {len(self.counts)}."
            )
        if len(self.words) < 2:
            raise ValueError(
                f"WordVocabulary: word2vec needs at least 2 words (a negative must differ from "
                f"the context); received {len(self.words)}."
            )
        if (self.counts <= 0).any():
            raise ValueError("WordVocabulary: every count must be positive.")
        self._ids = {w: i + NUM_SPECIAL_TOKENS for i, w in enumerate(self.words)}

    @classmethod
    def build(cls, documents, min_count=5, max_size=None):
        """Counts the words of ``documents`` (lists of word strings) and keeps those seen at
        least ``min_count`` times, most frequent first (ties by word), at most ``max_size``."""
        counter = collections.Counter()
        for document in documents:
            counter.update(document)
        return cls.from_counts(counter, min_count, max_size)

    @classmethod
    def from_counts(cls, counts, min_count=5, max_size=None):
        """The words of ``counts`` (a mapping of word to count) seen at least ``min_count``
        times, most frequent first (ties by word), at most ``max_size``."""
        kept = sorted(
            (w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w)
        )
        kept = kept[:max_size] if max_size else kept
        return cls(kept, [counts[w] for w in kept])

    @property
    def size(self):
        """Ids in use, specials included (an ``Embedding``'s ``input_dim``)."""
        return len(self.words) + NUM_SPECIAL_TOKENS

    def id(self, word):
        """The id of ``word``, or ``None`` if it is not in the vocabulary."""
        return self._ids.get(word)

    def encode(self, document):
        """The ids of a document's in-vocabulary words (others are dropped, as in the C code)."""
        return [self._ids[w] for w in document if w in self._ids]

    def to_config(self):
        return {"words": self.words, "counts": self.counts.tolist()}

    @classmethod
    def from_config(cls, config):
        return cls(config["words"], config["counts"])


def keep_probabilities(counts, t=DEFAULT_SUBSAMPLE):
    """``min(1, sqrt(t / f) + t / f)`` per word, ``f`` its corpus frequency (word2vec.c).

    Args:
        counts: ``[V]`` word counts.
        t: the subsampling threshold; ``0`` keeps every word.

    Returns:
        float64 ``[V]`` keep probabilities.

    Example:

    >>> keep_probabilities([1000, 10, 1], t=1e-3).round(3).tolist()  # f ≈ 0.99, 0.0099, 0.001
    [0.033, 0.419, 1.0]
    """
    counts = np.asarray(counts, dtype="float64")
    if t < 0:
        raise ValueError(f"`t` must be >= 0; received {t}.")
    if t == 0:
        return np.ones_like(counts)
    ratio = t / (counts / counts.sum())
    return np.minimum(1.0, np.sqrt(ratio) + ratio)


def negative_distribution(counts, power=DEFAULT_POWER):
    """The negative-sampling distribution: counts raised to ``power``, normalised (``[V]``)."""
    weights = np.asarray(counts, dtype="float64") ** power
    return weights / weights.sum()


def alias_table(probabilities):
    """Walker's alias table of a distribution (Vose's construction), for O(1) exact draws.

    Word ``i`` of ``V`` is drawn by taking a uniform ``u`` on ``[0, V)``: the cell
    ``j = floor(u)`` gives ``j`` itself when ``u - j < accept[j]`` and ``alias[j]`` otherwise.

    Args:
        probabilities: ``[V]`` a distribution (non-negative, summing to 1).

    Returns:
        ``(accept, alias)``: float64 ``[V]`` and int32 ``[V]``.

    Example:

    >>> accept, alias = alias_table([0.5, 0.25, 0.25])
    >>> accept.tolist(), alias.tolist()
    ([1.0, 0.75, 0.75], [0, 0, 0])
    """
    scaled = np.asarray(probabilities, dtype="float64") * len(probabilities)
    accept = np.ones(len(scaled))
    alias = np.arange(len(scaled), dtype="int32")
    small = [i for i, x in enumerate(scaled) if x < 1.0]
    large = [i for i, x in enumerate(scaled) if x >= 1.0]
    while small and large:
        lo, hi = small.pop(), large.pop()
        accept[lo], alias[lo] = scaled[lo], hi
        scaled[hi] -= 1.0 - scaled[lo]
        (small if scaled[hi] < 1.0 else large).append(hi)
    return accept, alias  # cells left over hold (up to rounding) probability 1: accept = 1


def sample_negatives(contexts, k, probabilities, seed, table=None):
    """``k`` negatives per positive, drawn from ``probabilities`` with the positive removed.

    Exact and loop-free, in two steps:

    1. every negative is drawn from ``p`` with Walker's alias method (`alias_table`: one
       uniform, two gathers per draw);
    2. the few draws equal to their context ``c`` (a fraction ``p(c)``) are drawn again from
       ``p`` conditioned on ``≠ c``: a uniform on ``[0, 1 - p(c))`` is moved past the
       context's interval ``[F(c-1), F(c))`` of the cumulative distribution ``F`` and then
       looked up in it.

    A negative is then ``w ≠ c`` with probability ``p(w) + p(c) p(w) / (1 - p(c)) =
    p(w) / (1 - p(c))``: exactly ``p`` conditioned on ``≠ c``, and never ``c``.

    Args:
        contexts: int ``[B]`` positive context ids (vocabulary ids, from
            `NUM_SPECIAL_TOKENS`).
        k: negatives per positive.
        probabilities: ``[V]`` the distribution over words (`negative_distribution`).
        seed: a stateless seed, int ``[2]``.
        table: ``alias_table(probabilities)``, when already built (a function traced by
            ``tf.data`` builds it once, outside).

    Returns:
        int32 ``[B, k]`` negative ids, never equal to their row's context.
    """
    accept, alias = table if table is not None else alias_table(probabilities)
    size = len(accept)
    seeds = tf.random.experimental.stateless_split(tf.cast(seed, tf.int64), 2)
    index = tf.cast(contexts, tf.int32) - NUM_SPECIAL_TOKENS
    u = tf.random.stateless_uniform([tf.shape(index)[0], k], seeds[0], dtype=tf.float64) * size
    cell = tf.minimum(tf.cast(u, tf.int32), size - 1)
    drawn = tf.where(
        u - tf.cast(cell, tf.float64) < tf.gather(tf.constant(accept), cell),
        cell,
        tf.gather(tf.constant(alias), cell),
    )
    clashes = tf.where(drawn == index[:, None])  # [M, 2] (row, slot)
    redrawn = _draw_except(tf.gather(index, clashes[:, 0]), probabilities, seeds[1])
    drawn = tf.tensor_scatter_nd_update(drawn, clashes, redrawn)
    return drawn + NUM_SPECIAL_TOKENS


def _draw_except(index, probabilities, seed):
    """One draw per entry of ``index`` (0-based word indices) from ``probabilities``
    conditioned on differing from that entry (int32 ``[M]``)."""
    probabilities = tf.constant(probabilities, tf.float64)
    cdf = tf.cumsum(probabilities)
    p_context = tf.gather(probabilities, index)
    below = tf.gather(cdf, index) - p_context
    x = tf.random.stateless_uniform(tf.shape(index), seed, dtype=tf.float64) * (1.0 - p_context)
    x = tf.where(x >= below, x + p_context, x)
    drawn = tf.minimum(tf.searchsorted(cdf, x, side="right"), tf.size(cdf) - 1)
    # Guard the float edge: a draw landing on the context's own interval after rounding.
    drawn = tf.where(drawn == index, (drawn + 1) % tf.size(cdf), drawn)
    return tf.cast(drawn, tf.int32)


def window_pairs(ids, documents, window, keep, seed):
    """Skip-gram positives of one chunk of text: subsampling, dynamic window, document
    boundaries.

    Args:
        ids: int ``[N]`` word ids of consecutive documents.
        documents: int ``[N]`` the document of each position (windows never cross one).
        window: ``W``, the largest window.
        keep: ``[V]`` keep probabilities (`keep_probabilities`).
        seed: a stateless seed, int ``[2]``.

    Returns:
        ``(centres, contexts)``, int32 ``[P]`` each, and ``context_grid``: int32 ``[M, 2W]``
        the context ids of each kept centre (0 where there is none) with ``grid_centres``
        ``[M]``, for CBOW.
    """
    ids = tf.cast(ids, tf.int32)
    documents = tf.cast(documents, tf.int32)
    seeds = tf.random.experimental.stateless_split(seed, 2)
    keep_p = tf.gather(tf.constant(keep, tf.float32), ids - NUM_SPECIAL_TOKENS)
    kept = tf.random.stateless_uniform(tf.shape(ids), seeds[0]) < keep_p
    ids, documents = ids[kept], documents[kept]
    n = tf.shape(ids)[0]
    spans = tf.random.stateless_uniform([n], seeds[1], minval=1, maxval=window + 1, dtype=tf.int32)
    offsets = tf.constant([o for o in range(-window, window + 1) if o != 0], tf.int32)
    positions = tf.range(n)[:, None] + offsets[None, :]  # [n, 2W]
    inside = (positions >= 0) & (positions < n)
    safe = tf.clip_by_value(positions, 0, tf.maximum(n - 1, 0))
    valid = (
        inside
        & (tf.abs(offsets)[None, :] <= spans[:, None])
        & (tf.gather(documents, safe) == documents[:, None])
    )
    context_grid = tf.where(valid, tf.gather(ids, safe), 0)
    centres = tf.broadcast_to(ids[:, None], tf.shape(valid))[valid]
    contexts = context_grid[valid]
    return centres, contexts, context_grid, ids


def skipgram_dataset(
    documents,
    vocabulary,
    batch_size,
    window=5,
    negatives=5,
    t=DEFAULT_SUBSAMPLE,
    chunk_tokens=20000,
    seed=0,
    cbow=False,
):
    """An endless ``tf.data.Dataset`` of word2vec batches, fixed shapes.

    Each pass over the documents draws new subsampling, windows, negatives and order (seeded:
    the same arguments give the same batches).

    Args:
        documents: lists of word strings (sentences or documents: windows stay inside one).
        vocabulary: a `WordVocabulary` (built on these documents or others).
        batch_size: positives per batch.
        window: ``W``, the largest window (each centre draws its own in ``[1, W]``).
        negatives: ``k`` per positive.
        t: the subsampling threshold (``0``: none).
        chunk_tokens: tokens drawn from at once (bigger is faster; the windows across two
            chunks are lost, so it should be much longer than a window).
        seed: the seed of every random draw.
        cbow: yield CBOW batches instead (below).

    Returns:
        Skip-gram: ``({"centre": [B], "contexts": [B, 1 + k]}, labels [B, 1 + k])``, the
        first context the positive (label 1), the others negatives (label 0).
        CBOW: ``({"contexts": [B, 2W] (0-padded), "targets": [B, 1 + k]}, labels)``: the
        centre word is the positive target.
    """
    _check_sizes(window, negatives, batch_size)
    ids, document_ids = _encoded_tokens(documents, vocabulary)
    # Chunks of chunk_tokens consecutive tokens (a long document is cut: only the windows
    # across a cut are lost).
    bounds = np.append(np.arange(0, len(ids), chunk_tokens), len(ids)).astype("int64")
    all_ids = tf.constant(np.asarray(ids, dtype="int32"))
    all_documents = tf.constant(np.asarray(document_ids, dtype="int32"))
    chunks = tf.data.Dataset.from_tensor_slices((bounds[:-1], bounds[1:])).repeat()
    chunks = chunks.map(lambda start, end: (all_ids[start:end], all_documents[start:end]))
    return _batches(chunks, vocabulary, batch_size, window, negatives, t, seed, cbow)


def skipgram_stream(
    stream,
    vocabulary,
    batch_size,
    window=5,
    negatives=5,
    t=DEFAULT_SUBSAMPLE,
    seed=0,
    cbow=False,
):
    """`skipgram_dataset`'s endless batches drawn from a corpus streamed from disk, one run
    of words at a time (the corpus is never in memory; windows stop at a run's end as at a
    document's).

    Args:
        stream: a `keras_adl.data.text_streams.TextStream` (tokenized on every pass) or the
            `keras_adl.data.text_streams.EncodedCorpus` its counting pass wrote (read as
            numbers), read again on every pass.
        vocabulary: a `WordVocabulary` (words outside it are dropped, as in the C code).
        batch_size: positives per batch.
        window: ``W``, the largest window.
        negatives: ``k`` per positive.
        t: the subsampling threshold (``0``: none).
        seed: the seed of every random draw.
        cbow: yield CBOW batches instead.

    Returns:
        `skipgram_dataset`'s batches.
    """
    _check_sizes(window, negatives, batch_size)
    chunks = stream.chunks(vocabulary.words, NUM_SPECIAL_TOKENS).repeat()
    return _batches(chunks, vocabulary, batch_size, window, negatives, t, seed, cbow)


def _check_sizes(window, negatives, batch_size):
    if window < 1 or negatives < 1 or batch_size < 1:
        raise ValueError(
            f"`window`, `negatives` and `batch_size` must be positive; received {window}, "
            f"{negatives} and {batch_size}."
        )


def _batches(chunks, vocabulary, batch_size, window, negatives, t, seed, cbow):
    """The fixed-size batches of the examples of ``chunks``, a dataset of ``(ids,
    documents)`` runs of tokens."""
    examples = _chunk_examples(vocabulary, window, negatives, t, seed, cbow)
    # Each chunk gives all its examples at once; rebatch cuts them into fixed-size batches,
    # carrying a chunk's remainder over to the next (a chunk may give less than a batch).
    dataset = chunks.enumerate().map(
        lambda step, chunk: examples(step, *chunk), num_parallel_calls=2
    )
    dataset = dataset.rebatch(batch_size, drop_remainder=True)
    labels = tf.constant([[1.0] + [0.0] * negatives])
    return dataset.map(
        lambda x: (x, tf.broadcast_to(labels, [batch_size, negatives + 1]))
    ).prefetch(tf.data.AUTOTUNE)


def _encoded_tokens(documents, vocabulary):
    """``(ids, document_ids)``: the vocabulary ids of every document's words, one list, and
    the number of the document each comes from."""
    ids, document_ids = [], []
    for number, document in enumerate(documents):
        encoded = vocabulary.encode(document)
        ids.extend(encoded)
        document_ids.extend([number] * len(encoded))
    if not ids:
        raise ValueError("skipgram_dataset: no document holds a word of the vocabulary.")
    if len(ids) == len(set(document_ids)):
        raise ValueError(
            "skipgram_dataset: no document holds two words of the vocabulary, so there is no "
            "window to draw pairs from."
        )
    return ids, document_ids


def _chunk_examples(vocabulary, window, negatives, t, seed, cbow):
    """``examples(step, ids, documents)``: the shuffled skip-gram (or CBOW) examples of one
    run of tokens, drawn with seeds derived from ``(seed, step)``."""
    keep = keep_probabilities(vocabulary.counts, t)
    probabilities = negative_distribution(vocabulary.counts)
    table = alias_table(probabilities)  # here, not in the traced function (a Python loop)

    def examples(step, ids, documents):
        seeds = tf.random.experimental.stateless_split(
            tf.stack([tf.constant(seed, tf.int64), step]), 3
        )
        centres, contexts, grid, grid_centres = window_pairs(ids, documents, window, keep, seeds[0])
        if cbow:
            has_context = tf.reduce_any(grid > 0, axis=1)
            grid, targets = grid[has_context], grid_centres[has_context]
            order = tf.random.experimental.stateless_shuffle(
                tf.range(tf.shape(targets)[0]), seeds[1]
            )
            grid, targets = tf.gather(grid, order), tf.gather(targets, order)
            drawn = sample_negatives(targets, negatives, probabilities, seeds[2], table)
            return {"contexts": grid, "targets": tf.concat([targets[:, None], drawn], 1)}
        order = tf.random.experimental.stateless_shuffle(tf.range(tf.shape(centres)[0]), seeds[1])
        centres, contexts = tf.gather(centres, order), tf.gather(contexts, order)
        drawn = sample_negatives(contexts, negatives, probabilities, seeds[2], table)
        return {"centre": centres, "contexts": tf.concat([contexts[:, None], drawn], 1)}

    return examples

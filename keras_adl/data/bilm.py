"""Language-model data for ELMo's biLM: windows of words from a plain-text corpus, as
character ids in and next/previous word ids out, with fixed shapes.

The corpus is that of the word2vec family (`keras_adl.data.text_corpora`: the user's text,
GCIDE, WordNet glosses), tokenized the same way (`plain_words`). A document is cut into
consecutive windows of at most ``max_words`` words (windows never cross documents); held-out
windows come from held-out documents (`split_documents`), so the held-out perplexity is that of
unseen text. The inputs are characters, so every input word has a representation; the outputs
are ids of a closed vocabulary (`keras_adl.data.skipgrams.WordVocabulary`, ``<unk>`` for the
rest), the same ids the unigram baseline (`unigram_perplexity`) predicts.
"""

import numpy as np
import tensorflow as tf

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.data._checks import check_int, check_seed
from keras_adl.text.characters import character_ids
from keras_adl.text.vocabulary import lookup_table

__all__ = [
    "bilm_dataset",
    "block_windows",
    "counts_perplexity",
    "unigram_perplexity",
    "window_batches",
]


MIN_WINDOW = 2  # a window needs a word to predict in each direction


def split_documents(documents, held_out_fraction, seed=0):
    """``(train, held_out)`` lists of documents, a seeded random split (each side keeps at
    least one document)."""
    if not 0 < held_out_fraction < 1:
        raise ValueError(f"`held_out_fraction` must be in (0, 1); received {held_out_fraction!r}.")
    if len(documents) < 2:
        raise ValueError(f"need at least 2 documents to hold some out; received {len(documents)}.")
    order = np.random.default_rng(seed).permutation(len(documents))
    count = min(max(1, int(round(len(documents) * held_out_fraction))), len(documents) - 1)
    held = set(order[:count].tolist())
    train = [d for i, d in enumerate(documents) if i not in held]
    return train, [documents[i] for i in sorted(held)]


def word_windows(tokenized, max_words):
    """Consecutive windows of at most ``max_words`` words of each tokenized document (lists of
    str); windows shorter than 2 words are left out.

    Args:
        tokenized: a list of documents, each a list of str.
        max_words: the longest window.

    Returns:
        A list of windows, each a list of str.

    Example:

    >>> word_windows([["a", "b", "c", "d", "e"], ["f"]], 2)
    [['a', 'b'], ['c', 'd']]
    """
    check_int("max_words", max_words, MIN_WINDOW, where="word_windows: ")
    return [
        words[i : i + max_words]
        for words in tokenized
        for i in range(0, len(words), max_words)
        if len(words[i : i + max_words]) >= MIN_WINDOW
    ]


def padded(windows, max_words):
    """The windows as a ``[N, max_words]`` array of str, padded with ``""``."""
    out = np.full((len(windows), max_words), "", dtype=object)
    for row, words in enumerate(windows):
        out[row, : len(words)] = words[:max_words]
    return out


def window_ids(windows, vocabulary, max_words):
    """``[N, max_words]`` int32 word ids (``<unk>`` outside ``vocabulary``, 0 for padding)."""
    ids = np.full((len(windows), max_words), PAD, "int32")
    for row, words in enumerate(windows):
        ids[row, : len(words[:max_words])] = [vocabulary.id(w) or UNK for w in words[:max_words]]
    return ids


def lm_targets(ids):
    """``(forward, backward)`` targets of word ids ``[..., T]``: the next word and the previous
    word of each position, 0 where there is none (the first and last words, and padding)."""
    ids = np.asarray(ids)
    forward = np.zeros_like(ids)
    backward = np.zeros_like(ids)
    forward[..., :-1] = ids[..., 1:]
    backward[..., 1:] = ids[..., :-1]
    backward[ids == PAD] = PAD
    return forward, backward


def unigram_perplexity(train_ids, held_out_ids):
    """The held-out perplexity of a unigram model of the training targets (add-one smoothed
    over the vocabulary of the ids seen), on the same targets a biLM is scored on: every real
    word but the first of its window (the forward LM's targets; the backward LM's, every word
    but the last, give the same figure up to the window ends).

    Args:
        train_ids: ``[N, T]`` word ids from `window_ids`.
        held_out_ids: ``[N, T]`` word ids from `window_ids`.

    Returns:
        A float.

    Example:

    >>> train = np.array([[4, 5, 4, 0]])  # targets 5 and 4; add-one: <unk> 1, 4 and 5 twice
    >>> round(unigram_perplexity(train, np.array([[5, 4, 5]])), 6)  # targets 4 and 5: p = 2/5
    2.5
    """
    train_targets = lm_targets(train_ids)[0]
    size = int(max(train_ids.max(), held_out_ids.max())) + 1
    return counts_perplexity(
        np.bincount(train_targets[train_targets != PAD], minlength=size), held_out_ids
    )


def counts_perplexity(counts, held_out_ids):
    """`unigram_perplexity` of a unigram model given by its counts: ``counts[i]`` the
    training count of word id ``i`` (add-one smoothed over every id up to the largest of
    ``counts`` and ``held_out_ids``), scored on the held-out windows' forward targets.

    Args:
        counts: ``[V]`` counts by word id (``<unk>`` the words outside the vocabulary).
        held_out_ids: ``[N, T]`` word ids from `window_ids`.

    Returns:
        A float.
    """
    held_targets = lm_targets(held_out_ids)[0]
    size = max(len(counts), int(held_out_ids.max()) + 1)
    smoothed = np.zeros(size, "float64")
    smoothed[: len(counts)] = counts
    smoothed[NUM_SPECIAL_TOKENS - 1 :] += 1.0  # <unk> and the words; padding and markers: never
    probabilities = smoothed / smoothed.sum()
    held = held_targets[held_targets != PAD]
    return float(np.exp(-np.mean(np.log(probabilities[held]))))


def block_windows(words, documents, max_words):
    """The windows (`word_windows`' rule) of a block's words, in the graph: each document's
    words cut into consecutive windows of at most ``max_words``, those under 2 words left out.

    Args:
        words: ``[L, (words)]`` ragged strings, the words of each line.
        documents: int32 ``[L]``, the document of each line (non-decreasing).
        max_words: the longest window.

    Returns:
        ``(windows, owners)``: ``[N, max_words]`` strings padded with ``""``, and int32
        ``[N]``, the document of each window.
    """
    flat = words.flat_values
    owner = tf.repeat(documents, tf.cast(words.row_lengths(), tf.int32))
    index = tf.range(tf.size(flat))
    first = tf.math.segment_min(index, owner)  # each document's first word (owners sorted)
    position = index - tf.gather(first, owner)
    opens = tf.cast(position % max_words == 0, tf.int32)
    number = tf.cumsum(opens) - 1
    windows = tf.RaggedTensor.from_value_rowids(flat, number, nrows=tf.reduce_sum(opens))
    owners = tf.gather(owner, tf.boolean_mask(index, opens > 0))
    keep = windows.row_lengths() >= MIN_WINDOW
    windows = tf.ragged.boolean_mask(windows, keep)
    padded = windows.to_tensor(default_value="", shape=[None, max_words])
    return padded, tf.boolean_mask(owners, keep)


def window_batches(windows, vocabulary, batch_size, max_characters, drop_remainder=True):
    """Batches of a ``tf.data.Dataset`` of padded windows (``[T]`` strings each) as the
    biLM reads them: ``({"characters": [B, T, C]}, {"forward": [B, T], "backward": [B,
    T]})``, characters and ids computed in-graph (`bilm_dataset`'s)."""
    table = lookup_table(vocabulary.words, NUM_SPECIAL_TOKENS, UNK)

    def encode(words):
        ids = tf.where(words == "", tf.constant(PAD, tf.int64), table.lookup(words))
        ids = tf.cast(ids, tf.int32)
        zeros = tf.zeros_like(ids[:, :1])
        forward = tf.concat([ids[:, 1:], zeros], 1)
        backward = tf.concat([zeros, ids[:, :-1]], 1) * tf.cast(ids != PAD, tf.int32)
        return character_ids(words, max_characters), {
            "forward": forward,
            "backward": backward,
        }

    return (
        windows.batch(batch_size, drop_remainder=drop_remainder)
        .map(encode, num_parallel_calls=tf.data.AUTOTUNE)
        .prefetch(tf.data.AUTOTUNE)
    )


def bilm_dataset(
    windows,
    vocabulary,
    batch_size,
    max_words,
    max_characters,
    shuffle=True,
    seed=0,
    repeat=False,
    drop_remainder=True,
):
    """A ``tf.data.Dataset`` of ``({"characters": [B, T, C]}, {"forward": [B, T],
    "backward": [B, T]})`` batches (fixed shapes), characters and ids computed in-graph.

    Args:
        windows: lists of words (`word_windows`).
        vocabulary: the output `WordVocabulary`.
        batch_size: the shape ``B``.
        max_words: the shape ``T``.
        max_characters: the shape ``C``.
        shuffle: shuffle the windows (every pass differently, seeded).
        seed: the seed of the shuffling.
        repeat: repeat forever (give ``steps_per_epoch`` to ``fit``).
        drop_remainder: drop the last partial batch.

    Returns:
        A ``tf.data.Dataset``.
    """
    check_seed(seed, where="bilm_dataset: ")
    if not windows:
        raise ValueError("bilm_dataset: no window of at least 2 words; give more text.")
    dataset = tf.data.Dataset.from_tensor_slices(padded(windows, max_words).astype(str))
    if shuffle:
        dataset = dataset.shuffle(min(len(windows), 100_000), seed=seed)
    if repeat:
        dataset = dataset.repeat()
    return window_batches(dataset, vocabulary, batch_size, max_characters, drop_remainder)

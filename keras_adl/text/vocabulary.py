"""Vocabulary helpers: counting tokens, and the token → id lookup table that the tokenizers,
`keras_adl.data.bilm` and the word-vector recipes share."""

import collections

import tensorflow as tf


def count_vocabulary(texts, tokenize, min_count=1, max_size=None):
    """The tokens of ``texts`` seen at least ``min_count`` times, most frequent first (ties by
    name), at most ``max_size`` of them.

    Args:
        texts: a list of str.
        tokenize: a function from a ``tf.string`` batch to a ragged tensor of token strings.
        min_count: the threshold: tokens seen fewer times are left out.
        max_size: the threshold on the number of tokens kept (``None``: all).

    Returns:
        A list of str.

    Example:

    >>> count_vocabulary(["a b a", "c b a"], tf.strings.split)
    ['a', 'b', 'c']
    >>> count_vocabulary(["a b a", "c b a"], tf.strings.split, min_count=2, max_size=1)
    ['a']
    """
    counter = collections.Counter()
    if texts:
        dataset = tf.data.Dataset.from_tensor_slices(list(texts)).batch(1024)
        for tokens in dataset.map(tokenize):
            counter.update(t.decode() for t in tokens.flat_values.numpy())
    return vocabulary_from_counts(counter, min_count, max_size)


def vocabulary_from_counts(counts, min_count=1, max_size=None):
    """The tokens of ``counts`` (a dict of token to count) counted at least ``min_count`` times,
    most frequent first (ties by name), at most ``max_size`` of them: `count_vocabulary`'s rule
    on counts gathered some other way (a streamed corpus).

    >>> vocabulary_from_counts({"b": 2, "a": 2, "c": 1}, max_size=2)
    ['a', 'b']
    """
    kept = [t for t, c in counts.items() if c >= min_count]
    kept.sort(key=lambda t: (-counts[t], t))
    return kept[:max_size] if max_size else kept


def lookup_table(vocabulary, first_id, default_id):
    """A ``tf.lookup.StaticHashTable`` from token to int64 id: ``vocabulary[i]`` →
    ``first_id + i``, anything else → ``default_id`` (an empty vocabulary maps everything to
    ``default_id``; its placeholder key ``""`` is never a token).

    Args:
        vocabulary: a list of distinct str.
        first_id: the id of ``vocabulary[0]``.
        default_id: the id of every other token.

    Returns:
        A ``tf.lookup.StaticHashTable``.

    Example:

    >>> table = lookup_table(["a", "b"], first_id=4, default_id=1)
    >>> table.lookup(tf.constant(["b", "a", "z"])).numpy()
    array([5, 4, 1])
    """
    keys = tf.constant(list(vocabulary) or [""], tf.string)
    values = tf.range(first_id, first_id + max(len(vocabulary), 1), dtype=tf.int64)
    return tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(keys, values), default_id)

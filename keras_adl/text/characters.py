"""Words as byte-level character ids for ELMo's character encoder, in-graph.

Every word is read as its UTF-8 bytes, so any Unicode text has ids and no word is unknown (an
accented capital, a Cyrillic or a Chinese word is a few more bytes): id `BEGIN_WORD`, then
``byte + BYTE_OFFSET`` for each byte, then `END_WORD`, then `CHARACTER_PAD` (0) up to
``max_characters``. A word longer than ``max_characters - 2`` bytes keeps its first bytes and
its end marker; the empty string (a padded word) is all zeros. These are ELMo's conventions
(Peters et al. 2018: UTF-8 bytes with begin- and end-of-word markers), with padding at 0 so
that `keras_adl.layers.CharacterCNN` finds padded words and padded characters.

`text_character_ids` splits raw texts into the words of
`keras_adl.text.normalization.plain_words` (NFKC, case folded, punctuation dropped), the words
of the word2vec family, so the two families see the same words.
"""

import tensorflow as tf

from keras_adl.text.normalization import plain_words

__all__ = ["character_ids", "text_character_ids"]


CHARACTER_PAD = 0
BEGIN_WORD = 1
END_WORD = 2
BYTE_OFFSET = 3
# Ids in use: padding, the two markers and the 256 byte values.
NUM_CHARACTERS = BYTE_OFFSET + 256
# Bytes of a word kept, with its two markers (ELMo keeps 50; GCIDE's words rarely pass 18).
MAX_CHARACTERS = 20


def _check_max_characters(max_characters):
    if isinstance(max_characters, bool) or not isinstance(max_characters, int):
        raise TypeError(f"`max_characters` must be an int; received {max_characters!r}.")
    if max_characters < 3:
        raise ValueError(
            f"`max_characters` must be at least 3 (two markers and a byte); received "
            f"{max_characters}."
        )


def character_ids(words, max_characters=MAX_CHARACTERS):
    """The byte-level character ids of a tensor of words.

    Args:
        words: ``[...]`` strings (any shape); ``""`` is a padded word.
        max_characters: ids per word, markers included.

    Returns:
        int32 ``[..., max_characters]``.

    Example:

    >>> character_ids(tf.constant(["é", ""]), 5).numpy().tolist()
    [[1, 198, 172, 2, 0], [0, 0, 0, 0, 0]]
    """
    _check_max_characters(max_characters)
    words = tf.convert_to_tensor(words)
    if words.dtype != tf.string:
        raise TypeError(f"`words` must be strings; received {words.dtype.name}.")
    shape = tf.shape(words)
    flat = tf.strings.bytes_split(tf.reshape(words, [-1]))[:, : max_characters - 2]
    values = tf.io.decode_raw(flat.flat_values, tf.uint8)
    values = tf.cast(tf.reshape(values, [-1]), tf.int32) + BYTE_OFFSET
    ids = flat.with_flat_values(values)
    column = tf.ones([tf.shape(ids.row_splits)[0] - 1, 1], tf.int32)
    marked = tf.concat(
        [
            tf.RaggedTensor.from_tensor(column * BEGIN_WORD).with_row_splits_dtype(
                ids.row_splits.dtype
            ),
            ids,
            tf.RaggedTensor.from_tensor(column * END_WORD).with_row_splits_dtype(
                ids.row_splits.dtype
            ),
        ],
        axis=1,
    )
    dense = marked.to_tensor(default_value=CHARACTER_PAD, shape=[None, max_characters])
    dense = dense * tf.cast(ids.row_lengths() > 0, tf.int32)[:, None]
    return tf.reshape(dense, tf.concat([shape, [max_characters]], 0))


def padded_words(strings, max_words):
    """The `plain_words` of ``[B]`` texts, truncated and padded with ``""`` to
    ``[B, max_words]``."""
    if isinstance(max_words, bool) or not isinstance(max_words, int) or max_words <= 0:
        raise ValueError(f"`max_words` must be a positive integer; received {max_words!r}.")
    return plain_words(strings)[:, :max_words].to_tensor(default_value="", shape=[None, max_words])


def text_character_ids(strings, max_words, max_characters=MAX_CHARACTERS):
    """``(words [B, max_words] strings, ids [B, max_words, max_characters] int32)`` of ``[B]``
    raw texts: their `plain_words`, truncated to ``max_words``, as `character_ids`.

    Args:
        strings: ``[B]`` strings.
        max_words: the words kept per text.
        max_characters: the characters kept per word.

    Returns:
        ``(words, ids)``.

    Example:

    >>> words, ids = text_character_ids(tf.constant(["Été\u00a0: 2024"]), 3, 6)
    >>> [w.decode() for w in words[0].numpy()], ids.shape.as_list()
    (['été', '2024', ''], [1, 3, 6])
    """
    words = padded_words(strings, max_words)
    return words, character_ids(words, max_characters)

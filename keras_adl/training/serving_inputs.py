"""What every exported text model does with the raw strings it is given, before its own
tokenizer: the rules that let a ``serving_default`` answer any input.

- Invalid UTF-8 is replaced, byte sequence by byte sequence, with U+FFFD (as
  ``tf.strings.unicode_transcode(..., errors="replace")`` does) and flagged: ``invalid_utf8``.
- An input with nothing to read (empty, or only white space and control characters once the
  invalid bytes are replaced) is flagged ``empty``; each family says what it answers for it.
- An input longer than the model reads is cut to that length and flagged ``truncated``.
- An empty batch answers empty outputs; a batch of empty inputs gets at least one padded step,
  so no encoder or decoder ever runs over zero time steps.

The families' serving functions (``keras_adl/recipes/*/serving.py``) return these flags beside
their own outputs, each a ``bool`` tensor ``[batch]``.
"""

import tensorflow as tf

from keras_adl.conventions import PAD

__all__ = ["REPLACEMENT_CHARACTER", "read_raw_text", "is_blank", "cut_ids", "at_least_one_step"]

REPLACEMENT_CHARACTER = 0xFFFD  # U+FFFD, what an invalid UTF-8 byte sequence becomes

# Unicode white space and separators, control and format characters: an input of nothing else
# has nothing to read (RE2 syntax).
_BLANK = r"^[\s\p{Z}\p{Cc}\p{Cf}]*$"


def read_raw_text(inputs):
    """Raw strings made safe to read: invalid UTF-8 replaced with U+FFFD.

    Args:
        inputs: ``tf.string`` ``[B]``, as a serving signature receives them.

    Returns:
        ``(text, invalid_utf8)``: the strings with every invalid byte sequence replaced
        (valid text is unchanged, NUL characters included), and ``bool [B]``, whether an input
        had invalid UTF-8.

    Example:

    >>> text, invalid = read_raw_text(tf.constant([b"caf\\xc3\\xa9", b"\\xff\\xfeok", b""]))
    >>> [t.decode() for t in text.numpy()], invalid.numpy().tolist()
    (['café', '��ok', ''], [False, True, False])
    """
    text = tf.strings.unicode_transcode(
        inputs, "UTF-8", "UTF-8", errors="replace", replacement_char=REPLACEMENT_CHARACTER
    )
    return text, tf.not_equal(text, inputs)


def is_blank(text):
    """Whether each string has nothing to read.

    Args:
        text: valid UTF-8 ``tf.string [B]`` (from `read_raw_text`).

    Returns:
        ``bool [B]``: the string holds only white space, separators, control and format
        characters, or nothing.

    Example:

    >>> is_blank(tf.constant(["", " \\t\\n", "\\u00a0\\u202f\\x00", "a", " é "])).numpy().tolist()
    [True, True, True, False, False]
    """
    return tf.strings.regex_full_match(text, _BLANK)


def cut_ids(ids, length):
    """Ragged ids ``[B, (T)]`` cut to at most ``length`` steps, padded dense.

    Args:
        ids: a ``tf.RaggedTensor`` of int ids ``[B, (T)]``.
        length: the most steps the model reads.

    Returns:
        ``(dense, truncated)``: int ids ``[B, T']`` with ``1 <= T' <= length`` (padded with
        `keras_adl.conventions.PAD`; at least one step, see `at_least_one_step`), and
        ``bool [B]``, whether an input had more than ``length`` steps.

    Example:

    >>> ids, truncated = cut_ids(tf.ragged.constant([[5, 6, 7], [], [8]]), 2)
    >>> ids.numpy().tolist(), truncated.numpy().tolist()
    ([[5, 6], [0, 0], [8, 0]], [True, False, False])
    """
    truncated = ids.row_lengths() > length
    return at_least_one_step(ids[:, :length].to_tensor(default_value=PAD)), truncated


def at_least_one_step(ids):
    """Pads ids to at least one step, so a batch of empty inputs never runs a recurrent layer
    over zero steps.

    Args:
        ids: dense int ids ``[B, T]``.

    Returns:
        ``[B, max(T, 1)]``: ``ids``, with one `keras_adl.conventions.PAD` step where ``T = 0``.

    Example:

    >>> at_least_one_step(tf.zeros([3, 0], tf.int32)).shape.as_list()
    [3, 1]
    """
    missing = tf.maximum(1 - tf.shape(ids)[1], 0)
    return tf.pad(ids, [[0, 0], [0, missing]], constant_values=PAD)

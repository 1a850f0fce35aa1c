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

__all__ = [
    "REPLACEMENT_CHARACTER",
    "read_raw_text",
    "is_blank",
    "cut_ids",
    "at_least_one_step",
    "read_values",
    "run_on_one_more",
    "check_example_shape",
]

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


def read_values(values, low=None, high=None):
    """Arrays (images, feature or bit sequences) made safe to read: NaN and infinite values
    become 0 and, with bounds, values are clipped to ``[low, high]``.

    Args:
        values: a float tensor ``[B, ...]``.
        low: optional lower bound of the values the model reads (images: 0).
        high: optional upper bound (images: 1).

    Returns:
        ``(clean, invalid_values)``: the values, and ``bool [B]``, whether an example held a
        value that was replaced or clipped.

    Example:

    >>> clean, invalid = read_values(tf.constant([[0.5, float("nan")], [0.2, 3.0]]), 0.0, 1.0)
    >>> clean.numpy().tolist(), invalid.numpy().tolist()
    ([[0.5, 0.0], [0.20000000298023224, 1.0]], [True, True])
    """
    finite = tf.math.is_finite(values)
    clean = tf.where(finite, values, tf.zeros_like(values))
    if low is not None or high is not None:
        low = clean.dtype.min if low is None else low
        high = clean.dtype.max if high is None else high
        clean = tf.clip_by_value(clean, low, high)
    changed = tf.logical_or(tf.logical_not(finite), tf.not_equal(clean, values))
    axes = tf.range(1, tf.rank(values))
    return clean, tf.reduce_any(changed, axis=axes)


def run_on_one_more(function, batch):
    """``function(batch)`` computed on the batch and one zero example more, whose outputs are
    dropped: TensorFlow's convolutions return a wrong shape for a batch of zero examples, so an
    empty request still gets empty outputs of the documented shapes.

    Args:
        function: maps a batch ``[B, ...]`` to a tensor or a dict of tensors, batch first.
        batch: ``[B, ...]``.

    Returns:
        ``function``'s outputs for the ``B`` examples.

    Example:

    >>> run_on_one_more(lambda x: {"sum": tf.reduce_sum(x, 1)}, tf.zeros([0, 3]))["sum"].shape
    TensorShape([0])
    """
    shape = tf.concat([[1], tf.shape(batch)[1:]], 0)
    outputs = function(tf.concat([batch, tf.zeros(shape, batch.dtype)], 0))
    return tf.nest.map_structure(lambda x: x[:-1], outputs)


def check_example_shape(values, shape, name):
    """Refuses a batch whose examples are not of ``shape`` with one clear message.

    A ``tf.function``'s input signature refuses such a batch before it runs; the signature of a
    reloaded SavedModel does not check shapes, so this check keeps the refusal (a clear
    ``InvalidArgumentError``, not an error deep inside the model or a silent answer).

    Args:
        values: a batch ``[B, ...]``.
        shape: the shape of one example (``None`` where any size is read).
        name: the input's name, for the message.

    Returns:
        ``values``, checked.
    """
    known = [(i + 1, size) for i, size in enumerate(shape) if size is not None]
    if not known:
        return values
    wanted = ", ".join("any" if size is None else str(size) for size in shape)
    actual = tf.gather(tf.shape(values), [axis for axis, _ in known])
    check = tf.debugging.assert_equal(
        actual,
        tf.constant([size for _, size in known], actual.dtype),
        message=f"`{name}` must be [batch, {wanted}]",
    )
    with tf.control_dependencies([check]):
        return tf.identity(values)

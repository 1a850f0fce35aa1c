"""A fixed character vocabulary: strings ↔ padded id arrays, in numpy (no TensorFlow)."""

import numpy as np

from keras_adl.conventions import END, NUM_SPECIAL_TOKENS, PAD, SPECIAL_TOKENS, START, UNK


class CharVocabulary:
    """A fixed character vocabulary with the specials of `keras_adl.conventions`.

    Ids ``0..3`` are ``<pad>``, ``<s>``, ``</s>``, ``<unk>``; character ``chars[i]`` has id
    ``i + NUM_SPECIAL_TOKENS``. Any Unicode character can be in ``chars``; a character that is
    not maps to ``<unk>``.

    Args:
        chars: the characters (a string, or a sequence of one-character strings), in id order
            after the four specials.

    Example:

    >>> vocab = CharVocabulary("ab")
    >>> vocab.encode(["ab", "ba?"], max_length=5).tolist()
    [[4, 5, 0, 0, 0], [5, 4, 3, 0, 0]]
    >>> vocab.decode([[4, 5, 2, 4]])
    ['ab']
    """

    def __init__(self, chars):
        if len(set(chars)) != len(chars):
            raise ValueError(f"`chars` has repeated characters: {chars!r}.")
        self.chars = chars
        self.tokens = list(SPECIAL_TOKENS) + list(chars)
        self._ids = {c: i + NUM_SPECIAL_TOKENS for i, c in enumerate(chars)}

    def __len__(self):
        return len(self.tokens)

    def encode(self, strings, max_length, add_start=False, add_end=False):
        """Ids ``[N, max_length]`` (int32), padded with ``PAD``; raises if a string is too
        long."""
        out = np.full((len(strings), max_length), PAD, "int32")
        for row, text in enumerate(strings):
            ids = [self._ids.get(c, UNK) for c in text]
            ids = ([START] if add_start else []) + ids + ([END] if add_end else [])
            if len(ids) > max_length:
                raise ValueError(
                    f"`max_length`={max_length} is too short for {text!r} "
                    f"({len(ids)} ids with the markers)."
                )
            out[row, : len(ids)] = ids
        return out

    def decode(self, ids):
        """Strings from id rows, stopping at ``</s>`` or padding and skipping the other
        specials."""
        strings = []
        for row in np.asarray(ids):
            chars = []
            for i in row:
                if i in (END, PAD):
                    break
                if i >= NUM_SPECIAL_TOKENS:
                    chars.append(self.tokens[i])
            strings.append("".join(chars))
        return strings

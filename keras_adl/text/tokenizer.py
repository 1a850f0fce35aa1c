"""Word- or character-level tokenization of text pairs with tensorflow-text, inside tf.data.

The vocabularies are built from the training data. The same in-graph ops tokenize inside the
exported serving function, so a reloaded SavedModel needs ``import tensorflow_text`` (the ops
are registered by that import) but not keras_adl.

Words are Unicode-correct: the text is NFKC-normalised and case-folded (``Échec`` and
``échec`` are one word; the no-break spaces French puts before ``: ; ? !`` become spaces),
every Unicode space separates words, and punctuation is split into tokens of its own
(``nulle.`` is ``nulle`` and ``.``). Scripts written without spaces (Japanese, Chinese) give
one word per run between spaces and punctuation.
"""

import tensorflow as tf
import tensorflow_text as tf_text

from keras_adl.conventions import END, NUM_SPECIAL_TOKENS, PAD, START, UNK
from keras_adl.text._vocabulary import count_vocabulary, lookup_table

# Any run of spaces (ASCII or Unicode separators) and any punctuation character delimits a
# word; punctuation is kept as a token.
_WORD_DELIMITER = r"[\s\pZ]+|\pP"
_KEPT_DELIMITER = r"\pP"


def normalize_words(strings):
    """NFKC normalisation with full Unicode case folding, every run of spaces made one space:
    ``[B]`` strings to ``[B]`` strings (in-graph)."""
    folded = tf_text.case_fold_utf8(strings)
    return tf.strings.strip(tf.strings.regex_replace(folded, r"[\s\pZ]+", " "))


def word_tokens(strings):
    """The words and punctuation of ``[B]`` strings, normalised: a ``[B, (words)]`` ragged
    tensor of strings (in-graph).

    Example:

    >>> word_tokens(tf.constant(["Échec\u00a0: fichier « NUL »."])).to_list()
    [[b'\xc3\xa9chec', b':', b'fichier', b'\xc2\xab', b'nul', b'\xc2\xbb', b'.']]
    """
    return tf_text.regex_split(normalize_words(strings), _WORD_DELIMITER, _KEPT_DELIMITER)


class TextPairTokenizer:
    """Tokenizes (source, target) text pairs to fixed-shape, padded id batches.

    Args:
        source_vocabulary, target_vocabulary: token lists (without the specials, which take
            ids 0-3: ``<pad>``, ``<s>``, ``</s>``, ``<unk>``).
        level: ``"word"`` (`word_tokens`: NFKC, case-folded, split at Unicode spaces and
            punctuation) or ``"char"`` (``tensorflow_text.UnicodeCharTokenizer``).

    Example:

    >>> tok = TextPairTokenizer.build(["a b", "b c"], ["x y", "y"], min_count=1)
    >>> tok.source_vocabulary
    ['b', 'a', 'c']
    >>> tok.encode_source(tf.constant(["a b zz"]), 5).numpy().tolist()
    [[5, 4, 3, 0, 0]]
    """

    def __init__(self, source_vocabulary, target_vocabulary, level="word"):
        if level not in ("word", "char"):
            raise ValueError(f"`level` must be 'word' or 'char'; received {level!r}.")
        self.level = level
        self.source_vocabulary = list(source_vocabulary)
        self.target_vocabulary = list(target_vocabulary)
        self._source_table = self._table(self.source_vocabulary)
        self._target_table = self._table(self.target_vocabulary)
        self._target_tokens = tf.constant([""] * NUM_SPECIAL_TOKENS + self.target_vocabulary)

    @staticmethod
    def _table(vocabulary):
        return lookup_table(vocabulary, NUM_SPECIAL_TOKENS, UNK)

    def _tokenize(self, strings):
        if self.level == "word":
            return word_tokens(strings)
        codes = tf_text.UnicodeCharTokenizer().tokenize(strings)
        return tf.strings.unicode_encode(tf.expand_dims(codes, -1), "UTF-8")

    @classmethod
    def build(cls, sources, targets, level="word", min_count=1, max_size=None):
        """Builds the vocabularies from training pairs (most frequent first, ties by name)."""
        probe = cls([], [], level)

        def count(texts):
            return count_vocabulary(texts, probe._tokenize, min_count, max_size)

        return cls(count(sources), count(targets), level)

    def _ids(self, table, strings, length, add_start=False, add_end=False):
        ids = table.lookup(self._tokenize(strings))
        column = tf.concat([tf.shape(strings)[0:1], [1]], 0)

        def marker(value):
            marks = tf.RaggedTensor.from_tensor(tf.fill(column, tf.constant(value, tf.int64)))
            return marks.with_row_splits_dtype(ids.row_splits.dtype)

        if add_start:
            ids = tf.concat([marker(START), ids], axis=1)
        if add_end:
            ids = tf.concat([ids, marker(END)], axis=1)
        return tf.cast(ids.to_tensor(default_value=PAD, shape=[None, length]), tf.int32)

    def encode_source(self, strings, length):
        """Source ids ``[B, length]`` for a string batch ``[B]``: 0-padded, and truncated to
        ``length`` (a truncated target loses its ``</s>``)."""
        return self._ids(self._source_table, strings, length)

    def encode_target(self, strings, length):
        """``(decoder_input, target)`` ``[B, length]``: ``<s> y`` and ``y </s>``."""
        return (
            self._ids(self._target_table, strings, length, add_start=True),
            self._ids(self._target_table, strings, length, add_end=True),
        )

    def decode_target(self, ids):
        """Strings from target ids (specials dropped; words joined by spaces)."""
        tokens = tf.gather(self._target_tokens, tf.cast(ids, tf.int32))
        separator = " " if self.level == "word" else ""
        joined = tf.strings.reduce_join(tokens, axis=-1, separator=separator)
        return (
            tf.strings.strip(tf.strings.regex_replace(joined, " +", " ")) if separator else joined
        )

    def source_tokens(self, strings):
        """The tokens of source strings ``[B]`` as the model sees them (ragged, before the
        vocabulary lookup), e.g. to label an attention picture."""
        return self._tokenize(strings)

    def normalize_target(self, strings):
        """Target strings as `decode_target` writes them (for word level: the normalised
        words joined by spaces), to compare predictions with references."""
        if self.level != "word":
            return strings
        return tf.strings.reduce_join(word_tokens(strings), axis=-1, separator=" ")

    def to_config(self):
        """A JSON-serialisable description, for `from_config`."""
        return {
            "level": self.level,
            "source": self.source_vocabulary,
            "target": self.target_vocabulary,
        }

    @classmethod
    def from_config(cls, config):
        return cls(config["source"], config["target"], config["level"])

    @property
    def tables(self):
        """The lookup tables, to track when exporting a function that uses this tokenizer."""
        return [self._source_table, self._target_table]

    def dataset(
        self, sources, targets, batch_size, source_length, target_length, shuffle=True, seed=0
    ):
        """A ``tf.data.Dataset`` of ``({"source", "decoder_input"}, target)`` fixed-shape
        batches, tokenized in-graph (the last partial batch is dropped so shapes never change)."""
        dataset = tf.data.Dataset.from_tensor_slices((list(sources), list(targets)))
        if shuffle:
            dataset = dataset.shuffle(len(sources), seed=seed)

        def encode(source, target):
            decoder_input, target_ids = self.encode_target(target, target_length)
            return {
                "source": self.encode_source(source, source_length),
                "decoder_input": decoder_input,
            }, target_ids

        return (
            dataset.batch(batch_size, drop_remainder=True)
            .map(encode, num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE)
        )

"""Documents → sentences → words → padded ids ``[B, S, W]``, with tensorflow-text, in-graph.

For hierarchical models (the Hierarchical Attention Network reads a document as a sequence of
sentences, each a sequence of words). The encode path uses only TensorFlow and
tensorflow-text ops, so it runs inside ``tf.data`` and inside an exported serving function that
takes raw strings; a reloaded SavedModel needs ``import tensorflow_text`` (which registers the
ops) but not keras_adl.
"""

import collections
import numbers
import unicodedata

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.text.vocabulary import count_vocabulary, lookup_table

# A sentence ends at a run of sentence-final punctuation (with any closing quotes or brackets)
# followed by whitespace or the end of the text, or at a paragraph break (a blank line). The
# delimiters are consumed.
_SENTENCE_DELIMITER = r"\n\s*\n|[.!?]+[\"'" + "\u201d" + r")\]]*(?:\s+|$)"
# Words are runs of letters, digits (and combining marks) and apostrophes; the rest separates.
_WORD_DELIMITER = r"[^\pL\pN\pM']+"
_EDGE_APOSTROPHES = r"^'+|'+$"
_RIGHT_SINGLE_QUOTE = "\u2019"


def _check_positive_int(name, value):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(
            f"`{name}` must be an int; received {value!r} of type {type(value).__name__}."
        )
    if value < 1:
        raise ValueError(f"`{name}` must be >= 1; received {value!r}.")
    return int(value)


def _check_bool(name, value):
    if not isinstance(value, bool):
        raise TypeError(f"`{name}` must be a bool; received {value!r}.")
    return value


def _check_strings(name, values):
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)):
        raise TypeError(
            f"`{name}` must be a list of str; received {type(values).__name__} {values!r:.80}."
        )
    for value in values:
        if not isinstance(value, str):
            raise TypeError(
                f"`{name}` must contain only str; received {value!r} of type "
                f"{type(value).__name__}."
            )
    return list(values)


class DocumentTokenizer:
    """Tokenizes raw document strings to sentence × word id tensors ``[B, S, W]``.

    Splitting rules (all in-graph, on UTF-8 text):

    * Text is first put in Unicode normal form NFC (``tensorflow_text.normalize_utf8``):
      canonically equivalent spellings are one word (``"e"`` + combining acute accent is
      ``"é"``), while compatibility characters are kept (``"ﬁ"`` is not ``"fi"``).
    * The right single quotation mark ``’`` is read as an apostrophe ``'``.
    * **Sentences** (``tensorflow_text.regex_split``): a sentence ends at a run of
      ``.``, ``!`` or ``?`` (with any closing quotes or brackets: ``"``, ``'``, ``”``,
      ``)``, ``]``) followed by whitespace or the end of the text
      (``"3.5"`` and ``"e.g.x"`` do not split, ``"e.g. x"`` does), or at a paragraph break,
      i.e. a blank line (``\\n\\s*\\n``). A single newline inside a sentence is ordinary
      whitespace.
    * **Lower-casing** (if ``lowercase``): ``tf.strings.lower(..., encoding="utf-8")``, i.e.
      Unicode-aware lower-casing *without* case folding or NFKC (``"ß"`` stays ``"ß"``;
      unlike ``tensorflow_text.case_fold_utf8``, which would also apply NFKC and give
      ``"ss"``).
    * **Words** (``tensorflow_text.regex_split``): runs of Unicode letters, digits and
      combining marks (``\\pL``, ``\\pN``, ``\\pM``: ``é``, ``ß``, ``中`` are word characters)
      with apostrophes allowed inside (``don't``, ``o'clock``); leading and trailing
      apostrophes are stripped (``'quoted'`` → ``quoted``). Every other character —
      punctuation, symbols, ``_``, whitespace — separates words and is dropped.
    * Sentences left with no word (``"..."``, ``"!!"``, ``"— "``) are dropped, so every kept
      sentence has at least one word; an empty or punctuation-only document has no sentence.

    `encode` keeps the first ``max_sentences`` sentences and the first ``max_words`` words of
    each, pads with ``PAD`` = 0, and maps out-of-vocabulary words to ``UNK`` = 3; vocabulary
    words take ids 4, 5, ... in order (the ids of `keras_adl.conventions`: ``<s>`` = 1 and
    ``</s>`` = 2 are left unused, so an id means the same in every vocabulary).

    Args:
        vocabulary: list of words (without the specials), e.g. from `build`; kept in NFC
            (a decomposed word is composed, so it matches the text).
        max_sentences: ``S``, the number of sentences kept per document.
        max_words: ``W``, the number of words kept per sentence.
        lowercase: lower-case the text before splitting it into words (the vocabulary should
            then be lower-case too).

    Example:

    >>> tok = DocumentTokenizer.build(["The cat sat. The dog ran!"], max_sentences=3,
    ...                               max_words=4)
    >>> tok.vocabulary, tok.vocabulary_size
    (['the', 'cat', 'dog', 'ran', 'sat'], 9)
    >>> tok.split(tf.constant(["Hello, world! It's 5 o'clock.\\n\\nNew para...  really?"])
    ...           ).to_list()[0]
    [[b'hello', b'world'], [b"it's", b'5', b"o'clock"], [b'new', b'para'], [b'really']]
    >>> tok.encode(tf.constant(["The cat ran away.", "!!"])).numpy().tolist()
    [[[4, 5, 7, 3], [0, 0, 0, 0], [0, 0, 0, 0]], [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]]
    """

    def __init__(self, vocabulary, max_sentences=15, max_words=30, lowercase=True):
        # In NFC, as the text is: a word given decomposed still matches (it would never match
        # otherwise, since `split` composes every text first).
        self.vocabulary = [
            unicodedata.normalize("NFC", w) for w in _check_strings("vocabulary", vocabulary)
        ]
        duplicates = sorted(w for w, c in collections.Counter(self.vocabulary).items() if c > 1)
        if duplicates:
            raise ValueError(
                "`vocabulary` must not repeat words (in NFC); received duplicates "
                f"{duplicates[:5]!r}."
            )
        if "" in self.vocabulary:
            raise ValueError(
                "`vocabulary` must not contain the empty string (the padding "
                "token of `tokens`); received ''."
            )
        self.max_sentences = _check_positive_int("max_sentences", max_sentences)
        self.max_words = _check_positive_int("max_words", max_words)
        self.lowercase = _check_bool("lowercase", lowercase)
        self._table = lookup_table(self.vocabulary, NUM_SPECIAL_TOKENS, UNK)

    @property
    def vocabulary_size(self):
        """The number of ids, ``len(vocabulary) + NUM_SPECIAL_TOKENS``: an ``Embedding``'s
        ``input_dim``."""
        return len(self.vocabulary) + NUM_SPECIAL_TOKENS

    @classmethod
    def build(
        cls, documents, max_sentences=15, max_words=30, min_count=1, max_size=None, lowercase=True
    ):
        """Builds the vocabulary from training documents.

        The words seen at least ``min_count`` times, most frequent first (ties by name), at
        most ``max_size`` of them (all if None). Words are counted over whole documents (the
        ``max_sentences`` / ``max_words`` truncation does not apply to counting).
        """
        documents = _check_strings("documents", documents)
        min_count = _check_positive_int("min_count", min_count)
        if max_size is not None:
            max_size = _check_positive_int("max_size", max_size)
        probe = cls([], max_sentences, max_words, lowercase)
        vocabulary = count_vocabulary(documents, probe.split, min_count, max_size)
        return cls(vocabulary, max_sentences, max_words, lowercase)

    @staticmethod
    def _documents(documents):
        if not tf.is_tensor(documents):
            try:
                documents = tf.convert_to_tensor(documents)
            except (TypeError, ValueError) as error:
                raise TypeError(
                    f"`documents` must be a tf.string tensor of shape [batch]; "
                    f"received {documents!r:.80} ({error})."
                ) from None
        if not isinstance(documents, (tf.Tensor, tf.Variable)) or documents.dtype != tf.string:
            raise TypeError(
                f"`documents` must be a dense tf.string tensor of shape [batch]; "
                f"received {type(documents).__name__} of dtype {documents.dtype!r}."
            )
        if documents.shape.rank is not None and documents.shape.rank != 1:
            raise ValueError(
                f"`documents` must have shape [batch] (rank 1); received shape {documents.shape}."
            )
        return documents

    def split(self, documents):
        """Words of each sentence of each document: a ``tf.RaggedTensor`` of strings
        ``[B, (S), (W)]``, not truncated (see the class docstring for the rules)."""
        documents = self._documents(documents)
        text = tf_text.normalize_utf8(documents, "NFC")
        text = tf.strings.regex_replace(text, _RIGHT_SINGLE_QUOTE, "'")
        sentences = tf_text.regex_split(text, _SENTENCE_DELIMITER)
        if self.lowercase:
            sentences = tf.strings.lower(sentences, encoding="utf-8")
        words = tf_text.regex_split(sentences, _WORD_DELIMITER)
        words = words.with_flat_values(
            tf.strings.regex_replace(words.flat_values, _EDGE_APOSTROPHES, "")
        )
        words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
        return tf.ragged.boolean_mask(words, words.row_lengths(axis=2) > 0)

    def lengths(self, documents, batch_size=512):
        """How long ``documents`` are, before truncation: ``(sentences, words)``, int arrays of
        the sentence count of each document ``[N]`` and of the word count of each sentence of
        each document ``[N, S_max]`` (0 past a document's last sentence)."""
        counts, words = [], []
        for start in range(0, len(documents), batch_size):
            split = self.split(tf.constant(list(documents[start : start + batch_size])))
            counts.append(split.row_lengths(axis=1).numpy())
            words.append(split.row_lengths(axis=2).to_tensor().numpy())
        width = max((w.shape[1] for w in words), default=0)
        words = [np.pad(w, ((0, 0), (0, width - w.shape[1]))) for w in words]
        return np.concatenate(counts or [np.zeros(0, "int64")]), np.concatenate(
            words or [np.zeros((0, 0), "int64")]
        )

    def _padded(self, ragged, default, batch):
        dense = ragged.to_tensor(
            default_value=default, shape=[None, self.max_sentences, self.max_words]
        )
        dense.set_shape([batch, self.max_sentences, self.max_words])
        return dense

    def tokens(self, documents):
        """The words at the positions `encode` gives ids: ``tf.string``
        ``[B, max_sentences, max_words]``, ``""`` at padding (lower-cased if ``lowercase``)."""
        documents = self._documents(documents)
        return self._padded(self.split(documents), "", documents.shape[0])

    def encode(self, documents):
        """Ids ``tf.int32 [B, max_sentences, max_words]`` for a ``tf.string [B]`` batch:
        truncated, ``PAD``-padded, out-of-vocabulary words mapped to ``UNK``."""
        return self.encode_with_tokens(documents)[0]

    def encode_with_tokens(self, documents):
        """``(encode(documents), tokens(documents))`` from one split of the text."""
        return self.encode_with_cut(documents)[:2]

    def encode_with_cut(self, documents):
        """``(encode(documents), tokens(documents), truncated)`` from one split of the text:
        ``truncated`` ``bool [B]`` says which documents had more than ``max_sentences``
        sentences or a sentence of more than ``max_words`` words."""
        documents = self._documents(documents)
        words = self.split(documents)
        ids = words.with_flat_values(tf.cast(self._table.lookup(words.flat_values), tf.int32))
        batch = documents.shape[0]
        too_long = tf.reduce_any(words.row_lengths(axis=2) > self.max_words, axis=1)
        truncated = (words.row_lengths(axis=1) > self.max_sentences) | too_long
        return self._padded(ids, PAD, batch), self._padded(words, "", batch), truncated

    def dataset(self, documents, labels, batch_size, shuffle=True, seed=0, drop_remainder=True):
        """A ``tf.data.Dataset`` of ``(ids int32 [B, S, W], labels int32 [B])`` batches.

        Tokenization runs in ``Dataset.map`` after batching (AUTOTUNE parallel, order kept),
        followed by ``prefetch``. With ``drop_remainder=True`` the last partial batch is
        dropped and every shape is static, so a compiled train step never retraces; with
        ``False`` every example is seen once per epoch. With ``shuffle``, each epoch is
        reshuffled, in an order fixed by ``seed``.
        """
        documents = _check_strings("documents", documents)
        labels_array = np.asarray(labels)
        if labels_array.ndim != 1 or not (
            np.issubdtype(labels_array.dtype, np.integer)
            or np.issubdtype(labels_array.dtype, np.bool_)
        ):
            raise TypeError(
                f"`labels` must be a 1-D sequence of ints; received dtype "
                f"{labels_array.dtype} and shape {labels_array.shape}."
            )
        if len(labels_array) != len(documents):
            raise ValueError(
                f"`labels` must have one label per document ({len(documents)}); "
                f"received {len(labels_array)}."
            )
        batch_size = _check_positive_int("batch_size", batch_size)
        _check_bool("shuffle", shuffle)
        _check_bool("drop_remainder", drop_remainder)
        if not documents:
            raise ValueError("`documents` must not be empty; received [].")
        dataset = tf.data.Dataset.from_tensor_slices(
            (tf.constant(documents, tf.string), labels_array.astype(np.int32))
        )
        if shuffle:
            dataset = dataset.shuffle(len(documents), seed=seed, reshuffle_each_iteration=True)
        return (
            dataset.batch(batch_size, drop_remainder=drop_remainder)
            .map(lambda docs, y: (self.encode(docs), y), num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE)
        )

    def to_config(self):
        """A JSON-serialisable description, for `from_config`."""
        return {
            "vocabulary": list(self.vocabulary),
            "max_sentences": self.max_sentences,
            "max_words": self.max_words,
            "lowercase": self.lowercase,
        }

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    @property
    def tables(self):
        """The lookup tables, to track when exporting a function that uses this tokenizer."""
        return [self._table]

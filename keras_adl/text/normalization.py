"""Unicode-correct text normalisation and word splitting, shared by every tokenizer (in-graph,
tensorflow-text).

`normalize_words`: NFKC normalisation with full Unicode case folding (``Échec`` and ``échec``
are one word, ``Straße`` is ``strasse``), every run of Unicode spaces one space (the no-break
spaces French puts before ``: ; ? !`` included).

`word_tokens` (the word-level tokenizer's words): split at spaces and punctuation, punctuation
kept as tokens (``nulle.`` is ``nulle`` and ``.``). Scripts written without spaces (Japanese,
Chinese) give one word per run between spaces and punctuation.

`subword_words` (the words WordPiece cuts into pieces): as `word_tokens`, and in addition
symbols are split off and every character of the scripts written without spaces (Han,
Hiragana, Katakana, Thai, Lao, Khmer, Myanmar) is a word of its own, as BERT's tokenizer does
for Han.

`joined_words`: `subword_words` joined by single spaces, the one form in which translations
and references are compared.
"""

import tensorflow as tf
import tensorflow_text as tf_text

# Spaces: RE2's \s (tab, newline, form feed, return, space), the Unicode separators \pZ (the
# no-break spaces among them), the vertical tab and NEL.
_SPACES = r"[\s\pZ\x{0B}\x{85}]+"
# Any run of spaces and any punctuation character delimits a word; punctuation is kept.
_WORD_DELIMITER = _SPACES + r"|\pP"
_KEPT_DELIMITER = r"\pP"


def normalize_words(strings):
    """NFKC normalisation with full Unicode case folding, every run of spaces made one space:
    ``[B]`` strings to ``[B]`` strings (in-graph)."""
    folded = tf_text.case_fold_utf8(strings)
    return tf.strings.strip(tf.strings.regex_replace(folded, _SPACES, " "))


def word_tokens(strings):
    """The words and punctuation of ``[B]`` strings, normalised: a ``[B, (words)]`` ragged
    tensor of strings (in-graph).

    Example:

    >>> word_tokens(tf.constant(["Échec\u00a0: fichier « NUL »."])).to_list()
    [[b'\xc3\xa9chec', b':', b'fichier', b'\xc2\xab', b'nul', b'\xc2\xbb', b'.']]
    """
    return tf_text.regex_split(normalize_words(strings), _WORD_DELIMITER, _KEPT_DELIMITER)


# Spaces delimit words; punctuation, symbols and each character of the scripts written
# without spaces are words of their own.
SCRIPTS_WITHOUT_SPACES = r"\p{Han}|\p{Hiragana}|\p{Katakana}|\p{Thai}|\p{Lao}|\p{Khmer}|\p{Myanmar}"
_SUBWORD_DELIMITER = _SPACES + r"|\pP|\pS|" + SCRIPTS_WITHOUT_SPACES
_SUBWORD_KEPT = r"\pP|\pS|" + SCRIPTS_WITHOUT_SPACES


def subword_words(strings):
    """The words WordPiece cuts into pieces: ``[B]`` strings to a ``[B, (words)]`` ragged
    tensor of normalised strings (in-graph).

    Example:

    >>> [w.decode() for w in subword_words(tf.constant(["Échec\u00a0: 日本語!"]))[0].numpy()]
    ['échec', ':', '日', '本', '語', '!']
    """
    return tf_text.regex_split(normalize_words(strings), _SUBWORD_DELIMITER, _SUBWORD_KEPT)


def joined_words(strings):
    """`subword_words` of ``[B]`` strings joined by single spaces: ``[B]`` strings.

    Example:

    >>> joined_words(tf.constant(["Fichier\u00a0: «\u00a0données.txt\u00a0»"])).numpy()[0].decode()
    'fichier : « données . txt »'
    """
    return tf.strings.reduce_join(subword_words(strings), axis=-1, separator=" ")


def plain_words(strings):
    """The words of ``[B]`` strings for word embeddings: normalised (`normalize_words`), runs
    of letters, digits and marks, punctuation and symbols dropped: ``[B, (words)]`` ragged
    strings.

    Example:

    >>> plain_words(tf.constant(["L'Été, 2024 : Straße!"])).to_list()
    [[b'l', b'\xc3\xa9t\xc3\xa9', b'2024', b'strasse']]
    """
    words = tf_text.regex_split(normalize_words(strings), r"[^\pL\pN\pM]+")
    return tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)

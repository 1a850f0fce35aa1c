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

`joined_words`: `subword_words` joined by single spaces, the one form in which normalised
translations and references are compared.

`surface_words` and `surface_text`: the same cut into words, but reversible — NFC only (case,
ligatures and no-break spaces kept), each word that followed a space marked with `SPACE_MARK`
— so that pieces of these words detokenize back to the text as written.
"""

import tensorflow as tf
import tensorflow_text as tf_text

__all__ = ["normalize_words"]


# Spaces: RE2's \s (tab, newline, form feed, return, space), the Unicode separators \pZ (the
# no-break spaces among them), the vertical tab and NEL.
_SPACES = r"[\s\pZ\x{0B}\x{85}]+"
# Any run of spaces and any punctuation character delimits a word; punctuation is kept.
_WORD_DELIMITER = _SPACES + r"|\pP"
_KEPT_DELIMITER = r"\pP"


def normalize_words(strings):
    """NFKC normalisation with full Unicode case folding, every run of spaces made one space:
    ``[B]`` strings to ``[B]`` strings (in-graph).

    Args:
        strings: ``[B]`` strings (UTF-8).

    Returns:
        A ``[B]`` string tensor: folded, spaces collapsed, stripped at both ends.

    Example:

    >>> texts = tf.constant(["Échec\u00a0:  Straße", "ОШИБКА ＡＢＣ １２", " ﬁchier\u202f! 日本語"])
    >>> [s.decode() for s in normalize_words(texts).numpy()]
    ['échec : strasse', 'ошибка abc 12', 'fichier ! 日本語']
    """
    folded = tf_text.case_fold_utf8(strings)
    return tf.strings.strip(tf.strings.regex_replace(folded, _SPACES, " "))


def word_tokens(strings):
    """The words and punctuation of ``[B]`` strings, normalised: a ``[B, (words)]`` ragged
    tensor of strings (in-graph).

    Args:
        strings: ``[B]`` strings.

    Returns:
        A ``tf.RaggedTensor`` ``[B, (words)]``.

    Example:

    >>> word_tokens(tf.constant(["Échec\u00a0: fichier « NUL »."])).to_list()
    [[b'\xc3\xa9chec', b':', b'fichier', b'\xc2\xab', b'nul', b'\xc2\xbb', b'.']]
    """
    return tf_text.regex_split(normalize_words(strings), _WORD_DELIMITER, _KEPT_DELIMITER)


# Spaces delimit words; punctuation, symbols and each character of the scripts written
# without spaces are words of their own.
SCRIPTS_WITHOUT_SPACES = r"\p{Han}|\p{Hiragana}|\p{Katakana}|\p{Thai}|\p{Lao}|\p{Khmer}|\p{Myanmar}"
# The slots of `keras_adl.text.copy_through` (private use characters): words of their own too.
SLOT_BASE, MAX_SLOTS = 0xE000, 16
SLOT_CHARACTERS = f"[\\x{{{SLOT_BASE:X}}}-\\x{{{SLOT_BASE + MAX_SLOTS - 1:X}}}]"
SINGLE_CHARACTER_WORDS = SCRIPTS_WITHOUT_SPACES + "|" + SLOT_CHARACTERS
_SUBWORD_DELIMITER = _SPACES + r"|\pP|\pS|" + SINGLE_CHARACTER_WORDS
_SUBWORD_KEPT = r"\pP|\pS|" + SINGLE_CHARACTER_WORDS


def subword_words(strings):
    """The words WordPiece cuts into pieces: ``[B]`` strings to a ``[B, (words)]`` ragged
    tensor of normalised strings (in-graph).

    Args:
        strings: ``[B]`` strings.

    Returns:
        A ``tf.RaggedTensor`` ``[B, (words)]``.

    Example:

    >>> [w.decode() for w in subword_words(tf.constant(["Échec\u00a0: 日本語!"]))[0].numpy()]
    ['échec', ':', '日', '本', '語', '!']
    """
    return tf_text.regex_split(normalize_words(strings), _SUBWORD_DELIMITER, _SUBWORD_KEPT)


def joined_words(strings):
    """`subword_words` of ``[B]`` strings joined by single spaces: ``[B]`` strings.

    Args:
        strings: ``[B]`` strings.

    Returns:
        ``[B]`` strings.

    Example:

    >>> joined_words(tf.constant(["Fichier\u00a0: «\u00a0données.txt\u00a0»"])).numpy()[0].decode()
    'fichier : « données . txt »'
    """
    return tf.strings.reduce_join(subword_words(strings), axis=-1, separator=" ")


def plain_words(strings):
    """The words of ``[B]`` strings for word embeddings: normalised (`normalize_words`), runs
    of letters, digits and marks, punctuation and symbols dropped: ``[B, (words)]`` ragged
    strings.

    Args:
        strings: ``[B]`` strings.

    Returns:
        A ``tf.RaggedTensor`` ``[B, (words)]``.

    Example:

    >>> plain_words(tf.constant(["L'Été, 2024 : Straße!"])).to_list()
    [[b'l', b'\xc3\xa9t\xc3\xa9', b'2024', b'strasse']]
    """
    words = tf_text.regex_split(normalize_words(strings), r"[^\pL\pN\pM]+")
    return tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)


def written_words(strings):
    """The words of `plain_words`, each as written (NFC only: case and letters kept), for
    outputs that show a user their words: ``[B, (words)]`` ragged strings aligned one to one
    with ``plain_words(strings)``. A text whose word count NFKC changes (``½`` is ``1⁄2``, two
    words) gets its `plain_words`.

    Args:
        strings: ``[B]`` strings.

    Returns:
        A ``tf.RaggedTensor`` ``[B, (words)]``.

    Example:

    >>> written_words(tf.constant(["L'Été, 2024 : Straße!"])).to_list()
    [[b'L', b'\xc3\x89t\xc3\xa9', b'2024', b'Stra\xc3\x9fe']]
    """
    plain = plain_words(strings)
    words = tf_text.regex_split(tf_text.normalize_utf8(strings, "NFC"), r"[^\pL\pN\pM]+")
    words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
    aligned = tf.equal(words.row_lengths(), plain.row_lengths())
    rows = tf.range(tf.shape(strings, out_type=tf.int64)[0])
    batch = tf.shape(strings, out_type=tf.int64)[0]
    return tf.gather(tf.concat([words, plain], axis=0), tf.where(aligned, rows, rows + batch))


# Surface text (reversible): a breaking space is dropped and marks the next word; the no-break
# spaces of French typography (before ``: ; ? !``, inside « ») are words of their own.
SPACE_MARK = "\u2581"
_BREAKING_SPACES = (
    r"[\s\x{0B}\x{85}\x{1680}\x{2000}-\x{2006}\x{2008}-\x{200A}\x{2028}\x{2029}\x{205F}"
    r"\x{3000}]+"
)
_NO_BREAK_SPACES = r"[\x{A0}\x{2007}\x{202F}]"
_SURFACE_KEPT = r"\pP|\pS|" + _NO_BREAK_SPACES + "|" + SINGLE_CHARACTER_WORDS
_SURFACE_DELIMITER = _BREAKING_SPACES + "|" + _SURFACE_KEPT


def surface_text(strings):
    """``[B]`` strings in NFC with every run of breaking spaces one space, stripped: the form
    of a reference that a surface translation is compared with (in-graph)."""
    text = tf_text.normalize_utf8(strings, "NFC")
    return tf.strings.strip(tf.strings.regex_replace(text, _BREAKING_SPACES, " "))


def surface_words(strings):
    """The words of ``[B]`` strings as written (NFC, case kept), cut as `subword_words` cuts
    them, each word that followed a breaking space starting with `SPACE_MARK`: a
    ``[B, (words)]`` ragged tensor of strings. Joining the words and turning the marks back
    into spaces gives `surface_text`.

    Args:
        strings: ``[B]`` strings.

    Returns:
        A ``tf.RaggedTensor`` ``[B, (words)]``.

    Example:

    >>> words = surface_words(tf.constant(["Fichier\u00a0: «\u00a0NUL\u00a0».txt"]))
    >>> [w.decode() for w in words[0].numpy()]
    ['Fichier', '\xa0', ':', '▁«', '\xa0', 'NUL', '\xa0', '»', '.', 'txt']
    """
    text = surface_text(strings)
    words, begins, ends = tf_text.regex_split_with_offsets(text, _SURFACE_DELIMITER, _SURFACE_KEPT)
    previous_end = tf.concat([begins[:, :1], ends[:, :-1]], axis=1)
    spaced = (begins > previous_end).flat_values
    marks = tf.where(spaced, SPACE_MARK, "")
    return words.with_flat_values(tf.strings.join([marks, words.flat_values]))

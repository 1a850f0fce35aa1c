"""WordPiece subwords, learned from the training text and applied in-graph (tensorflow-text).

One module for every family that reads text: `learn_wordpiece` learns a vocabulary of word
pieces of a chosen size from raw strings, and `WordPieceTokenizer` turns strings into piece ids
and back inside ``tf.data`` and inside exported serving functions.

Before pieces are cut, text goes through `keras_adl.text.normalization.subword_words`: the
Unicode normalisation of the word-level tokenizer (NFKC, full case folding, every Unicode space
a space, punctuation and symbols split off), and in addition every character of the scripts
written without spaces (Han, Hiragana, Katakana) is a word of its own, as BERT's tokenizer does
for Han. A Japanese sentence is then pieces of one character each instead of one long unknown
word.

The vocabulary is learned by tensorflow-text's WordPiece learner
(``tensorflow_text.tools.wordpiece_vocab``, the algorithm behind BERT's vocabularies): it
keeps every character seen (as a word start and as a ``##`` continuation) and the most useful
longer pieces, choosing the count threshold that gives about ``vocab_size`` pieces. Pieces are
applied by ``tensorflow_text.FastWordpieceTokenizer`` (longest match first, linear time); a
word it cannot cut (a character never seen in training) becomes ``<unk>``.

Ids follow `keras_adl.conventions`: 0-3 are ``<pad> <s> </s> <unk>``, pieces start at 4.
"""

import collections

import tensorflow as tf
import tensorflow_text as tf_text

from keras_adl.conventions import NUM_SPECIAL_TOKENS, SPECIAL_TOKENS, UNK
from keras_adl.text.normalization import (
    SINGLE_CHARACTER_WORDS,
    SPACE_MARK,
    joined_words,
    subword_words,
    surface_text,
    surface_words,
)

__all__ = ["SurfaceWordPieceTokenizer", "wordpiece_from_config"]


JOINER = "##"
_MAX_BYTES_PER_WORD = 100


def learn_wordpiece(texts, vocab_size, max_unique_chars=2000, surface=False):
    """Learns a WordPiece vocabulary of about ``vocab_size`` pieces from raw strings.

    Args:
        texts: a list of str (the training side of the data only).
        vocab_size: the number of pieces wanted (the learner chooses a count threshold, so the
            result can be a few percent off; every character kept is in it even if that
            exceeds the size). Continuation pieces of the characters of scripts written
            without spaces are dropped afterwards (they could never be used), so Chinese or
            Japanese text gives fewer pieces than asked.
        max_unique_chars: at most this many distinct characters are kept (the most frequent;
            a rarer character is ``<unk>``).
        surface: learn the pieces of `surface_words` (case and spacing kept, for
            `SurfaceWordPieceTokenizer`) instead of `subword_words`.

    Returns:
        The pieces, a list of str without the specials: word starts as they are,
        continuations with the ``##`` prefix.

    Raises:
        ValueError: ``vocab_size`` is not a positive integer, or ``texts`` holds no word.

    Example:

    >>> pieces = learn_wordpiece(["lower lowest", "newer newest"] * 5, 30)
    >>> pieces[:4], "lowest" in pieces, "##t" in pieces
    (['e', 'l', 'n', 'o'], True, True)
    """
    from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as learner

    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size <= 0:
        raise ValueError(f"`vocab_size` must be a positive integer; received {vocab_size!r}.")
    counts = collections.Counter()
    if texts:
        dataset = tf.data.Dataset.from_tensor_slices(list(texts)).batch(1024)
        for words in dataset.map(surface_words if surface else subword_words):
            counts.update(w.decode() for w in words.flat_values.numpy())
    counts.pop("", None)
    if not counts:
        raise ValueError("learn_wordpiece: `texts` holds no word to learn pieces from.")
    pieces = learner.learn(
        sorted(counts.items(), key=lambda item: (-item[1], item[0])),
        vocab_size,
        reserved_tokens=[],
        lower_thresh=1,
        max_token_length=_MAX_BYTES_PER_WORD,
        max_unique_chars=max_unique_chars,
        include_joiner_token=True,
        joiner=JOINER,
    )
    # A character of a script written without spaces (or a copy-through slot) is always a word
    # of its own, so its continuation piece ("##日") could never be used.
    unusable = tf.strings.regex_full_match(
        [p[len(JOINER) :] if p.startswith(JOINER) else "" for p in pieces] or [""],
        SINGLE_CHARACTER_WORDS,
    ).numpy()
    if surface:  # a marked character ("▁日") may go on with one: nothing is unusable
        unusable = [False] * len(pieces)
    pieces = [p for p, dead in zip(pieces, unusable) if p not in SPECIAL_TOKENS and not dead]
    if not pieces:
        raise ValueError("learn_wordpiece: `texts` holds no word to learn pieces from.")
    return pieces


class WordPieceTokenizer:
    """Strings to WordPiece ids and back, in-graph (no lookup table to track when exporting).

    Args:
        vocabulary: pieces as `learn_wordpiece` returns them (without the specials, which take
            ids 0-3).

    Example:

    >>> tok = WordPieceTokenizer(["un", "##known", "known", "a", "##b", "b"])
    >>> tok.tokenize(tf.constant(["Unknown ab", "a z"])).to_list()
    [[4, 5, 7, 8], [7, 3]]
    >>> [s.decode() for s in tok.detokenize(tf.constant([[4, 5, 7, 8, 2, 0]])).numpy()]
    ['unknown ab']
    """

    def __init__(self, vocabulary):
        self.vocabulary = list(vocabulary)
        if not self.vocabulary:
            raise ValueError("WordPieceTokenizer: `vocabulary` must hold at least one piece.")
        clashes = sorted(set(self.vocabulary) & set(SPECIAL_TOKENS))
        if clashes:
            raise ValueError(
                f"WordPieceTokenizer: `vocabulary` must not hold the special tokens; "
                f"received {clashes}."
            )
        self._tokenizer = tf_text.FastWordpieceTokenizer(
            vocab=list(SPECIAL_TOKENS) + self.vocabulary,
            suffix_indicator=JOINER,
            max_bytes_per_word=_MAX_BYTES_PER_WORD,
            token_out_type=tf.int64,
            unknown_token=SPECIAL_TOKENS[UNK],
            no_pretokenization=True,
        )
        self._pieces = tf.constant([""] * NUM_SPECIAL_TOKENS + self.vocabulary)
        self._labels = tf.constant(list(SPECIAL_TOKENS) + self.vocabulary)

    @property
    def size(self):
        """Ids in use, specials included (an ``Embedding``'s ``input_dim``)."""
        return len(self.vocabulary) + NUM_SPECIAL_TOKENS

    def tokenize(self, strings):
        """``[B]`` strings to ``[B, (pieces)]`` int64 ids (ragged)."""
        words = subword_words(strings)
        return self._tokenizer.tokenize(words).merge_dims(-2, -1)

    def pieces(self, strings):
        """``[B]`` strings to their ``[B, (pieces)]`` piece strings (ragged; ``<unk>`` for an
        unknown word), e.g. to label a picture."""
        return self.id_to_piece(self.tokenize(strings))

    def id_to_piece(self, ids):
        """The piece of each id (any shape, ragged too), specials by name (``<unk>``)."""
        if isinstance(ids, tf.RaggedTensor):
            return ids.with_flat_values(self.id_to_piece(ids.flat_values))
        return tf.gather(self._labels, tf.cast(ids, tf.int32))

    def detokenize(self, ids, strip=True):
        """Ids ``[B, L]`` (dense) to strings ``[B]``: pieces joined, words separated by one
        space, specials dropped (`subword_words` joined by spaces gives the same form).

        ``strip`` is there for the same argument of `SurfaceWordPieceTokenizer.detokenize`:
        these strings never start or end with a space.
        """
        pieces = tf.gather(self._pieces, tf.cast(ids, tf.int32))
        joined = tf.strings.reduce_join(pieces, axis=-1, separator=" ")
        # A continuation joins the piece before it (one space back: after an <unk>, rendered
        # empty, it starts a word of its own); one that opens the output opens a word.
        joined = tf.strings.regex_replace(joined, "^" + JOINER + "| " + JOINER, "")
        return tf.strings.strip(tf.strings.regex_replace(joined, " +", " "))

    def normalize(self, strings):
        """Strings ``[B]`` in the form `detokenize` writes them (normalised words joined by
        spaces), to compare outputs with references."""
        return joined_words(strings)

    def get_config(self):
        return {"vocabulary": self.vocabulary}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("surface", None)
        return cls(**config)


class SurfaceWordPieceTokenizer(WordPieceTokenizer):
    """WordPiece over text as it is written: case, punctuation spacing and no-break spaces
    survive the round trip, so a model's output pieces detokenize to text a user can ship
    (``Fichier\u00a0: introuvable.``, not ``fichier : introuvable .``).

    Words are `keras_adl.text.normalization.surface_words` (NFC; a word that followed a space
    starts with `SPACE_MARK`); learn the vocabulary with ``learn_wordpiece(..., surface=True)``.

    Example:

    >>> vocabulary = learn_wordpiece(["Le fichier\u00a0: «\u00a0NUL\u00a0».", "Un fichier."], 60,
    ...                              surface=True)
    >>> tok = SurfaceWordPieceTokenizer(vocabulary)
    >>> text = tf.constant(["Un fichier\u00a0: «\u00a0NUL\u00a0»."])
    >>> tok.detokenize(tok.tokenize(text).to_tensor()).numpy()[0] == text.numpy()[0]
    True
    """

    def tokenize(self, strings):
        return self._tokenizer.tokenize(surface_words(strings)).merge_dims(-2, -1)

    def detokenize(self, ids, strip=True):
        """Ids ``[B, L]`` (dense) to strings ``[B]``: the pieces joined as written (a
        continuation's ``##`` dropped, a `SPACE_MARK` a space), specials dropped; with
        ``strip=False`` a leading space stays (a continuation of a text that opens a new word
        is appended to the text as it is)."""
        pieces = tf.gather(self._pieces, tf.cast(ids, tf.int32))
        pieces = tf.strings.regex_replace(pieces, "^" + JOINER, "")
        joined = tf.strings.regex_replace(tf.strings.reduce_join(pieces, axis=-1), SPACE_MARK, " ")
        return tf.strings.strip(joined) if strip else joined

    def get_config(self):
        return {"vocabulary": self.vocabulary, "surface": True}

    def normalize(self, strings):
        """References ``[B]`` in the form `detokenize` writes text (NFC, breaking spaces one
        space), to compare outputs with them."""
        return surface_text(strings)


def wordpiece_from_config(config):
    """The tokenizer a ``get_config()`` describes: `SurfaceWordPieceTokenizer` where it says
    ``"surface"`` (text kept as written), else `WordPieceTokenizer` (normalised text; the
    configs of earlier versions, which have no ``"surface"``).

    Args:
        config: a tokenizer's ``get_config()`` dictionary.

    Returns:
        The tokenizer.

    Example:

    >>> tok = wordpiece_from_config(SurfaceWordPieceTokenizer(["A", "b"]).get_config())
    >>> type(tok).__name__, type(wordpiece_from_config({"vocabulary": ["a"]})).__name__
    ('SurfaceWordPieceTokenizer', 'WordPieceTokenizer')
    """
    if config.get("surface"):
        return SurfaceWordPieceTokenizer.from_config(config)
    return WordPieceTokenizer.from_config(config)

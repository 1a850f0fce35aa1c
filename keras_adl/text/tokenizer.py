"""Subword-, word- or character-level tokenization of text pairs, in-graph (tensorflow-text).

The vocabularies are learned from the training pairs. The same in-graph ops tokenize inside
``tf.data`` and inside the exported serving function, so a reloaded SavedModel needs
``import tensorflow_text`` (the ops are registered by that import) but not keras_adl.

Every level is Unicode-correct (`keras_adl.text.normalization`): NFKC and full case folding,
every Unicode space a space, punctuation split off. ``subword`` (the default of the ``pairs``
task) cuts words into WordPiece pieces (`keras_adl.text.wordpiece`), so no word is unknown and
Japanese or Chinese text is read character by character; ``word`` keeps whole words (a
Japanese run between punctuation is one word, usually unknown); ``char`` reads characters.
"""

import tensorflow as tf
import tensorflow_text as tf_text

from keras_adl.conventions import END, NUM_SPECIAL_TOKENS, PAD, SPECIAL_TOKENS, START, UNK
from keras_adl.text.copy_through import SLOTS, CopyThrough, choose_classes, foreign_words
from keras_adl.text.normalization import SPACE_MARK, normalize_words, plain_words, word_tokens
from keras_adl.text.vocabulary import count_vocabulary, lookup_table
from keras_adl.text.wordpiece import (
    JOINER,
    SurfaceWordPieceTokenizer,
    WordPieceTokenizer,
    learn_wordpiece,
)

LEVELS = ("subword", "word", "char")
# Pieces per side when ``build`` is not given a ``vocab_size`` at the subword level.
DEFAULT_SUBWORD_VOCAB_SIZE = 4000


class TextPairTokenizer:
    """Tokenizes (source, target) text pairs to fixed-shape, padded id batches.

    Args:
        source_vocabulary: a token list (without the specials, which take ids 0-3:
            ``<pad>``, ``<s>``, ``</s>``, ``<unk>``): WordPiece pieces at the subword level,
            words or characters otherwise.
        target_vocabulary: the same for the target side.
        level: ``"subword"`` (`keras_adl.text.wordpiece.WordPieceTokenizer`), ``"word"``
            (`keras_adl.text.normalization.word_tokens`) or ``"char"``
            (``tensorflow_text.UnicodeCharTokenizer``).
        cased_target: subword level only: the target side keeps its case and spacing
            (`keras_adl.text.wordpiece.SurfaceWordPieceTokenizer`), so `decode_target` writes
            text as the language writes it; the source side is normalised either way.
        copy_through: subword level only: names of `keras_adl.text.copy_through.CLASSES`
            (placeholders, options…) whose spans are slotted in sources and targets and copied
            back exactly from the source by `decode_target` (`CopyThrough`); empty by default.
        foreign: subword level only: script-aware copying, the foreign words of
            `keras_adl.text.copy_through.foreign_words` (a target language written in another
            script keeps these Latin words), or ``None``.

    Example:

    >>> tok = TextPairTokenizer.build(["a b", "b c"], ["x y", "y"], level="word")
    >>> tok.source_vocabulary
    ['b', 'a', 'c']
    >>> tok.encode_source(tf.constant(["a b zz"]), 5).numpy().tolist()
    [[5, 4, 3, 0, 0]]
    >>> sub = TextPairTokenizer.build(["Unknown words"], ["Mots inconnus"], vocab_size=40)
    >>> [t.decode() for t in sub.source_tokens(tf.constant(["unknowns"]))[0].numpy()][:2]
    ['unknown', '##s']
    """

    def __init__(
        self,
        source_vocabulary,
        target_vocabulary,
        level="subword",
        cased_target=False,
        copy_through=(),
        foreign=None,
    ):
        if level not in LEVELS:
            raise ValueError(f"`level` must be one of {LEVELS}; received {level!r}.")
        if cased_target and level != "subword":
            raise ValueError(f"`cased_target` needs the subword level; received level {level!r}.")
        if (copy_through or foreign) and level != "subword":
            raise ValueError(f"`copy_through` needs the subword level; received level {level!r}.")
        self.level = level
        self.cased_target = bool(cased_target)
        self.copy = CopyThrough(copy_through or (), foreign)
        self.source_vocabulary = list(source_vocabulary)
        self.target_vocabulary = list(target_vocabulary)
        if level == "subword":
            self._source_pieces = WordPieceTokenizer(self.source_vocabulary)
            target = SurfaceWordPieceTokenizer if cased_target else WordPieceTokenizer
            self._target_pieces = target(self.target_vocabulary)
            return
        self._source_table = self._table(self.source_vocabulary)
        self._target_table = self._table(self.target_vocabulary)
        self._target_tokens = tf.constant([""] * NUM_SPECIAL_TOKENS + self.target_vocabulary)

    @staticmethod
    def _table(vocabulary):
        return lookup_table(vocabulary, NUM_SPECIAL_TOKENS, UNK)

    @property
    def source_size(self):
        """Source ids in use, specials included (the encoder's ``Embedding`` input size)."""
        return len(self.source_vocabulary) + NUM_SPECIAL_TOKENS

    @property
    def target_size(self):
        """Target ids in use, specials included (the decoder's output size)."""
        return len(self.target_vocabulary) + NUM_SPECIAL_TOKENS

    def _tokenize(self, strings):
        if self.level == "word":
            return word_tokens(strings)
        codes = tf_text.UnicodeCharTokenizer().tokenize(normalize_words(strings))
        return tf.strings.unicode_encode(tf.expand_dims(codes, -1), "UTF-8")

    @classmethod
    def build(
        cls,
        sources,
        targets,
        level="subword",
        vocab_size=None,
        min_count=1,
        cased_target=False,
        copy_through=(),
    ):
        """Learns the vocabularies from training pairs.

        Args:
            sources: a list of str.
            targets: a list of str.
            level: as in the constructor.
            vocab_size: pieces per side at the subword level (default
                `DEFAULT_SUBWORD_VOCAB_SIZE`); at the word and character levels, the most
                frequent tokens kept per side (default: all).
            min_count: word and character levels: tokens seen fewer times are left out.
            cased_target: as in the constructor.
            copy_through: as in the constructor, ``"off"`` (none), or ``"auto"``: the classes
                these pairs keep unchanged (`keras_adl.text.copy_through.choose_classes`) and,
                for a target language written in another script than Latin, the Latin words
                its translations keep (`keras_adl.text.copy_through.foreign_words`).
                The vocabularies are learned from the slotted text and hold every slot.

        Returns:
            A `TextPairTokenizer` (of the class it is called on).
        """
        foreign = None
        if copy_through in (None, "off"):
            copy_through = ()
        elif copy_through == "auto":
            copy_through = (
                choose_classes(list(sources), list(targets)) if level == "subword" else ()
            )
            if level == "subword":
                foreign = foreign_words(list(sources), list(targets))
        if level == "subword":
            size = vocab_size or DEFAULT_SUBWORD_VOCAB_SIZE
            copy = CopyThrough(copy_through or (), foreign)
            sources, targets = copy.slot_pairs(sources, targets)
            source = learn_wordpiece(sources, size)
            target = learn_wordpiece(targets, size, surface=cased_target)
            if copy.active:  # every slot, seen in training or not, is a piece
                source = source + [s for s in SLOTS if s not in source]
                marked = (
                    [m + s for s in SLOTS for m in ("", SPACE_MARK, JOINER)]
                    if cased_target
                    else SLOTS
                )
                target = target + [s for s in marked if s not in target]
            return cls(source, target, level, cased_target, copy.classes, foreign)
        probe = cls([], [], level)

        def count(texts):
            return count_vocabulary(texts, probe._tokenize, min_count, vocab_size)

        return cls(count(sources), count(targets), level)

    def _slotted(self, side, strings, sources=None):
        """``strings`` with the copy-through spans slotted: a source's own, a target's those
        equal to a span of its ``sources`` (targets unchanged without them)."""
        if not self.copy.active:
            return strings
        if side == "source":
            return self.copy.protect(strings)[0]
        if sources is None:
            return strings
        return self.copy.protect_targets(strings, self.copy.protect(sources)[1])

    def _ragged_ids(self, side, strings):
        if self.level == "subword":
            pieces = self._source_pieces if side == "source" else self._target_pieces
            return pieces.tokenize(strings)
        table = self._source_table if side == "source" else self._target_table
        return table.lookup(self._tokenize(strings))

    def ragged_ids(self, strings, side="source", sources=None):
        """The ids of strings ``[B]`` on ``side`` (``"source"`` or ``"target"``), ragged, without
        ``<s>``, ``</s>``, padding or truncation; slotted as `encode_source` and
        `encode_target` slot them (a target's spans shared with its ``sources`` ``[B]``)."""
        if side not in ("source", "target"):
            raise ValueError(f"`side` must be 'source' or 'target'; received {side!r}.")
        return self._ragged_ids(side, self._slotted(side, strings, sources))

    def slot_pairs(self, sources, targets):
        """Training pairs (lists of str) with their copy-through spans slotted, as
        `encode_source` and `encode_target` slot them (`CopyThrough.slot_pairs`)."""
        return self.copy.slot_pairs(sources, targets)

    def _ids(self, side, strings, length, add_start=False, add_end=False, sources=None, slot=True):
        if slot:
            strings = self._slotted(side, strings, sources)
        ids = self._ragged_ids(side, strings)
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
        return self._ids("source", strings, length)

    def encode_target(self, strings, length, sources=None):
        """``(decoder_input, target)`` ``[B, length]``: ``<s> y`` and ``y </s>``. With
        copy-through, pass the pairs' ``sources`` ``[B]`` so the spans they share are slotted."""
        return (
            self._ids("target", strings, length, add_start=True, sources=sources),
            self._ids("target", strings, length, add_end=True, sources=sources),
        )

    def decode_target(self, ids, sources=None):
        """Strings from target ids ``[B, L]`` (specials dropped; words joined by spaces,
        pieces joined into words). With copy-through, pass the ``sources`` ``[B]`` the ids
        translate: each slot becomes its span (without them slots are dropped)."""
        if self.level == "subword":
            text = self._target_pieces.detokenize(ids)
            if not self.copy.active:
                return text
            if sources is None:
                sources = tf.fill(tf.shape(text), "")
            text = self.copy.restore(text, self.copy.protect(sources)[1])
            # A folded target writes normalised words: so do the spans put back.
            return text if self.cased_target else self._target_pieces.normalize(text)
        tokens = tf.gather(self._target_tokens, tf.cast(ids, tf.int32))
        separator = " " if self.level == "word" else ""
        joined = tf.strings.reduce_join(tokens, axis=-1, separator=separator)
        return (
            tf.strings.strip(tf.strings.regex_replace(joined, " +", " ")) if separator else joined
        )

    def target_tokens(self, ids):
        """The target token of each id ``[..]`` as a string (pieces with their ``##``,
        specials by name), e.g. to label the rows of an attention picture."""
        if self.level == "subword":
            return self._target_pieces.id_to_piece(ids)
        labels = tf.constant(list(SPECIAL_TOKENS) + self.target_vocabulary)
        return tf.gather(labels, tf.cast(ids, tf.int32))

    def source_tokens(self, strings):
        """The tokens of source strings ``[B]`` as the model sees them (ragged strings: the
        pieces, words or characters, before truncation; a copy-through slot is written as its
        span), e.g. to label an attention picture or count an input's length."""
        if self.level == "subword":
            pieces = self._source_pieces.pieces(self._slotted("source", strings))
            if not self.copy.active:
                return pieces
            spans = self.copy.protect(strings)[1]
            restored = self.copy.restore(
                pieces.flat_values, tf.gather(spans, pieces.value_rowids())
            )
            return pieces.with_flat_values(restored)
        return self._tokenize(strings)

    def token_counts(self, strings, side="source", sources=None, slot=True):
        """The number of tokens of each string ``[B]`` on ``side`` (``"source"`` or
        ``"target"``), before any truncation: int64 ``[B]`` (targets slotted as
        `encode_target` slots them with the same ``sources``; with ``slot=False`` the strings
        are already slotted, by `slot_batch`)."""
        if side not in ("source", "target"):
            raise ValueError(f"`side` must be 'source' or 'target'; received {side!r}.")
        if slot:
            strings = self._slotted(side, strings, sources)
        return self._ragged_ids(side, strings).row_lengths()

    def normalize_target(self, strings):
        """Target strings as `decode_target` writes them (normalised words joined by spaces;
        at the character level the normalised text; with ``cased_target`` the text as written,
        in NFC with single spaces), to compare predictions with references."""
        if self.level == "subword":
            return self._target_pieces.normalize(strings)
        if self.level == "char":
            return normalize_words(strings)
        return tf.strings.reduce_join(word_tokens(strings), axis=-1, separator=" ")

    def to_config(self):
        """A JSON-serialisable description, for `from_config`."""
        return {
            "level": self.level,
            "source": self.source_vocabulary,
            "target": self.target_vocabulary,
            "cased_target": self.cased_target,
            "copy_through": list(self.copy.classes),
            "foreign": self.copy.foreign,
        }

    @classmethod
    def from_config(cls, config):
        # Runs written before the cased target read as they were trained (case folded).
        return cls(
            config["source"],
            config["target"],
            config["level"],
            config.get("cased_target", False),
            config.get("copy_through", ()),
            config.get("foreign"),
        )

    @property
    def tables(self):
        """The lookup tables, to track when exporting a function that uses this tokenizer (at
        the subword level, whose pieces are constants of the graph, only copy-through's
        foreign-word table)."""
        if self.level == "subword":
            return self.copy.tables
        return [self._source_table, self._target_table]

    def dataset(
        self, sources, targets, batch_size, source_length, target_length, shuffle=True, seed=0
    ):
        """A ``tf.data.Dataset`` of ``({"source", "decoder_input"}, target)`` fixed-shape
        batches, tokenized in-graph (the last partial batch is dropped so shapes never change).
        Copy-through slots the pairs once, before the dataset, not in every epoch's map."""
        sources, targets = self.slot_pairs(sources, targets)
        dataset = tf.data.Dataset.from_tensor_slices((sources, targets))
        if shuffle:
            dataset = dataset.shuffle(len(sources), seed=seed)
        return self.slotted_batches(dataset, batch_size, source_length, target_length)

    def slot_batch(self, sources, targets):
        """A batch of pairs (``tf.string [B]`` each) with their copy-through spans slotted,
        in the graph: what `slot_pairs` gives for lists."""
        if not self.copy.active:
            return sources, targets
        slotted, spans = self.copy.protect(sources)
        return slotted, self.copy.protect_targets(targets, spans)

    def slotted_batches(self, pairs, batch_size, source_length, target_length):
        """`dataset`'s batches of a ``tf.data.Dataset`` of ``(source, target)`` strings already
        slotted (`slot_pairs`, `slot_batch`), in its order."""

        def encode(source, target):
            return {
                "source": self._ids("source", source, source_length, slot=False),
                "decoder_input": self._ids("target", target, target_length, True, slot=False),
            }, self._ids("target", target, target_length, add_end=True, slot=False)

        return (
            pairs.batch(batch_size, drop_remainder=True)
            .map(encode, num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE)
        )


class WordVectorPairTokenizer(TextPairTokenizer):
    """Text pairs whose sources are words of a word-vector vocabulary and whose targets are
    WordPiece pieces: CoVe's translation data (the encoder reads fixed word vectors).

    Sources are split by `keras_adl.text.normalization.plain_words` (the word2vec family's
    words: NFKC, case folded, punctuation dropped) and looked up in ``source_vocabulary``
    (``<unk>`` outside it), so source id ``i + 4`` is the word vectors' row ``i + 4``. Targets
    are as at the ``subword`` level of `TextPairTokenizer`; every other method is its.

    Args:
        source_vocabulary: the words of the word vectors (`WordVocabulary.words`), in id order.
        target_vocabulary: WordPiece pieces (`learn_wordpiece`).
        level: ignored: the targets are WordPiece pieces (the ``"subword"`` level).
        cased_target: must be False: CoVe's targets are case folded.
        copy_through: must be empty: CoVe's sources are words, nothing is copied through.
        foreign: must be ``None``, for the same reason.

    Example:

    >>> tok = WordVectorPairTokenizer(["the", "file"], ["le", "fichier"])
    >>> tok.encode_source(tf.constant(["The FILE, the end"]), 5).numpy().tolist()
    [[4, 5, 4, 3, 0]]
    """

    def __init__(
        self,
        source_vocabulary,
        target_vocabulary,
        level="subword",
        cased_target=False,
        copy_through=(),
        foreign=None,
    ):
        if cased_target:
            raise ValueError("WordVectorPairTokenizer: CoVe's targets are case folded.")
        if copy_through or foreign:
            raise ValueError("WordVectorPairTokenizer: CoVe's sources are words; no copy-through.")
        self.level = "subword"
        self.cased_target = False
        self.copy = CopyThrough(())  # CoVe's encoder reads words: nothing is slotted
        self.source_vocabulary = list(source_vocabulary)
        self.target_vocabulary = list(target_vocabulary)
        self._target_pieces = WordPieceTokenizer(self.target_vocabulary)
        self._source_table = self._table(self.source_vocabulary)
        self._source_words = plain_words

    def _ragged_ids(self, side, strings):
        if side == "source":
            return self._source_table.lookup(self._source_words(strings))
        return self._target_pieces.tokenize(strings)

    def source_tokens(self, strings):
        return self._source_words(strings)

    @property
    def tables(self):
        return [self._source_table]

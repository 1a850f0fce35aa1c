"""Retrieval-augmented translation (``--memory input``): the model reads each source followed
by its translation memory's best match, as neural fuzzy repair does (Bulte & Tezcan 2019;
Xu, Crego & Senellart 2020).

The encoder's input is ``source ids, <score>, match ids``: the source as the tokenizer encodes
it, one token for the match's score in tenths (``<score>`` stands for Xu et al.'s indication of
how similar the match is), and the match's target (repaired: the input's placeholders,
options… in place of the match's, `CopyThrough.repair`) in target pieces, offset past the
source and score ids so that the one embedding table holds both vocabularies, as
Bulte & Tezcan's concatenation does with a joint vocabulary. A match scoring below
`MIN_MATCH_SCORE` (their lowest threshold) is left out, so the input is the source alone. In
training a pair never retrieves itself (`TranslationMemory.lookup_stored`), so the model
learns from matches as fuzzy as those it will be given. The training memory holds the pairs
trained on; the export's holds all the training pairs (those too long to train on as well).
"""

import numpy as np
import tensorflow as tf

from keras_adl.conventions import PAD
from keras_adl.recipes.sequences.spec import EVALUATION_BATCH
from keras_adl.text.copy_through import CopyThrough

# Matches scoring below this are not given to the model (Bulte & Tezcan's lowest threshold).
MIN_MATCH_SCORE = 0.5
# One score token per tenth: floor(10 × score) in 0..10.
SCORE_LEVELS = 11


# A memory's translation missing a placeholder of its input is broken (msgfmt refuses it), so
# a fuzzy match is trusted only when it holds them all. Options and names are not checked:
# measured on en->ru, requiring them too left the model sources the memory did better on.
_PLACEHOLDERS = CopyThrough(["format"])


def complete_matches(queries, translations):
    """Whether each translation ``[B]`` of a memory's match holds every format placeholder of
    its query ``[B]`` (`keras_adl.text.CopyThrough.holds`): bool ``[B]``."""
    return _PLACEHOLDERS.holds(queries, translations)


def repaired_matches(copy, queries, found):
    """The target of each match of `TranslationMemory.lookup`'s ``found`` for ``queries``
    ``[B]``: as stored for an exact match, otherwise with the spans copy-through knows made the
    query's (`keras_adl.text.CopyThrough.repair` with ``copy``): ``[B]`` strings."""
    repaired = copy.repair(queries, found["source"], found["target"])
    return tf.where(found["exact"], found["target"], repaired)


class MatchInput:
    """Encodes sources with their best match for a model trained with ``--memory input``.

    Args:
        tokenizer: the run's `keras_adl.text.TextPairTokenizer`.

    Example:

    >>> from keras_adl.text import TextPairTokenizer, TranslationMemory
    >>> tok = TextPairTokenizer.build(["open file", "save file"], ["ouvrir", "enregistrer"],
    ...                               level="word")
    >>> inputs = MatchInput(tok)
    >>> memory = TranslationMemory(["open file"], ["ouvrir"])
    >>> ids = inputs.encode(memory, tf.constant(["open files", "quit"]), 3).numpy().tolist()
    >>> score, match = tok.source_size + 9, tok.source_size + SCORE_LEVELS + 5  # 0.94; ouvrir
    >>> ids == [[5, 3, score, match, 0, 0, 0], [3, 0, 0, 0, 0, 0, 0]]  # "quit": no match
    True
    """

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer

    @property
    def vocab_size(self):
        """The encoder's input size: the source ids, the score tokens and the target ids."""
        return self.tokenizer.source_size + SCORE_LEVELS + self.tokenizer.target_size

    def length(self, max_length):
        """The encoder's input length for sources and matches of ``max_length`` tokens."""
        return 2 * max_length + 1

    def ids(self, queries, found, max_length):
        """Encoder ids ``[B, 2 max_length + 1]`` int32 of ``queries`` ``[B]`` and their
        matches ``found`` (`TranslationMemory.lookup`'s, targets repaired or not): each cut to
        ``max_length`` tokens, 0-padded at the end."""
        tokenizer = self.tokenizer
        source = tokenizer.ragged_ids(queries, "source")[:, :max_length]
        match = tokenizer.ragged_ids(found["target"], "target", queries)[:, :max_length]
        given = (found["index"] >= 0) & (found["score"] >= MIN_MATCH_SCORE)
        level = tf.clip_by_value(
            tf.cast(tf.floor(found["score"] * 10.0), tf.int64), 0, SCORE_LEVELS - 1
        )
        marker = tf.RaggedTensor.from_tensor(
            (tokenizer.source_size + level)[:, None]
        ).with_row_splits_dtype(match.row_splits.dtype)
        extra = tf.concat([marker, match + tokenizer.source_size + SCORE_LEVELS], axis=1)
        keep = tf.logical_and(tf.ones_like(extra, tf.bool), given[:, None])
        extra = tf.ragged.boolean_mask(extra, keep)
        ids = tf.concat([tf.cast(source, tf.int64), tf.cast(extra, tf.int64)], axis=1)
        return tf.cast(ids.to_tensor(PAD, shape=[None, self.length(max_length)]), tf.int32)

    def encode(self, memory, queries, max_length):
        """`ids` of ``queries`` ``[B]`` with their best match in ``memory`` (a
        `keras_adl.text.TranslationMemory`), repaired (`repaired_matches`)."""
        return self._repaired_ids(queries, memory.lookup(queries), max_length)

    def _repaired_ids(self, queries, found, max_length):
        found = dict(found, target=repaired_matches(self.tokenizer.copy, queries, found))
        return self.ids(queries, found, max_length)

    def dataset(
        self, memory, sources, targets, batch_size, max_length, stored=True, shuffle=True, seed=0
    ):
        """A ``tf.data.Dataset`` of ``({"source", "decoder_input"}, target)`` fixed-shape batches
        of pairs: with ``stored``, ``memory``'s own pairs in its order (pair ``i`` never
        retrieves itself), otherwise pairs it does not hold (held-out ones). The inputs are
        retrieved and encoded once, before the dataset; the last partial batch is dropped."""
        if stored and memory.size != len(sources):
            raise ValueError(
                f"MatchInput.dataset: `memory` holds {memory.size} pairs, not these "
                f"{len(sources)}; give stored=False for pairs it does not hold."
            )
        everything = memory.lookup_stored() if stored else None
        inputs, decoder_inputs, labels = [], [], []
        for start in range(0, len(sources), EVALUATION_BATCH):
            end = start + EVALUATION_BATCH
            batch = tf.constant(sources[start:end], tf.string)
            ends = tf.constant(targets[start:end], tf.string)
            if everything is None:
                found = memory.lookup(batch)
            else:
                found = {k: tf.constant(v[start:end]) for k, v in everything.items()}
            inputs.append(self._repaired_ids(batch, found, max_length).numpy())
            decoder_input, label = self.tokenizer.encode_target(ends, max_length, batch)
            decoder_inputs.append(decoder_input.numpy())
            labels.append(label.numpy())
        inputs, decoder_inputs, labels = (
            np.concatenate(x) for x in (inputs, decoder_inputs, labels)
        )
        dataset = tf.data.Dataset.from_tensor_slices(
            ({"source": inputs, "decoder_input": decoder_inputs}, labels)
        )
        if shuffle:
            dataset = dataset.shuffle(len(sources), seed=seed)
        return dataset.batch(batch_size, drop_remainder=True).prefetch(tf.data.AUTOTUNE)

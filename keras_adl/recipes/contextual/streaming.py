"""The biLM's corpus streamed from disk (``keras-adl train pretrain_bilm``, ``--data`` or the
installed GCIDE): memory follows the vocabulary and the model, never the corpus.

The corpus is a `keras_adl.data.text_streams.TextStream`, tokenized in the graph
(`keras_adl.text.normalization.plain_words`) and cut into windows of at most ``max_words`` words
that never cross a document (`keras_adl.data.bilm.block_windows`). One pass before training:

- each document goes to the held-out split by a seeded hash of its words (`HELD_OUT_FRACTION`
  of the documents; every copy of a repeated document with it), and its first
  `HELD_OUT_WINDOWS` windows are kept for the figures; a corpus the hash holds nothing of gives
  its first document;
- the training documents' words are counted (pruned as gensim's ``max_vocab_size`` is past
  ``MAX_COUNTED_WORDS`` distinct words): the output vocabulary is the ``vocab_size`` most
  frequent, and the counts are the unigram baseline (`counts_perplexity`);
- the training windows are counted (recorded; an epoch is ``--steps`` steps).

Each epoch reads the text again, shuffles the training windows in a buffer of
`SHUFFLE_WINDOWS` and batches them as `keras_adl.data.bilm.window_batches` does.
"""

import numpy as np
import tensorflow as tf

from keras_adl.conventions import NUM_SPECIAL_TOKENS, UNK
from keras_adl.data.bilm import block_windows
from keras_adl.data.skipgrams import WordVocabulary
from keras_adl.data.text_streams import MAX_COUNTED_WORDS, TextStream, block_lines
from keras_adl.recipes.contextual.spec import HELD_OUT_FRACTION, HELD_OUT_WINDOWS, SPLIT_SEED
from keras_adl.text.normalization import plain_words
from keras_adl.training.rundir import RecipeError

__all__ = ["StreamedWindows"]

# Training windows shuffled at a time (about 25 MB of 32-word windows).
SHUFFLE_WINDOWS = 20_000
# Buckets of the split hash; documents below HELD are held out.
SPLIT_BUCKETS = 10_000
HELD = int(HELD_OUT_FRACTION * SPLIT_BUCKETS)


def _windows_of(block, by_paragraph, max_words):
    """A block's windows with their documents' keys (their words joined by spaces) and
    whether each is held out, its words and their documents' held-out flags, and its number
    of documents."""
    lines, starts, documents = block_lines(block, by_paragraph)
    words = plain_words(lines)
    windows, owners = block_windows(words, documents, max_words)
    owner_of_word = tf.repeat(documents, tf.cast(words.row_lengths(), tf.int32))
    count = tf.reduce_max(documents) + 1
    keys = tf.strings.unsorted_segment_join(words.flat_values, owner_of_word, count, separator=" ")
    held = tf.strings.to_hash_bucket_strong(keys, SPLIT_BUCKETS, key=[SPLIT_SEED, 62]) < HELD
    return (
        windows,
        tf.gather(keys, owners),
        tf.gather(held, owners),
        words.flat_values,
        tf.gather(held, owner_of_word),
        tf.reduce_sum(tf.cast(starts, tf.int32)),
    )


class StreamedWindows:
    """The biLM's corpus on disk, split and counted in one pass (the module's pass).

    Args:
        data: ``--data`` (`TextStream`'s forms; ``None``: the installed GCIDE).
        samples: read at most this many documents.
        vocab_size: the output words (the most frequent training words).
        max_words: the longest window.

    Attributes:
        vocabulary: the output `WordVocabulary`.
        held: the held-out windows (lists of str, at most `HELD_OUT_WINDOWS`).
        documents: the documents read.
        train_windows: the training windows of one pass.
        counts: int64 ``[vocabulary.size]`` the training words' counts by output id
            (``<unk>``: the words outside the vocabulary).

    Raises:
        RecipeError: the corpus cannot be read, or holds too few windows.
    """

    def __init__(self, data, samples, vocab_size, max_words):
        try:
            self.stream = TextStream(data, documents=samples)
        except (OSError, ValueError) as error:
            raise RecipeError(str(error)) from None
        self.max_words = max_words
        errors = []
        found = self.stream.dataset(errors).map(
            lambda block, by_paragraph: _windows_of(block, by_paragraph, max_words),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        counts, held, pruned = {}, [], 0
        documents = train_windows = 0
        first = None  # the first training document's key and windows: a fallback held-out one
        for windows, keys, held_window, words, held_word, block_documents in found.prefetch(
            2
        ).as_numpy_iterator():
            documents += int(block_documents)
            if len(held) < HELD_OUT_WINDOWS:
                held.extend(windows[held_window][: HELD_OUT_WINDOWS - len(held)].tolist())
            trained = ~held_window
            train_windows += int(trained.sum())
            if first is None and trained.any():
                key = keys[trained][0]
                first = (key, windows[trained & (keys == key)].tolist())
            unique, block_counts = np.unique(words[~held_word], return_counts=True)
            for word, count in zip(unique.tolist(), block_counts.tolist()):
                counts[word] = counts.get(word, 0) + count
            if len(counts) > MAX_COUNTED_WORDS:
                pruned += 1
                for word in [w for w, c in counts.items() if c <= pruned]:
                    del counts[word]
        if errors:
            raise RecipeError(str(errors[0]))
        self._excluded = [b"\x00"]  # NUL: never a document's words
        if not held and first is not None and train_windows > len(first[1]):
            key, windows = first  # a small corpus the hash held nothing of
            held = windows[:HELD_OUT_WINDOWS]
            train_windows -= len(windows)
            for word in (w for window in windows for w in window if w):
                if word in counts:  # (a word pruned from the counts stays out)
                    counts[word] -= 1
            self._excluded = [key]
        self.documents, self.train_windows = documents, train_windows
        self.held = [[w.decode("utf-8") for w in window if w] for window in held]
        words = {w.decode("utf-8"): c for w, c in counts.items() if c > 0}
        try:
            self.vocabulary = WordVocabulary.from_counts(words, min_count=1, max_size=vocab_size)
        except ValueError as error:
            raise RecipeError(f"{data or 'GCIDE'}: {error}") from None
        self.counts = np.zeros(self.vocabulary.size, "int64")
        self.counts[NUM_SPECIAL_TOKENS:] = self.vocabulary.counts
        self.counts[UNK] = sum(words.values()) - int(self.vocabulary.counts.sum())

    def windows(self, seed=0):
        """The training windows, read again from disk each pass, shuffled in a buffer of
        `SHUFFLE_WINDOWS` (anew each pass), endlessly: ``[max_words]`` strings each."""
        keys = tf.constant(self._excluded)
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(keys, tf.ones_like(keys, tf.int32)), 0
        )

        def training(block, by_paragraph):
            windows, keys, held, *_ = _windows_of(block, by_paragraph, self.max_words)
            return tf.boolean_mask(windows, ~held & (table.lookup(keys) == 0))

        windows = self.stream.dataset().map(training, num_parallel_calls=tf.data.AUTOTUNE)
        windows = windows.unbatch().shuffle(
            SHUFFLE_WINDOWS, seed=seed, reshuffle_each_iteration=True
        )
        return windows.repeat()

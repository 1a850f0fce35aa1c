"""The pretraining corpus streamed from disk (``keras-adl train pretrain_mlm|pretrain_lm
--data``): memory follows the tokenizer and the model, never the corpus.

The corpus is a `keras_adl.data.text_streams.TextStream`, read in two passes:

1. **Splits and a sample.** Each document goes to a split by a seeded hash of its text
   (`split_buckets`), so the splits need no list of the corpus and every copy of a repeated
   document lands in the same split: `HELD_OUT_FRACTION` of the documents are held out (the
   first `HELD_OUT_KEPT` kept for the figures; a small corpus the hash holds nothing of gives
   its first document), a tenth of the others are candidates for the
   development split (the first `DEVELOPMENT_DOCUMENTS` distinct ones form it; the others
   train), and the first `TOKENIZER_SAMPLE` distinct training documents are the sample the
   WordPiece vocabulary is learned on. The pass counts the training documents and their
   sentence pairs: the masked LM's epoch.
2. **Training.** The masked LM reads the training documents again each epoch, shuffled in a
   buffer of `SHUFFLE_DOCUMENTS` (`StreamedCorpus.mlm_dataset`; sentence pairs drawn by
   `keras_adl.data.pretraining.stream_sentence_pairs`). The causal LM tokenizes them once,
   ``[SEP]`` after each, into a temporary file of piece ids (4 bytes a piece,
   `StreamedCorpus.encode`); their piece counts give the unigram baseline and the epoch's
   length (windows of ``L + 1`` pieces, one piece of overlap, as
   `keras_adl.data.pretraining.lm_windows` cuts them), and each epoch reads the file again,
   the windows shuffled in a buffer of `SHUFFLE_WINDOWS`.

With ``pairs`` (``--segments pairs``), a file without blank lines gives its lines
`LINES_PER_BLOCK` at a time as one document, one sentence each (`load_corpus`'s ``blocks``).
"""

import os

import numpy as np
import tensorflow as tf

from keras_adl.data.pretraining import SEP, split_sentences
from keras_adl.data.text_corpora import LINES_PER_BLOCK
from keras_adl.data.text_streams import LINE_BREAK, TextStream, document_texts
from keras_adl.recipes._development import MIN_FOR_DEVELOPMENT
from keras_adl.recipes.pretraining.spec import (
    DEVELOPMENT_DOCUMENTS,
    HELD_OUT_FRACTION,
    SPLIT_SEED,
)
from keras_adl.training.rundir import RecipeError

__all__ = ["EncodedPieces", "StreamedCorpus", "split_buckets"]

# Held-out documents kept in memory for the figures (the others are only left out of training).
HELD_OUT_KEPT = 5_000
# Distinct training documents the WordPiece vocabulary is learned on (`learn_tokenizer`'s cap).
TOKENIZER_SAMPLE = 200_000
# Windows (causal LM) and documents (masked LM) shuffled at a time.
SHUFFLE_WINDOWS = 10_000
SHUFFLE_DOCUMENTS = 10_000
# Buckets of the split hash: held out below HELD, development candidates below DEVELOPMENT.
SPLIT_BUCKETS = 10_000
HELD = int(HELD_OUT_FRACTION * SPLIT_BUCKETS)
DEVELOPMENT = HELD + (SPLIT_BUCKETS - HELD) // 10
# Piece ids read at a time from the file.
_RUN = 1 << 16


def split_buckets(texts):
    """The split bucket of each text, in ``[0, SPLIT_BUCKETS)``: a keyed hash (SipHash, key
    from `SPLIT_SEED`) of its text, the same in every run and for every copy."""
    return tf.strings.to_hash_bucket_strong(texts, SPLIT_BUCKETS, key=[SPLIT_SEED, 61])


def _split(blocks, sentences=False):
    """The documents of a dataset of ``(block, by_paragraph)`` with their buckets and, with
    ``sentences``, their numbers of sentences (`split_sentences`; else zeros): a dataset of
    ``([D] texts, [D] buckets, [D] sentences)`` per block."""

    def split(block, by_paragraph):
        texts = document_texts(block, by_paragraph)
        if sentences:
            counts = tf.cast(split_sentences(texts).row_lengths(), tf.int32)
        else:
            counts = tf.zeros_like(texts, tf.int32)
        return texts, split_buckets(texts), counts

    return blocks.map(split, num_parallel_calls=tf.data.AUTOTUNE)


def _as_written(text):
    """A document kept in memory as the in-memory readers give it: lines of a group joined by
    newlines (`LINE_BREAK` is the stream's joiner)."""
    return text.decode("utf-8").replace(LINE_BREAK, "\n")


class StreamedCorpus:
    """A pretraining corpus on disk, split and sampled in one pass (the module's step 1).

    Args:
        data: ``--data`` (`TextStream`'s forms).
        samples: read at most this many documents.
        pairs: read a file without blank lines as groups of `LINES_PER_BLOCK` lines, one
            sentence each (``--segments pairs``).

    Attributes:
        documents: the documents read.
        train_documents: those that train.
        train_pairs: the sentence pairs (a sentence and its successor) of those (counted with
            ``pairs`` only; else 0).
        held_out: the first `HELD_OUT_KEPT` held-out documents (list of str).
        development: the development documents (list of str; empty below
            ``MIN_FOR_DEVELOPMENT`` distinct training documents).
        sample: the tokenizer's sample of distinct training documents (list of str).

    Raises:
        RecipeError: the corpus cannot be read, or holds too few documents.
    """

    def __init__(self, data, samples, pairs=False):
        errors = []
        try:
            self.stream = TextStream(
                data, documents=samples, lines_per_document=LINES_PER_BLOCK if pairs else 1
            )
        except (OSError, ValueError) as error:
            raise RecipeError(str(error)) from None
        self.data = data
        held, development, sample = [], {}, {}
        documents = train = train_pairs = 0

        found = _split(self.stream.dataset(errors), sentences=pairs)
        for texts, buckets, sentences in found.as_numpy_iterator():
            for text, bucket, count in zip(texts.tolist(), buckets.tolist(), sentences.tolist()):
                documents += 1
                if bucket < HELD:
                    if len(held) < HELD_OUT_KEPT:
                        held.append(text)
                    continue
                if bucket < DEVELOPMENT and (
                    text in development or len(development) < DEVELOPMENT_DOCUMENTS
                ):
                    development[text] = count
                    continue
                train += 1
                train_pairs += max(count - 1, 0)
                if len(sample) < TOKENIZER_SAMPLE:
                    sample[text] = count
        if errors:
            raise RecipeError(str(errors[0]))
        if documents >= samples:  # the corpus may go on: say where reading stopped
            print(
                f"{data}: read the first {samples:,} documents (--samples); a larger --samples "
                "reads more"
            )
        excluded = list(development)
        if not held and len(sample) > 1:  # a small corpus the hash held nothing of
            first = next(iter(sample))
            held.append(first)
            train_pairs -= max(sample.pop(first) - 1, 0)
            excluded.append(first)
            train -= 1
        if len(sample) < MIN_FOR_DEVELOPMENT or len(development) < 2:
            train += len(development)  # too few to set some aside: they train
            train_pairs += sum(max(count - 1, 0) for count in development.values())
            for text, count in development.items():
                if len(sample) < TOKENIZER_SAMPLE:
                    sample[text] = count
            excluded = [t for t in excluded if t not in development]
            development = {}
        if train < 2 or not held:
            raise RecipeError(
                f"{data}: the corpus holds {documents} documents, {train} to train and "
                f"{len(held)} held out; give more text (a file with blank lines is read as "
                "paragraphs, one without as one document per line)"
            )
        self.documents, self.train_documents, self.train_pairs = documents, train, train_pairs
        self.held_out = [_as_written(t) for t in held]
        self.development = [_as_written(t) for t in development]
        self.sample = [_as_written(t) for t in sample]
        self._excluded = excluded or [b"\x00"]  # NUL: never a document

    def training_texts(self):
        """The training documents, read again from disk: a dataset of ``[D]`` strings."""
        keys = tf.constant(self._excluded)
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(keys, tf.ones_like(keys, tf.int32)), 0
        )

        def train(texts, buckets, _):
            keep = (buckets >= HELD) & (table.lookup(texts) == 0)
            return tf.boolean_mask(texts, keep)

        return _split(self.stream.dataset()).map(train, num_parallel_calls=tf.data.AUTOTUNE)

    def shuffled_documents(self, seed=0):
        """The training documents one at a time, endlessly, shuffled in a buffer of
        `SHUFFLE_DOCUMENTS` (anew each pass): the masked LM's input
        (`keras_adl.recipes.pretraining.data.mlm_dataset`)."""
        documents = self.training_texts().unbatch()
        return documents.shuffle(
            SHUFFLE_DOCUMENTS, seed=seed, reshuffle_each_iteration=True
        ).repeat()

    def encode(self, tokenizer, path):
        """Step 2 of the causal LM: tokenizes the training documents once into the piece
        file ``path``.

        Returns:
            An `EncodedPieces`.
        """

        def pieces(texts):
            ids = tokenizer.tokenize(texts)
            ends = tf.fill([tf.shape(texts)[0], 1], tf.cast(SEP, ids.dtype))
            return tf.cast(tf.concat([ids, ends], axis=1).flat_values, tf.int32)

        counts = np.zeros(tokenizer.size, dtype="int64")
        with open(path, "wb") as f:
            for run in self.training_texts().map(pieces).prefetch(2).as_numpy_iterator():
                run.astype("<i4").tofile(f)
                counts += np.bincount(run, minlength=tokenizer.size)
        return EncodedPieces(path, counts)


class EncodedPieces:
    """The training documents' piece ids on disk (`StreamedCorpus.encode`) and their counts.

    Args:
        path: the file (int32 piece ids, ``[SEP]`` after each document).
        counts: int64 ``[V]`` the count of each piece id in it.
    """

    def __init__(self, path, counts):
        self.path, self.counts = path, counts

    @property
    def pieces(self):
        """The pieces in the file."""
        return int(self.counts.sum())

    def windows(self, sequence_length):
        """The causal-LM windows of one pass: ``(pieces - 1) // L`` (`lm_windows`' count)."""
        return max(0, (self.pieces - 1) // sequence_length)

    def _runs(self):
        with open(self.path, "rb") as f:
            while len(run := np.fromfile(f, dtype="<i4", count=_RUN)):
                yield run

    def windows_dataset(self, sequence_length):
        """The file's pieces cut into windows of ``L + 1``, one piece shared with the next
        (`lm_windows`' windows, in order), endlessly: int32 ``[L + 1]`` each."""
        runs = tf.data.Dataset.from_generator(
            self._runs, output_signature=tf.TensorSpec([None], tf.int32)
        )
        spans = runs.repeat().rebatch(sequence_length, drop_remainder=True)  # [L] each
        nexts = spans.skip(1).map(lambda span: span[:1])
        return tf.data.Dataset.zip(spans, nexts).map(lambda a, b: tf.concat([a, b], 0))

    def dataset(self, sequence_length, batch_size, seed=0):
        """Endless batches of ``(inputs, targets)`` windows, int32 ``[B, L]`` each
        (`windows_dataset`), shuffled in a buffer of `SHUFFLE_WINDOWS`, read again each
        epoch."""
        windows = self.windows_dataset(sequence_length)
        windows = windows.shuffle(SHUFFLE_WINDOWS, seed=seed, reshuffle_each_iteration=True)
        batches = windows.batch(batch_size, drop_remainder=True)
        return batches.map(lambda w: (w[:, :-1], w[:, 1:])).prefetch(2)

    def remove(self):
        """Deletes the file."""
        if os.path.exists(self.path):
            os.remove(self.path)

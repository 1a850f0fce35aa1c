"""A user's labelled documents streamed from disk (``keras-adl train documents --data``): memory
follows the vocabulary and the model, never the corpus.

One pass reads the documents (`keras_adl.data.corpora.iter_documents`) and decides each one's
split by a keyed hash of its text (`split_bucket`), so the splits need no list and every copy
of a repeated document lands in the same split:

- `TEST_FRACTION` of the documents are the test split; the first `TEST_KEPT` of them are kept
  for the figures (a standard error under half a point of accuracy), the others are only left
  out of training;
- a tenth of the others are development candidates: the first `DEVELOPMENT_DOCUMENTS` form the
  development split, the rest train;
- the training documents are written to a temporary file per class (TFRecord, their UTF-8
  text) while their words and lengths are counted: the vocabulary (`MAX_COUNTED_WORDS`
  distinct words at most, pruned as gensim's ``max_vocab_size`` does) and the histograms the
  padded shape and the share it cuts are read from (`LengthCounts`).

Each epoch reads the class files again, drawn in proportion to the classes' sizes (a file
sorted by label still gives mixed batches) and shuffled in a buffer of `SHUFFLE_DOCUMENTS`.

A small corpus the hash leaves without a test document gives its first training document;
below ``MIN_FOR_DEVELOPMENT`` training documents, the development candidates train.
"""

import collections
import hashlib
import os
import shutil
import tempfile
import weakref

import numpy as np
import tensorflow as tf

from keras_adl.data.corpora import iter_documents
from keras_adl.data.splits import hash_bucket
from keras_adl.data.text_streams import MAX_COUNTED_WORDS
from keras_adl.recipes._development import MIN_FOR_DEVELOPMENT
from keras_adl.recipes.documents.data import capped_shape
from keras_adl.recipes.documents.spec import (
    DEVELOPMENT_DOCUMENTS,
    MAX_SENTENCES,
    MAX_VOCABULARY,
    SIZE_PERCENTILE,
    TEST_FRACTION,
)
from keras_adl.text import DocumentTokenizer
from keras_adl.text.vocabulary import vocabulary_from_counts
from keras_adl.training.rundir import RecipeError

__all__ = ["LengthCounts", "StreamedDocuments", "split_bucket"]

# Test documents kept in memory for the figures.
TEST_KEPT = 10_000
# Training documents shuffled at a time (after the classes are drawn in proportion).
SHUFFLE_DOCUMENTS = 10_000
# Buckets of the split hash: test below TEST, development candidates below DEVELOPMENT.
SPLIT_BUCKETS = 10_000
TEST = int(TEST_FRACTION * SPLIT_BUCKETS)
DEVELOPMENT = TEST + (SPLIT_BUCKETS - TEST) // 10
# Fixed, so that a resumed run (and a later `tune`) sees the same split.
_SPLIT_KEY = b"keras-adl documents split"
# Training documents tokenized at a time while counting.
_COUNT_BATCH = 512


def split_bucket(text):
    """The split bucket of a document, in ``[0, SPLIT_BUCKETS)``: a keyed hash (BLAKE2b) of
    its UTF-8 text, the same in every run and for every copy.

    >>> split_bucket("Win money now") == split_bucket("Win money now")
    True
    """
    return hash_bucket(text, _SPLIT_KEY, SPLIT_BUCKETS)


def _percentile(counts, percentile):
    """``np.percentile`` (linear) of the values a histogram ``{value: count}`` holds."""
    values = sorted(counts)
    cumulative = np.cumsum([counts[v] for v in values])
    rank = (cumulative[-1] - 1) * percentile / 100

    def at(position):
        return values[int(np.searchsorted(cumulative, position, side="right"))]

    low, high = int(np.floor(rank)), int(np.ceil(rank))
    return at(low) + (at(high) - at(low)) * (rank - low)


class LengthCounts:
    """Histograms of the training documents' lengths: each document's sentence count, and
    each sentence's word count by its position (positions from ``positions`` on are one
    bucket). They give what `keras_adl.recipes.documents.data.fitted_shape` and
    `~keras_adl.recipes.documents.data.cut_shares` give from the full arrays, in memory that
    does not grow with the corpus.

    Args:
        positions: the sentence positions told apart: at least the ``S`` asked of `cut_shares`.
    """

    def __init__(self, positions=MAX_SENTENCES):
        self.positions = positions
        self.documents = collections.Counter()  # sentences per document
        self.sentences = collections.Counter()  # (position, words) per sentence

    def add(self, sentences, positions, words):
        """Counts a batch: ``sentences`` ``[B]`` per document; ``positions`` and ``words``
        ``[N]`` of its ``N`` sentences."""
        self.documents.update(dict(zip(*np.unique(sentences, return_counts=True))))
        keys = np.stack([np.minimum(positions, self.positions), words], axis=1)
        if len(keys):
            unique, counts = np.unique(keys, axis=0, return_counts=True)
            self.sentences.update({(int(p), int(w)): int(c) for (p, w), c in zip(unique, counts)})

    def fitted_shape(self, percentile=SIZE_PERCENTILE):
        """`fitted_shape` of the counted documents."""
        words = collections.Counter()
        for (_, w), c in self.sentences.items():
            words[w] += c
        s = int(np.ceil(_percentile(self.documents, percentile))) if self.documents else 1
        w = int(np.ceil(_percentile(words, percentile))) if words else 1
        return capped_shape(s, w)

    def cut_shares(self, max_sentences, max_words):
        """`cut_shares` of the counted documents padded to ``max_sentences`` × ``max_words``
        (``max_sentences`` at most ``positions``)."""
        total_sentences = sum(n * c for n, c in self.documents.items())
        kept_sentences = sum(min(n, max_sentences) * c for n, c in self.documents.items())
        total_words = sum(w * c for (_, w), c in self.sentences.items())
        kept_words = sum(
            min(w, max_words) * c for (p, w), c in self.sentences.items() if p < max_sentences
        )
        return {
            "sentences_cut": 1 - kept_sentences / total_sentences if total_sentences else 0.0,
            "words_cut": 1 - kept_words / total_words if total_words else 0.0,
        }


def _batch_counts(split):
    """A function from a ``tf.string [B]`` batch to its distinct words with their counts, its
    documents' sentence counts, and its sentences' positions and word counts (``split``: a
    `DocumentTokenizer`'s)."""

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def counts(texts):
        words = split(texts)
        unique, _, found = tf.unique_with_counts(words.flat_values)
        per_sentence = words.row_lengths(axis=2)
        positions = tf.ragged.range(per_sentence.row_lengths()).flat_values
        return unique, found, words.row_lengths(axis=1), positions, per_sentence.flat_values

    return counts


class StreamedDocuments:
    """A user's labelled documents on disk, split and counted in one pass (the module's
    docstring).

    Args:
        data: ``--data``: a ``<label>/<doc>.txt`` tree or a ``label<TAB>text`` file.
        samples: train on at most this many documents (the first ones of the training split).
        positions: the sentence positions the length histograms tell apart (`LengthCounts`).

    Attributes:
        documents: the documents read.
        train_documents: those that train.
        class_names: the sorted labels.
        class_counts: the training documents of each class.
        test_docs, test_labels: the first `TEST_KEPT` test documents and their class indices.
        development: ``(docs, labels)`` of the development split, or ``None``.
        counts: each training word's count (a dict; pruned past `MAX_COUNTED_WORDS` words).
        lengths: the training documents' `LengthCounts`.

    Raises:
        RecipeError: a file cannot be read or is not valid UTF-8 (file and line named), or the
            corpus holds no document, one class, or too few documents to split.
    """

    def __init__(self, data, samples, positions=MAX_SENTENCES):
        self.data = data
        self.directory = tempfile.mkdtemp(prefix="keras-adl-documents-")
        weakref.finalize(self, shutil.rmtree, self.directory, ignore_errors=True)
        self.counts, self.lengths, self._pruned = {}, LengthCounts(positions), 0
        self._count = _batch_counts(DocumentTokenizer([], 1, 1).split)
        self._writers, self.class_counts = {}, collections.Counter()
        labels, test, development, pending = set(), [], {}, []
        first, documents, train = None, 0, 0
        try:
            for text, label in iter_documents(data):
                documents += 1
                labels.add(label)
                bucket = split_bucket(text)
                if bucket < TEST:
                    if len(test) < TEST_KEPT:
                        test.append((text, label))
                elif bucket < DEVELOPMENT and (
                    text in development or len(development) < DEVELOPMENT_DOCUMENTS
                ):
                    development[text] = label
                elif train < samples:
                    train += 1
                    if first is None:  # kept back: the test document of a corpus without one
                        first = (text, label)
                    else:
                        self._train(text, label, pending)
                elif len(test) >= TEST_KEPT:
                    break  # nothing more to train on or to score
        except (OSError, ValueError) as error:
            raise RecipeError(str(error)) from None
        held = [] if first is None else [first]
        if train < MIN_FOR_DEVELOPMENT or len(development) < 2:
            held += development.items()  # too few to set some aside: they train
            train += len(development)
            development = {}
        if not test and train >= 2 and held:
            test.append(held.pop(0))
            train -= 1
        for text, label in held:
            self._train(text, label, pending)
        self._flush(pending)
        for writer in self._writers.values():
            writer.close()
        self._check(documents, train, labels, test)
        self.documents, self.train_documents = documents, train
        self.class_names = sorted(labels)
        index = {name: i for i, name in enumerate(self.class_names)}
        self.test_docs = [text for text, _ in test]
        self.test_labels = np.array([index[label] for _, label in test], dtype="int64")
        self.development = None
        if development:
            self.development = (
                list(development),
                np.array([index[label] for label in development.values()], dtype="int64"),
            )

    def _check(self, documents, train, labels, test):
        if not documents:
            raise RecipeError(f"{self.data}: no documents found.")
        if len(labels) < 2:
            raise RecipeError(
                f"{self.data}: a classifier needs at least 2 classes; the documents hold "
                f"{len(labels)} ({sorted(labels)})."
            )
        if not train or not test:
            raise RecipeError(
                f"{self.data}: the documents give {train} to train and {len(test)} to test; "
                "give more documents"
            )

    def _path(self, label):
        digest = hashlib.blake2b(label.encode("utf-8"), digest_size=8).hexdigest()
        return os.path.join(self.directory, f"{digest}.tfrecord")

    def _train(self, text, label, pending):
        """Writes a training document to its class's file and counts it (a batch at a time)."""
        if label not in self._writers:
            self._writers[label] = tf.io.TFRecordWriter(self._path(label))
        self._writers[label].write(text.encode("utf-8"))
        self.class_counts[label] += 1
        pending.append(text)
        if len(pending) >= _COUNT_BATCH:
            self._flush(pending)

    def _flush(self, pending):
        if not pending:
            return
        unique, found, sentences, positions, words = (
            t.numpy() for t in self._count(tf.constant(pending))
        )
        pending.clear()
        for word, count in zip(unique.tolist(), found.tolist()):
            self.counts[word] = self.counts.get(word, 0) + count
        if len(self.counts) > MAX_COUNTED_WORDS:
            self._pruned += 1  # gensim's max_vocab_size rule
            for word in [w for w, c in self.counts.items() if c <= self._pruned]:
                del self.counts[word]
        self.lengths.add(sentences, positions, words)

    def tokenizer(self, max_sentences=None, max_words=None):
        """The `DocumentTokenizer` of the training words (at most `MAX_VOCABULARY`), padding to
        ``max_sentences`` × ``max_words`` (unset: `LengthCounts.fitted_shape`)."""
        counts = {w.decode("utf-8"): c for w, c in self.counts.items()}
        vocabulary = vocabulary_from_counts(counts, max_size=MAX_VOCABULARY)
        if not (max_sentences and max_words):
            fitted = self.lengths.fitted_shape()
            max_sentences, max_words = max_sentences or fitted[0], max_words or fitted[1]
        return DocumentTokenizer(vocabulary, max_sentences, max_words)

    def dataset(self, tokenizer, batch_size, seed=0):
        """One pass over the training documents: ``(ids int32 [B, S, W], labels int32 [B])``
        batches (the last partial one dropped), the classes drawn in proportion to their sizes
        and the documents shuffled in a buffer of `SHUFFLE_DOCUMENTS`, anew each pass.

        Returns:
            ``(dataset, steps)``: the dataset and its batches per pass.
        """
        index = {name: i for i, name in enumerate(self.class_names)}
        labels = sorted(self.class_counts)
        classes = [
            tf.data.TFRecordDataset(self._path(label), buffer_size=1 << 18).map(
                lambda text, i=index[label]: (text, tf.constant(i, tf.int32))
            )
            for label in labels
        ]
        weights = [self.class_counts[label] / self.train_documents for label in labels]
        documents = tf.data.Dataset.sample_from_datasets(
            classes, weights, seed=seed, stop_on_empty_dataset=False
        )
        batch_size = min(batch_size, self.train_documents)
        dataset = (
            documents.shuffle(SHUFFLE_DOCUMENTS, seed=seed, reshuffle_each_iteration=True)
            .batch(batch_size, drop_remainder=True)
            .map(lambda docs, y: (tokenizer.encode(docs), y), num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE)
        )
        return dataset, self.train_documents // batch_size

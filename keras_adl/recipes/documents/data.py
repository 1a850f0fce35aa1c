"""The documents family's data: each task's documents and their splits, the tokenizer that reads
them, and the shares that the tokenizer's shape cuts."""

import collections

import numpy as np

from keras_adl.data.corpora import load_documents
from keras_adl.data.fortunes import load_fortunes
from keras_adl.data.needle import CLASS_WORDS, needle_documents
from keras_adl.data.splits import split_dataset
from keras_adl.recipes._development import DEVELOPMENT_SEED, development_rows
from keras_adl.recipes.documents.spec import (
    DEVELOPMENT_DOCUMENTS,
    MAX_SENTENCES,
    MAX_VOCABULARY,
    MAX_WORDS,
    MAX_WORDS_PER_DOCUMENT,
    NEEDLE_CLASSES,
    NEEDLE_SENTENCES,
    NEEDLE_TEST_DOCUMENTS,
    SIZE_PERCENTILE,
    TEST_FRACTION,
)
from keras_adl.text import DocumentTokenizer

Documents = collections.namedtuple(
    "Documents",
    "train_docs train_labels test_docs test_labels class_names test_keys",
)
Documents.__doc__ = """A task's documents: training and test documents with their labels, the
class names and, for the needle task, the test documents' key sentences (``None`` otherwise)."""


def needle(samples, seed=0, sentences=NEEDLE_SENTENCES):
    """`Documents`: ``samples`` generated training documents of ``sentences`` ``(low, high)``
    sentences and `NEEDLE_TEST_DOCUMENTS` test documents, with the key sentences of the test
    documents."""
    train_docs, train_labels, _ = needle_documents(
        samples, num_classes=NEEDLE_CLASSES, num_sentences=sentences, seed=seed
    )
    test_docs, test_labels, keys = needle_documents(
        NEEDLE_TEST_DOCUMENTS, num_classes=NEEDLE_CLASSES, num_sentences=sentences, seed=seed + 1
    )
    names = list(CLASS_WORDS[:NEEDLE_CLASSES])
    return Documents(train_docs, train_labels, test_docs, test_labels, names, keys)


def fortune_topics(data, samples, seed=0):
    """`Documents` of Debian's fortune topics (``data``: another fortunes directory, ``None``:
    the installed one), split 80/20 with a fixed seed."""
    return _split(*load_fortunes(data), samples, seed)


def user_documents(data, samples, seed=0):
    """`Documents` of a ``<label>/<doc>.txt`` tree or a ``label<TAB>text`` file, split 80/20
    with a fixed seed."""
    return _split(*load_documents(data), samples, seed)


def _split(docs, labels, names, samples, seed):
    # Two documents still split (one each); from 3 on the fraction alone decides.
    fraction = max(TEST_FRACTION, 1 / max(len(docs), 1))
    (train_docs, train_labels), (test_docs, test_labels) = split_dataset(
        np.array(docs, dtype=object), labels, fraction, seed=seed
    )
    train_docs, train_labels = list(train_docs[:samples]), train_labels[:samples]
    return Documents(train_docs, train_labels, list(test_docs), test_labels, list(names), None)


def needle_development(documents, labels, sentences=NEEDLE_SENTENCES):
    """``(documents, labels, development)``: the training documents unchanged and
    `DEVELOPMENT_DOCUMENTS` generated ones of ``sentences`` sentences with their own seed."""
    docs, classes, _ = needle_documents(
        DEVELOPMENT_DOCUMENTS,
        num_classes=NEEDLE_CLASSES,
        num_sentences=sentences,
        seed=DEVELOPMENT_SEED,
    )
    return documents, labels, (docs, classes)


def development_split(documents, labels):
    """``(train_docs, train_labels, development)``: the training documents without the
    development split, and that split, ``(docs, labels)``, whose loss picks the best epoch: a
    seeded tenth of the training documents (at most `DEVELOPMENT_DOCUMENTS`), never the test
    documents; ``None`` when fewer than ``MIN_FOR_DEVELOPMENT`` are given."""
    rows = development_rows(len(documents), DEVELOPMENT_DOCUMENTS)
    if rows is None:
        return documents, labels, None
    documents, labels = np.array(documents, dtype=object), np.asarray(labels)
    train, held = rows
    return list(documents[train]), labels[train], (list(documents[held]), labels[held])


def development_dataset(tokenizer, development, batch_size):
    """The development split as Keras' ``validation_data`` (every document once)."""
    docs, labels = development
    return tokenizer.dataset(
        docs, labels, min(batch_size, len(docs)), shuffle=False, drop_remainder=False
    )


def tokenizer(documents, shape=None, max_sentences=None, max_words=None, lengths=None):
    """The `DocumentTokenizer` built on the training documents, padding them to
    ``max_sentences`` × ``max_words``; unset, ``shape`` (a task's fixed ``(S, W)``), else the
    sizes that `SIZE_PERCENTILE` percent of them fit in (`fitted_shape`, from ``lengths``,
    their `document_lengths`, if already counted)."""
    default = shape
    if default is None and not (max_sentences and max_words):
        default = fitted_shape(*(lengths or document_lengths(documents)))
    shape = (max_sentences or default[0], max_words or default[1])
    return DocumentTokenizer.build(documents, *shape, max_size=MAX_VOCABULARY)


def document_lengths(documents):
    """`DocumentTokenizer.lengths` of ``documents``: their sentence counts and their sentences'
    word counts, before truncation."""
    return DocumentTokenizer([], 1, 1).lengths(documents)


def fitted_shape(sentences, words, percentile=SIZE_PERCENTILE):
    """``(S, W)`` that fit ``percentile`` percent of the documents' sentence counts and of
    their sentences' word counts, within `MAX_SENTENCES`, `MAX_WORDS` and
    `MAX_WORDS_PER_DOCUMENT` (the longer side shrinks first).

    Args:
        sentences, words: `DocumentTokenizer.lengths` of the training documents.
        percentile: the share of documents (and sentences) kept whole.
    """
    present = words[words > 0]
    s = int(np.ceil(np.percentile(sentences, percentile))) if len(sentences) else 1
    w = int(np.ceil(np.percentile(present, percentile))) if len(present) else 1
    return capped_shape(s, w)


def capped_shape(sentences, words):
    """``(S, W)`` within `MAX_SENTENCES`, `MAX_WORDS` and `MAX_WORDS_PER_DOCUMENT` (the longer
    side shrinks first), each at least 1.

    >>> capped_shape(500, 0)
    (200, 1)
    """
    s, w = min(max(sentences, 1), MAX_SENTENCES), min(max(words, 1), MAX_WORDS)
    while s * w > MAX_WORDS_PER_DOCUMENT:
        if s >= w:
            s -= 1
        else:
            w -= 1
    return s, w


def cut_shares(sentences, words, max_sentences, max_words):
    """The shares of sentences and of words that documents padded to ``max_sentences`` ×
    ``max_words`` lose: ``{"sentences_cut", "words_cut"}`` (0 to 1).

    Args:
        sentences, words: `DocumentTokenizer.lengths` of the documents.
        max_sentences, max_words: ``S`` and ``W``.
    """
    total_sentences, total_words = int(sentences.sum()), int(words.sum())
    kept_sentences = int(np.minimum(sentences, max_sentences).sum())
    kept_words = int(np.minimum(words[:, :max_sentences], max_words).sum())
    return {
        "sentences_cut": 1 - kept_sentences / total_sentences if total_sentences else 0.0,
        "words_cut": 1 - kept_words / total_words if total_words else 0.0,
    }

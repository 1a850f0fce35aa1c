import re

import numpy as np
import pytest

from keras_adl.data import needle
from keras_adl.data.needle import CLASS_WORDS, FILLER_WORDS, NEEDLE_WORD, needle_documents


def _sentences(document):
    assert document.endswith(".")
    return [s.split() for s in document[:-1].split(". ")]


def test_word_lists():
    assert len(CLASS_WORDS) >= 10 and len(set(CLASS_WORDS)) == len(CLASS_WORDS)
    assert len(FILLER_WORDS) >= 200 and len(set(FILLER_WORDS)) == len(FILLER_WORDS)
    assert all(re.fullmatch(r"[a-z]+", w) for w in CLASS_WORDS + FILLER_WORDS)
    assert not set(FILLER_WORDS) & (set(CLASS_WORDS) | {NEEDLE_WORD})
    assert NEEDLE_WORD not in CLASS_WORDS
    assert FILLER_WORDS == needle._filler_words()  # fixed, not random


def test_needle_is_deterministic_per_seed():
    a = needle_documents(50, seed=3)
    b = needle_documents(50, seed=3)
    c = needle_documents(50, seed=4)
    assert a[0] == b[0]
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2], b[2])
    assert a[0] != c[0]


@pytest.mark.parametrize(
    "num_classes, num_sentences, sentence_length",
    [(4, (4, 10), (4, 10)), (2, (1, 3), (2, 2)), (12, (5, 5), (3, 12))],
)
def test_needle_structure(num_classes, num_sentences, sentence_length):
    documents, labels, keys = needle_documents(
        300, num_classes, num_sentences, sentence_length, seed=1
    )
    assert len(documents) == 300 and labels.shape == keys.shape == (300,)
    assert labels.dtype == keys.dtype == np.int64
    assert set(labels.tolist()) == set(range(num_classes))  # every class drawn, no other
    classes = set(CLASS_WORDS[:num_classes])
    vocabulary = set(FILLER_WORDS) | classes | {NEEDLE_WORD}
    seen_lengths, seen_counts = set(), set()
    for document, label, key in zip(documents, labels, keys):
        assert re.fullmatch(r"[a-z]+( [a-z]+)*\.( [a-z]+( [a-z]+)*\.)*", document)
        sentences = _sentences(document)
        seen_counts.add(len(sentences))
        assert num_sentences[0] <= len(sentences) <= num_sentences[1]
        assert 0 <= key < len(sentences)
        assert " ".join(" ".join(s) + "." for s in sentences) == document
        for i, words in enumerate(sentences):
            seen_lengths.add(len(words))
            assert sentence_length[0] <= len(words) <= sentence_length[1]
            assert set(words) <= vocabulary
            class_words = [w for w in words if w in classes]
            if i == key:
                assert words.count(NEEDLE_WORD) == 1
                assert class_words == [CLASS_WORDS[label]]
            else:
                assert NEEDLE_WORD not in words
                assert len(class_words) == 1
    assert seen_counts == set(range(num_sentences[0], num_sentences[1] + 1))
    assert seen_lengths == set(range(sentence_length[0], sentence_length[1] + 1))


def test_needle_labels_and_keys_are_spread():
    documents, labels, keys = needle_documents(2000, num_classes=4, seed=0)
    counts = np.bincount(labels, minlength=4)
    assert counts.min() > 400 and counts.max() < 600  # 500 expected, sd ≈ 19
    positions = [key / (len(_sentences(d)) - 1) for d, key in zip(documents, keys)]
    assert 0.4 < np.mean(positions) < 0.6  # the key is not always first or last
    first = [d.split()[:2] for d, k in zip(documents, keys) if k == 0]
    assert 0 < len(first) < len(documents)


def test_needle_label_is_not_readable_from_class_word_counts():
    documents, labels, _ = needle_documents(2000, num_classes=4, seed=0)
    counts = np.array(
        [[d.replace(".", "").split().count(w) for w in CLASS_WORDS[:4]] for d in documents]
    )
    assert (counts.sum(axis=1) == [len(_sentences(d)) for d in documents]).all()
    majority = (counts.argmax(axis=1) == labels).mean()
    assert majority < 0.6  # a bag of words sees a weak cue only (chance is 0.25)
    # whereas the word next to the marker gives the label every time
    readout = []
    for document in documents:
        key = next(s for s in _sentences(document) if NEEDLE_WORD in s)
        readout.append(next(CLASS_WORDS.index(w) for w in key if w in CLASS_WORDS))
    np.testing.assert_array_equal(readout, labels)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_documents=0), "`num_documents` must be an integer >= 1; received 0"),
        (dict(num_documents=2.0), "`num_documents` must be an integer"),
        (dict(num_documents=5, num_classes=1), r"`num_classes` must be an integer in 2\.\.12"),
        (dict(num_documents=5, num_classes=13), r"`num_classes`.*received 13"),
        (dict(num_documents=5, num_sentences=(0, 3)), r"`num_sentences` must satisfy 1 <= low"),
        (dict(num_documents=5, num_sentences=(5, 3)), r"`num_sentences`.*received \(5, 3\)"),
        (dict(num_documents=5, num_sentences=4), r"`num_sentences` must be a pair"),
        (dict(num_documents=5, sentence_length=(1, 4)), r"`sentence_length` must satisfy 2 <="),
        (dict(num_documents=5, sentence_length=(2.0, 4)), r"`sentence_length` must be a pair"),
        (dict(num_documents=5, seed=-1), "`seed` must be a non-negative integer"),
    ],
)
def test_needle_validates_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        needle_documents(**kwargs)

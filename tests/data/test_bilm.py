"""The biLM's data: windows, targets, fixed-shape batches, the unigram baseline."""

import numpy as np
import pytest

from keras_adl.conventions import UNK
from keras_adl.data.bilm import (
    bilm_dataset,
    split_documents,
    unigram_perplexity,
    window_ids,
    word_windows,
)
from keras_adl.data.skipgrams import WordVocabulary
from keras_adl.text.characters import character_ids

DOCUMENTS = [["le", "chat", "dort", "ici", "été"], ["un"], ["ёж", "日本", "x"]]


def test_windows_never_cross_documents_and_need_two_words():
    assert word_windows(DOCUMENTS, 2) == [["le", "chat"], ["dort", "ici"], ["ёж", "日本"]]
    with pytest.raises(ValueError, match="`max_words` must be an integer >= 2"):
        word_windows(DOCUMENTS, 1)


def test_split_is_seeded_and_by_document():
    train, held = split_documents(list(range(100)), 0.1, seed=3)
    assert len(held) == 10 and sorted(train + held) == list(range(100))
    assert split_documents(list(range(100)), 0.1, seed=3) == (train, held)


def test_batches_have_fixed_shapes_and_neighbour_targets():
    vocabulary = WordVocabulary.build(DOCUMENTS, min_count=1, max_size=4)
    windows = word_windows(DOCUMENTS, 4)
    data = bilm_dataset(windows, vocabulary, 2, 4, 7, shuffle=False, drop_remainder=True)
    ((characters, targets),) = list(data.take(1))
    assert characters.shape == (2, 4, 7)
    ids = window_ids(windows[:2], vocabulary, 4)
    np.testing.assert_array_equal(
        characters.numpy(),
        character_ids(np.array([w + [""] * (4 - len(w)) for w in windows[:2]]), 7).numpy(),
    )
    np.testing.assert_array_equal(targets["forward"].numpy()[:, :-1], ids[:, 1:])
    np.testing.assert_array_equal(
        targets["backward"].numpy()[:, 1:], ids[:, :-1] * (ids[:, 1:] > 0)
    )
    assert (ids == UNK).any()  # words past max_size are <unk> targets (still read as characters)


def test_unigram_perplexity_is_the_add_one_formula():
    train = np.array([[4, 4, 5, 0]])
    held = np.array([[4, 5, 5, 0]])
    # Training targets (all but each window's first word): 4, 5 → counts 1, 1, plus one each
    # for <unk>, 4 and 5.
    p = {4: 2 / 5, 5: 2 / 5}
    expected = np.exp(-(np.log(p[5]) + np.log(p[5])) / 2)
    assert unigram_perplexity(train, held) == pytest.approx(expected)

"""The biLM's data: windows, targets, fixed-shape batches, the unigram baseline."""

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.conventions import UNK
from keras_adl.data.bilm import (
    bilm_dataset,
    block_windows,
    counts_perplexity,
    split_documents,
    unigram_perplexity,
    window_ids,
    word_windows,
)
from keras_adl.data.skipgrams import WordVocabulary
from keras_adl.data.text_streams import block_words
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


def test_counts_perplexity_is_the_add_one_formula_over_every_id():
    counts = np.array([0, 0, 0, 2, 1, 3])  # <unk> 2, words 4 and 5
    held = np.array([[4, 5, 4, 0]])  # targets 5 and 4
    smoothed = {3: 3, 4: 2, 5: 4}  # add one to <unk> and every word
    total = sum(smoothed.values())
    expected = np.exp(-(np.log(4 / total) + np.log(2 / total)) / 2)
    assert counts_perplexity(counts, held) == pytest.approx(expected)
    # the windows' formula is the counts' of their targets
    train = np.array([[4, 4, 5, 0]])
    assert unigram_perplexity(train, held) == pytest.approx(
        counts_perplexity(np.array([0, 0, 0, 0, 1, 1]), held)
    )


@pytest.mark.parametrize("max_words", [2, 3, 32])
def test_block_windows_are_word_windows_of_each_document(max_words):
    text = "Le chat dort ici, été.\nUn\n\nЁж 日本 x 🙂 y\nz\n\n\nSeul\n"
    for by_paragraph in (True, False):
        words, documents = block_words(tf.constant(text), tf.constant(by_paragraph))
        windows, owners = block_windows(words, documents, max_words)
        flat = words.flat_values.numpy().tolist()
        owner = np.repeat(documents.numpy(), words.row_lengths().numpy()).tolist()
        tokenized = [
            [w.decode() for w, o in zip(flat, owner) if o == d] for d in sorted(set(owner))
        ]
        expected = word_windows(tokenized, max_words)
        got = [[w.decode() for w in row if w] for row in windows.numpy().tolist()]
        assert got == expected and windows.shape[1] == max_words
        # each window's document is the one its words come from, at a multiple of max_words
        numbers = sorted(set(owner))
        for o, window in zip(owners.numpy().tolist(), got):
            document = tokenized[numbers.index(o)]
            assert any(
                document[i : i + len(window)] == window for i in range(0, len(document), max_words)
            )

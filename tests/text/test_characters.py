"""Byte-level character ids of words (ELMo's), for any Unicode text."""

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.text.characters import (
    BEGIN_WORD,
    BYTE_OFFSET,
    END_WORD,
    character_ids,
    text_character_ids,
)
from keras_adl.text.normalization import plain_words, written_words


def _expected(word, length):
    ids = [BEGIN_WORD] + [b + BYTE_OFFSET for b in word.encode("utf-8")][: length - 2] + [END_WORD]
    return ids + [0] * (length - len(ids))


@pytest.mark.parametrize("word", ["Échec", "ёжик", "日本語", "naïve", "a"])
def test_every_word_is_its_utf8_bytes_between_markers(word):
    ids = character_ids(tf.constant([word]), 12).numpy()[0]
    assert ids.tolist() == _expected(word, 12)


def test_long_words_keep_their_end_marker_and_padding_is_all_zeros():
    ids = character_ids(tf.constant([["anticonstitutionnellement", ""]]), 6).numpy()
    assert ids.shape == (1, 2, 6)
    assert ids[0, 0].tolist() == _expected("anticonstitutionnellement", 6)
    assert ids[0, 0, -1] == END_WORD
    assert not ids[0, 1].any()


def test_texts_split_into_plain_words_through_no_break_spaces():
    words, ids = text_character_ids(
        tf.constant(["Fichier\u00a0: «\u202fÉTÉ\u202f» 東京タワー", "Привет,   мир!"]), 4, 10
    )
    assert [[w.decode() for w in row] for row in words.numpy()] == [
        ["fichier", "été", "東京タワー", ""],
        ["привет", "мир", "", ""],
    ]
    assert ids.shape == (2, 4, 10)
    assert ids.numpy()[0, 1].tolist() == _expected("été", 10)
    assert not ids.numpy()[1, 2:].any()


def test_bad_arguments():
    with pytest.raises(ValueError, match="`max_characters` must be at least 3"):
        character_ids(tf.constant(["a"]), 2)
    with pytest.raises(TypeError, match="`words` must be strings"):
        character_ids(tf.constant([1, 2]))
    with pytest.raises(ValueError, match="`max_words` must be a positive integer"):
        text_character_ids(tf.constant(["a"]), 0)
    assert np.asarray(character_ids(tf.constant([], tf.string), 5)).shape == (0, 5)


def test_written_words_keep_case_and_letters_aligned_with_plain_words():
    texts = tf.constant(["L'Été\u00a0: Straße 😀 ОШИБКА 東京", "½ cup", "", "  !? "])
    written, plain = written_words(texts).to_list(), plain_words(texts).to_list()
    assert [[w.decode() for w in row] for row in written] == [
        ["L", "Été", "Straße", "ОШИБКА", "東京"],
        ["1", "2", "cup"],  # NFKC splits ½: the text gets its plain words
        [],
        [],
    ]
    assert [len(row) for row in written] == [len(row) for row in plain]
    assert written_words(tf.constant([], tf.string)).to_list() == []

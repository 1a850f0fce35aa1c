import numpy as np
import pytest

import keras_adl.text
from keras_adl.conventions import END, NUM_SPECIAL_TOKENS, PAD, SPECIAL_TOKENS, START, UNK
from keras_adl.text import CharVocabulary


def test_exported_from_package():
    assert "CharVocabulary" in keras_adl.text.__all__
    assert keras_adl.text.CharVocabulary is CharVocabulary


def test_ids_follow_the_conventions():
    vocab = CharVocabulary("xyz")
    assert len(vocab) == NUM_SPECIAL_TOKENS + 3 == 7
    assert vocab.tokens == list(SPECIAL_TOKENS) + ["x", "y", "z"]
    ids = vocab.encode(["zx", "y?"], max_length=5, add_start=True, add_end=True)
    assert ids.dtype == np.int32
    np.testing.assert_array_equal(ids, [[START, 6, 4, END, PAD], [START, 5, UNK, END, PAD]])


def test_non_ascii_characters_round_trip():
    vocab = CharVocabulary("äöüß日本語é")
    ids = vocab.encode(["日本語", "süß", "é"], max_length=4, add_end=True)
    np.testing.assert_array_equal(ids, [[8, 9, 10, END], [UNK, 6, 7, END], [11, END, PAD, PAD]])
    assert vocab.decode(ids) == ["日本語", "üß", "é"]  # <unk> ("s") is skipped


def test_decode_stops_at_end_or_padding_and_skips_specials():
    vocab = CharVocabulary("ab")
    assert vocab.decode([[START, 4, UNK, 5, END, 4], [4, PAD, 5, 5, 5, 5]]) == ["ab", "a"]
    assert vocab.decode(np.zeros((2, 3), "int32")) == ["", ""]


def test_errors():
    with pytest.raises(ValueError, match="repeated"):
        CharVocabulary("aab")
    with pytest.raises(ValueError, match="`max_length`=3 is too short for 'abab'"):
        CharVocabulary("ab").encode(["abab"], max_length=3)
    with pytest.raises(ValueError, match=r"\(3 ids with the markers\)"):
        CharVocabulary("ab").encode(["a"], max_length=2, add_start=True, add_end=True)

"""`TextPairTokenizer` on real text: Unicode spaces, case folding, punctuation, scripts."""

import json

import numpy as np
import tensorflow as tf

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.text import TextPairTokenizer
from keras_adl.text.normalization import normalize_words, word_tokens

NBSP, NNBSP, IDEOGRAPHIC = "\u00a0", "\u202f", "\u3000"


def _words(text):
    return [w.decode() for w in word_tokens(tf.constant([text])).to_list()[0]]


def test_french_no_break_spaces_are_spaces_and_never_split_a_character():
    # The bug: a byte-wise whitespace split cut U+00A0 (C2 A0) and U+202F (E2 80 AF) in two.
    assert _words(f"Fichier{NBSP}: introuvable{NNBSP}!") == ["fichier", ":", "introuvable", "!"]
    assert _words(f"«{NBSP}Échec{NBSP}»") == ["«", "échec", "»"]
    assert normalize_words(tf.constant([f"a{NBSP}{NNBSP} b{IDEOGRAPHIC}c\t\nd"])).numpy()[0] == (
        b"a b c d"
    )


def test_full_unicode_case_folding_and_punctuation_split():
    assert _words("ÉCHEC échec imprÉvisible") == ["échec", "échec", "imprévisible"]
    assert _words("Straße STRASSE") == ["strasse", "strasse"]  # German ß folds to ss
    assert _words("nulle. Nulle, l'erreur") == ["nulle", ".", "nulle", ",", "l", "'", "erreur"]
    assert _words("Привет, МИР!") == ["привет", ",", "мир", "!"]
    assert _words("ｆｕｌｌ－ｗｉｄｔｈ") == ["full", "-", "width"]  # NFKC


def test_scripts_without_spaces_give_one_word_per_run():
    assert _words("日本語のテキスト。次の文") == ["日本語のテキスト", "。", "次の文"]


def test_vocabulary_and_round_trip_on_french_pairs():
    sources = [f"File not found{NBSP}!", "Unexpected failure.", "FILE"]
    targets = [f"Fichier introuvable{NNBSP}!", f"Échec imprévu{NBSP}.", "Fichier"]
    tok = TextPairTokenizer.build(sources, targets, level="word")
    assert tok.target_vocabulary[0] == "fichier"  # "Fichier" twice, case-folded
    assert set(tok.target_vocabulary) == {"fichier", "introuvable", "!", "échec", "imprévu", "."}
    assert "file" in tok.source_vocabulary and "FILE" not in tok.source_vocabulary
    decoder_input, target = tok.encode_target(tf.constant(targets), 6)
    decoded = [s.decode() for s in tok.decode_target(target).numpy()]
    assert decoded == ["fichier introuvable !", "échec imprévu .", "fichier"]
    normalized = [s.decode() for s in tok.normalize_target(tf.constant(targets)).numpy()]
    assert normalized == decoded  # what exact match compares predictions with
    ids = tok.encode_source(tf.constant([f"file{NBSP}inconnu !"]), 5).numpy()[0]
    # "file" and "!" by their place in the vocabulary (after the special ids), the unseen
    # "inconnu" as UNK, then padding: no end token on the source side.
    known = {w: NUM_SPECIAL_TOKENS + i for i, w in enumerate(tok.source_vocabulary)}
    assert ids.tolist() == [known["file"], UNK, known["!"], PAD, PAD]
    restored = TextPairTokenizer.from_config(json.loads(json.dumps(tok.to_config())))
    np.testing.assert_array_equal(
        restored.encode_source(tf.constant(sources), 6), tok.encode_source(tf.constant(sources), 6)
    )

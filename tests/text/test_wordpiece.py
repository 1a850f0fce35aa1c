"""WordPiece subwords (`keras_adl.text.wordpiece`) and the subword level of
`TextPairTokenizer`, on French, German, Russian and Japanese text."""

import json

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.conventions import END, PAD, START, UNK
from keras_adl.text import TextPairTokenizer
from keras_adl.text.normalization import subword_words
from keras_adl.text.wordpiece import WordPieceTokenizer, learn_wordpiece

NBSP, NNBSP = "\u00a0", "\u202f"
TEXTS = [
    f"Fichier introuvable{NBSP}: «{NBSP}données.txt{NBSP}»{NNBSP}!",
    "Échec de l'écriture du fichier, réessayez.",
    "Die Straße ist gesperrt; Größe unbekannt.",
    "Не удалось открыть файл «данные».",
    "ファイルが見つかりません。日本語のテキスト",
    "Impossible d'ouvrir le fichier %s (erreur 42).",
] * 3


def _strings(tensor):
    return [s.decode() for s in tensor.numpy()]


def test_subword_words_split_scripts_without_spaces_into_characters():
    words = subword_words(tf.constant(["日本語のテキスト。", "Größe: 42%"])).to_list()
    assert [w.decode() for w in words[0]] == list("日本語のテキスト。")
    assert [w.decode() for w in words[1]] == ["grösse", ":", "42", "%"]


def test_learned_vocabulary_covers_every_character_and_is_deterministic():
    pieces = learn_wordpiece(TEXTS, 120)
    assert pieces == learn_wordpiece(TEXTS, 120)
    words = [w.decode() for w in subword_words(tf.constant(TEXTS)).flat_values.numpy()]
    characters = {c for w in words for c in w}
    assert characters <= set(pieces)  # every character can start a word …
    continuations = {c for w in words for c in w[1:]}
    assert {"##" + c for c in continuations} <= set(pieces)  # … and continue one
    assert not {"<pad>", "<s>", "</s>", "<unk>"} & set(pieces)
    assert len(learn_wordpiece(TEXTS, 400)) > len(learn_wordpiece(TEXTS, 80))


def test_round_trip_gives_the_normalised_text_in_every_script():
    tok = WordPieceTokenizer(learn_wordpiece(TEXTS, 150))
    ids = tok.tokenize(tf.constant(TEXTS[:6]))
    assert UNK not in ids.flat_values.numpy()  # every word can be cut from seen characters
    restored = tok.detokenize(ids.to_tensor(default_value=PAD))
    assert _strings(restored) == _strings(tok.normalize(tf.constant(TEXTS[:6])))
    assert _strings(restored)[0] == "fichier introuvable : « données . txt » !"
    assert _strings(restored)[4] == "フ ァ イ ル が 見 つ か り ま せ ん 。 日 本 語 の テ キ ス ト"
    # An unseen word of seen characters is cut into pieces, not made unknown.
    unseen = tok.pieces(tf.constant(["Fichiers réécrits"])).to_list()[0]
    assert b"<unk>" not in unseen and len(unseen) > 2


def test_unknown_characters_become_unk_and_ids_follow_the_conventions():
    tok = WordPieceTokenizer(["a", "##b", "b"])
    assert tok.tokenize(tf.constant(["ab ☃ b"])).to_list() == [[4, 5, 3, 6]]
    assert tok.size == 7
    assert _strings(tok.detokenize(tf.constant([[4, 5, 3, 6, END, PAD]]))) == ["ab b"]
    assert tok.pieces(tf.constant(["☃"])).to_list() == [[b"<unk>"]]


def test_tokenizer_runs_inside_tf_data_and_a_tf_function():
    tok = WordPieceTokenizer(learn_wordpiece(TEXTS, 150))
    eager = tok.tokenize(tf.constant(TEXTS[:4])).to_tensor()
    mapped = next(iter(tf.data.Dataset.from_tensor_slices(TEXTS[:4]).batch(4).map(tok.tokenize)))
    np.testing.assert_array_equal(mapped.to_tensor(), eager)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def serve(strings):
        return tok.detokenize(tok.tokenize(strings).to_tensor())

    assert _strings(serve(tf.constant(TEXTS[:4]))) == _strings(
        tok.normalize(tf.constant(TEXTS[:4]))
    )


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: learn_wordpiece(TEXTS, 0), r"`vocab_size` must be a positive integer; received 0"),
        (lambda: learn_wordpiece(TEXTS, 2.5), r"`vocab_size` must be a positive integer"),
        (lambda: learn_wordpiece([" ", ""], 10), r"`texts` holds no word"),
        (lambda: WordPieceTokenizer([]), r"`vocabulary` must hold at least one piece"),
        (lambda: WordPieceTokenizer(["a", "<unk>"]), r"must not hold the special tokens.*<unk>"),
    ],
)
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_text_pair_tokenizer_subword_level_encodes_decodes_and_round_trips_its_config():
    sources = ["File not found!", "Unexpected failure.", "Open the file"] * 4
    targets = [f"Fichier introuvable{NNBSP}!", f"Échec imprévu{NBSP}.", "Ouvrir le fichier"] * 4
    tok = TextPairTokenizer.build(sources, targets, vocab_size=60)
    assert tok.level == "subword" and tok.tables == []
    decoder_input, target = tok.encode_target(tf.constant(targets[:3]), 24)
    assert decoder_input.numpy()[:, 0].tolist() == [START] * 3
    assert (target.numpy() == END).sum(axis=1).tolist() == [1, 1, 1]
    assert _strings(tok.decode_target(target)) == [
        "fichier introuvable !",
        "échec imprévu .",
        "ouvrir le fichier",
    ]
    assert _strings(tok.normalize_target(tf.constant(targets[:3]))) == _strings(
        tok.decode_target(target)
    )
    counts = tok.token_counts(tf.constant(sources[:3]), "source").numpy()
    assert (
        counts.tolist()
        == tok.source_tokens(tf.constant(sources[:3])).row_lengths().numpy().tolist()
    )
    labels = tok.target_tokens(target[:1]).numpy()[0]
    end = int((target.numpy()[0] == END).argmax())
    assert labels[end] == b"</s>" and labels[end + 1] == b"<pad>"
    restored = TextPairTokenizer.from_config(json.loads(json.dumps(tok.to_config())))
    np.testing.assert_array_equal(
        restored.encode_source(tf.constant(sources), 12),
        tok.encode_source(tf.constant(sources), 12),
    )
    with pytest.raises(ValueError, match="`side` must be 'source' or 'target'; received 'both'"):
        tok.token_counts(tf.constant(sources), "both")


def test_scripts_without_spaces_get_no_unusable_continuation_pieces():
    pieces = learn_wordpiece(["日本語のテキスト", "ภาษาไทย", "latin words"], 200)
    assert "日" in pieces and "ภ" in pieces and "##a" in pieces
    assert not [p for p in pieces if p.startswith("##") and p[2:] in "日本語のテキストภาษาไทย"]


def test_detokenize_never_leaves_a_joiner_or_glues_a_word_across_unk():
    tok = WordPieceTokenizer(["ab", "##c", "d"])
    assert _strings(tok.detokenize(tf.constant([[5, 4, 5, 3, 5, 6]]))) == ["c abc c d"]


def test_long_words_are_learned_and_the_vertical_tab_and_nel_are_spaces():
    long_word = "a" * 70 + "b"
    assert long_word in learn_wordpiece([long_word] * 3 + ["a b"], 50)
    words = subword_words(tf.constant(["x\vy\u0085z"])).to_list()[0]
    assert words == [b"x", b"y", b"z"]


def test_the_char_level_is_normalised_too():
    tok = TextPairTokenizer.build(["ÉCHEC\u00a0!"], ["x"], level="char")
    assert tok.source_vocabulary[0] in ("é", "c") and "É" not in tok.source_vocabulary
    assert " " in tok.source_vocabulary and "\u00a0" not in tok.source_vocabulary


# -- the surface (cased, reversible) target -------------------------------------------------


def test_surface_pieces_give_back_the_text_as_written_in_every_script():
    from keras_adl.text.normalization import surface_text
    from keras_adl.text.wordpiece import SurfaceWordPieceTokenizer

    tok = SurfaceWordPieceTokenizer(learn_wordpiece(TEXTS, 300, surface=True))
    texts = TEXTS[:6] + ["ALTER TABLE … CASCADE; .L, .W or .B (3l, emacs) {0} %(name)s"]
    # The last text's characters were not all seen: its unseen words are <unk> (dropped).
    ids = tok.tokenize(tf.constant(texts)).to_tensor()
    decoded = _strings(tok.detokenize(ids))
    assert decoded[:6] == texts[:6]  # case, NBSP before ":" and "!", « », CJK, "%s" kept
    assert decoded[0] == f"Fichier introuvable{NBSP}: «{NBSP}données.txt{NBSP}»{NNBSP}!"
    assert _strings(surface_text(tf.constant(["  Un\t\tdeux \n"]))) == ["Un deux"]
    assert _strings(tok.normalize(tf.constant(texts[:1]))) == texts[:1]


def test_a_cased_target_round_trips_its_config_and_decodes_text_a_user_can_ship():
    sources = ["File not found.", "Could not open %s: %s", "Save As…"] * 4
    targets = [
        "Fichier introuvable.",
        f"Impossible d'ouvrir %s{NBSP}: %s",
        "Enregistrer sous…",
    ] * 4
    tok = TextPairTokenizer.build(sources, targets, vocab_size=200, cased_target=True)
    again = TextPairTokenizer.from_config(json.loads(json.dumps(tok.to_config())))
    assert again.cased_target and tok.to_config()["cased_target"] is True
    _, target = again.encode_target(tf.constant(targets[:3]), 24)
    assert _strings(again.decode_target(target)) == targets[:3]
    # A run written before the option reads as it was trained: case folded.
    config = tok.to_config()
    del config["cased_target"]
    assert TextPairTokenizer.from_config(config).cased_target is False
    with pytest.raises(ValueError, match="`cased_target` needs the subword level"):
        TextPairTokenizer(["a"], ["b"], level="word", cased_target=True)


def test_scores_of_a_cased_target_are_raw_text_first_then_normalised():
    from keras_adl.recipes.sequences.evaluate import score_pairs

    tok = TextPairTokenizer.build(["a"] * 3, ["Fichier."] * 3, vocab_size=50, cased_target=True)
    scores = score_pairs(tok, ["File."], ["Fichier introuvable."], ["fichier introuvable ."])
    assert scores["exact_match"] == 0.0  # raw text: case and spacing count
    assert scores["normalized"]["exact_match"] == 1.0

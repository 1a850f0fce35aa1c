"""The embeddings family's export answers every input (`tests.serving_fuzz`)."""

import tensorflow as tf

from keras_adl.conventions import NUM_SPECIAL_TOKENS
from keras_adl.models.word2vec import skipgram_negative_sampling
from keras_adl.recipes.embeddings.serving import NEIGHBORS, export_word_vectors
from tests import serving_fuzz

WORDS = ["the", "old", "man", "sea", "strasse", "москва", "東京", "may", "1998", "café"]


def test_a_word_vectors_export_answers_every_input(tmp_path):
    model = skipgram_negative_sampling(len(WORDS) + NUM_SPECIAL_TOKENS, dim=8)
    export_dir = str(tmp_path / "vectors")
    export_word_vectors(model, export_dir, WORDS)
    shapes = {
        "vectors": (tf.float32, (8,)),
        "known": (tf.bool, ()),
        "neighbors": (tf.string, (NEIGHBORS,)),
        "similarities": (tf.float32, (NEIGHBORS,)),
    }
    shapes.update({k: (tf.bool, ()) for k in ("empty", "truncated", "invalid_utf8")})
    serving_fuzz.check_answers_everything(export_dir, shapes, per_category=50)
    serve, _, _ = serving_fuzz.signature(export_dir)
    out = {k: v.numpy() for k, v in serve(words=tf.constant(["", "STRASSE", "sea man", b"\xff"]))
           .items()}  # fmt: skip
    assert out["known"].tolist() == [False, True, True, False]  # folded as the corpus was: strasse
    assert out["empty"].tolist() == [True, False, False, True]  # U+FFFD is no word
    assert out["truncated"].tolist() == [False, False, True, False]
    assert out["invalid_utf8"].tolist() == [False, False, False, True]
    assert not out["vectors"][0].any() and out["neighbors"][0].tolist() == [b""] * NEIGHBORS

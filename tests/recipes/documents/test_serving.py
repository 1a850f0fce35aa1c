"""The documents family's export answers every input (`tests.serving_fuzz`)."""

import numpy as np
import tensorflow as tf

from keras_adl.models import han_classifier
from keras_adl.recipes.documents.serving import export_han
from keras_adl.text import DocumentTokenizer
from tests import serving_fuzz

DOCUMENTS = ["The striker scored twice. The crowd roared!", "Parliament passed the bill."]


def test_a_han_export_answers_every_input(tmp_path):
    tokenizer = DocumentTokenizer(DocumentTokenizer.build(DOCUMENTS).vocabulary, 3, 5)
    model = han_classifier(tokenizer.vocabulary_size, 2, 3, 5, embedding_dim=8, units=8)
    export_dir = str(tmp_path / "han")
    export_han(model, export_dir, tokenizer, class_names=["sports", "politics"])
    shapes = {
        "classes": (tf.int32, ()),
        "class_names": (tf.string, ()),
        "probabilities": (tf.float32, (2,)),
        "word_attention": (tf.float32, (3, 5)),
        "sentence_attention": (tf.float32, (3,)),
        "tokens": (tf.string, (3, 5)),
    }
    shapes.update({k: (tf.bool, ()) for k in ("empty", "truncated", "invalid_utf8")})
    serving_fuzz.check_answers_everything(export_dir, shapes, per_category=50)
    serve, _, _ = serving_fuzz.signature(export_dir)
    batch = ["", "\x00 \u3000", "The crowd roared.", "one. two. three. four.", b"\xffscored"]
    out = {k: v.numpy() for k, v in serve(documents=tf.constant(batch)).items()}
    assert out["empty"].tolist() == [True, True, False, False, False]
    assert out["classes"][:2].tolist() == [-1, -1] and out["class_names"][:2].tolist() == [b""] * 2
    np.testing.assert_array_equal(out["probabilities"][:2], 0.0)
    np.testing.assert_allclose(out["probabilities"][2:].sum(-1), 1.0, rtol=1e-6)
    assert out["truncated"].tolist() == [False, False, False, True, False]
    assert out["invalid_utf8"].tolist() == [False, False, False, False, True]
    assert out["tokens"][4][0][0] == b"scored"  # U+FFFD is not part of a word

"""The contextual family's exports: raw strings in, ``[GloVe; CoVe]`` vectors or a topic out,
printed one line per text by ``predict``; runs of an earlier version (their tokenizer file
``vocab.json``) still export."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.models import elmo_bilm
from keras_adl.recipes._recipe import input_label as label
from keras_adl.recipes.contextual.serving import export_bilm
from keras_adl.recipes.contextual.tasks import RECIPES
from tests import serving_fuzz
from tests.recipes.contextual.runs import CLASS_NAMES, classifier_run, cove_run

FLAGS = {k: (tf.bool, ()) for k in ("empty", "truncated", "invalid_utf8")}

TEXTS = ["The file\tété", "Привет, мир 東京"]


def _export(task, run_dir, record, tmp_path):
    model = keras.saving.load_model(os.path.join(run_dir, "model.keras"))
    export_dir = str(tmp_path / f"{task}_export")
    RECIPES[task].export(run_dir, record, model, export_dir)
    return export_dir


@pytest.mark.parametrize("tokenizer_file", ["tokenizer.json", "vocab.json"])
def test_cove_runs_export_under_the_tokenizers_new_and_earlier_name(
    tmp_path, capsys, tokenizer_file
):
    run_dir, _, record = cove_run(tmp_path / "cove", tokenizer_file)
    export_dir = _export("cove", run_dir, record, tmp_path)
    RECIPES["cove"].predict(export_dir, TEXTS, {"task": "cove"})
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        "The file été\tThe file été\tvectors: 3 words × 20",  # the words as written
        TEXTS[1] + "\tПривет мир 東京\tvectors: 3 words × 20",
    ]
    if tokenizer_file == "tokenizer.json":  # the fuzz suite, on one of the two exports
        shapes = {
            "vectors": (tf.float32, (None, 20)),
            "words": (tf.string, (None,)),
            "mask": (tf.bool, (None,)),
            **FLAGS,
        }
        serving_fuzz.check_answers_everything(export_dir, shapes, per_category=50)
        serve, _, _ = serving_fuzz.signature(export_dir)
        out = serve(texts=tf.constant(["The FILE Été", "the file été"]))
        vectors = out["vectors"].numpy()
        assert [w.decode() for w in out["words"].numpy()[0][:3]] == ["The", "FILE", "Été"]
        np.testing.assert_allclose(vectors[0], vectors[1], atol=1e-6)  # read case folded


@pytest.mark.parametrize("tokenizer_file", ["tokenizer.json", "vocab.json"])
def test_classifier_runs_export_under_the_tokenizers_new_and_earlier_name(
    tmp_path, capsys, tokenizer_file
):
    run_dir, record = classifier_run(tmp_path / "ff", tokenizer_file)
    export_dir = _export("fortunes_features", run_dir, record, tmp_path)
    RECIPES["fortunes_features"].predict(export_dir, TEXTS, {"task": "fortunes_features"})
    lines = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [line[0] for line in lines] == [label(text) for text in TEXTS]
    assert all(line[1] in CLASS_NAMES and line[2].startswith("p=") for line in lines)
    if tokenizer_file == "tokenizer.json":  # the fuzz suite, on one of the two exports
        shapes = {
            "classes": (tf.int32, ()),
            "probabilities": (tf.float32, (len(CLASS_NAMES),)),
            "class_names": (tf.string, ()),
            **FLAGS,
        }
        serving_fuzz.check_answers_everything(export_dir, shapes, per_category=50)
        serve, _, _ = serving_fuzz.signature(export_dir)
        out = serve(texts=tf.constant(["", "the file"]))
        assert out["classes"].numpy()[0] == -1 and out["class_names"].numpy()[0] == b""


def test_a_bilm_export_answers_every_input(tmp_path):
    bilm = elmo_bilm(20, max_characters=8, filters=((1, 8), (2, 8)), projection_dim=8, units=12)
    export_dir = str(tmp_path / "bilm")
    export_bilm(bilm, export_dir, 8, 6)
    shapes = {
        "layers": (tf.float32, (3, 6, 16)),
        "words": (tf.string, (6,)),
        "mask": (tf.bool, (6,)),
        **FLAGS,
    }
    serving_fuzz.check_answers_everything(export_dir, shapes, per_category=50)
    serve, _, _ = serving_fuzz.signature(export_dir)
    out = serve(texts=tf.constant(["Straße 😀 Été", "strasse été"]))
    assert [w.decode() for w in out["words"].numpy()[0][:3]] == ["Straße", "Été", ""]
    assert out["mask"].numpy()[0].tolist() == [True, True, False, False, False, False]
    layers = out["layers"].numpy()
    np.testing.assert_allclose(layers[0], layers[1], atol=1e-6)  # the biLM reads them folded


def test_labels_are_one_line_of_at_most_40_characters():
    assert label("a\tb\r\nc") == "a b c"
    assert label("x" * 41) == "x" * 37 + "..."

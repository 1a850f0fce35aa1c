"""The contextual family's exports: raw strings in, ``[GloVe; CoVe]`` vectors or a topic out,
printed one line per text by ``predict``; runs of an earlier version (their tokenizer file
``vocab.json``) still export."""

import os

import keras
import pytest

from keras_adl.recipes.contextual.serving import label
from keras_adl.recipes.contextual.tasks import RECIPES
from tests.recipes.contextual.runs import CLASS_NAMES, classifier_run, cove_run

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
        "The file été\tthe file été\tvectors: 3 words × 20",
        TEXTS[1] + "\tпривет мир 東京\tvectors: 3 words × 20",
    ]


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


def test_labels_are_one_line_of_at_most_40_characters():
    assert label("a\tb\r\nc") == "a b c"
    assert label("x" * 41) == "x" * 37 + "..."

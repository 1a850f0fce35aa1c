"""The date_fields task through `keras_adl.recipes.train` and the command line."""

import json
import os

import pytest

from keras_adl import cli, recipes
from keras_adl.training.rundir import RecipeError


def _run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_bad_views_are_refused_in_one_line_before_training(tmp_path, capsys):
    with pytest.raises(RecipeError, match="--views must be distinct names"):
        recipes.train("date_fields", str(tmp_path / "a"), labelled=8, views="future,sideways")
    code, _, err = _run(
        ["train", "date_fields", "--views", "past,past", "--out", str(tmp_path / "b")], capsys
    )
    assert code == 1 and err.startswith("keras-adl: error: --views must be distinct names")
    assert len(err.splitlines()) == 1
    assert not os.path.exists(tmp_path / "b" / "model.keras")


@pytest.mark.slow  # an end-to-end CLI run (~40 s)
def test_train_export_predict_date_fields(tmp_path, capsys):
    run_dir, export_dir = str(tmp_path / "run"), str(tmp_path / "export")
    argv = ["train", "date_fields", "--model", "bilstm_chars", "--labelled", "20"]
    argv += ["--samples", "200", "--epochs", "1", "--views", "future,past", "--out", run_dir]
    code, out, _ = _run(argv, capsys)
    assert code == 0
    record = json.load(open(os.path.join(run_dir, "run.json")))
    metrics = record["metrics"]
    assert set(metrics["auxiliary_token_accuracy"]) == {"future", "past"}
    # One epoch on 20 sequences already beats tagging everything with the commonest tag.
    assert metrics["held_out_token_accuracy"] > 0.5 and 0 < metrics["held_out_chunk_f1"] <= 1
    assert (record["labelled_sequences"], record["unlabelled_sequences"]) == (20, 200)
    assert record["steps_per_epoch"] == 600  # 300 labelled batches, each with an unlabelled one
    assert os.path.getsize(os.path.join(run_dir, "views.png")) > 1000
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    code, out, _ = _run(["predict", export_dir, "Wed, 05/06/2002 to 17/06/2002"], capsys)
    assert code == 0
    text, pairs = out.strip().split("\t")
    assert text == "Wed, 05/06/2002 to 17/06/2002"
    assert [p.rsplit("/", 1)[0] for p in pairs.split(" ")] == [
        "Wed",
        ",",
        "05",
        "/",
        "06",
        "/",
        "2002",
        "to",
        "17",
        "/",
        "06",
        "/",
        "2002",
    ]
    tags = {p.rsplit("/", 1)[1] for p in pairs.split(" ")}
    assert tags <= {"O", "WEEKDAY", "DAY", "MONTH", "YEAR", "SEP"}


@pytest.mark.slow  # ~30 s
def test_labels_alone_train_without_auxiliaries(tmp_path):
    run_dir = str(tmp_path / "run")
    _, _, metrics = recipes.train(
        "date_fields", run_dir, epochs=1, samples=100, labelled=20, unlabelled="off"
    )
    record = json.load(open(os.path.join(run_dir, "run.json")))
    assert record["views"] == [] and record["unlabelled_sequences"] == 0
    assert record["steps_per_epoch"] == 300  # the same labelled batches as with CVT
    assert "auxiliary_token_accuracy" not in metrics
    assert metrics["held_out_token_accuracy"] > 0.5

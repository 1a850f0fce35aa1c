"""Bring your own data, end to end: ``keras-adl train`` on awkward inputs either trains to
finite weights and reports its figures, or stops with one line and leaves ``--out`` as it was."""

import json
import os

import pytest

from keras_adl.cli import main
from tests.byod.inputs import (
    document_cases,
    idx_cases,
    pair_cases,
    text_cases,
    write_cases,
    write_idx_case,
)

RUNS = [
    # (task, cases, suffix, case, options, trains)
    ("word2vec", text_cases, ".txt", "small vocabulary", ["--min-count", "1"], True),
    ("word2vec", text_cases, ".txt", "mixed scripts", ["--min-count", "1"], True),
    ("pretrain_lm", text_cases, ".txt", "two lines", ["--steps", "2"], False),
    ("pretrain_lm", text_cases, ".txt", "ten lines", ["--steps", "2"], False),
    ("pairs", pair_cases, ".tsv", "one pair", [], False),
    ("pairs", pair_cases, ".tsv", "ten pairs", [], True),
    ("documents", document_cases, ".tsv", "a class of one example", [], True),
    ("documents", document_cases, ".tsv", "two documents", [], True),  # one to train, one to test
    ("word2vec", text_cases, ".txt", "large vocabulary", ["--min-count", "1"], True),
    ("pairs", pair_cases, ".tsv", "mixed scripts", [], True),
]


@pytest.mark.slow  # ten runs of keras-adl train, about two minutes
@pytest.mark.parametrize(
    "task, cases, suffix, case, options, trains", RUNS, ids=[f"{r[0]}-{r[3]}" for r in RUNS]
)
def test_train_on_an_awkward_input(tmp_path, capsys, task, cases, suffix, case, options, trains):
    from keras_adl.training.divergence import non_finite_variables

    written = {name: path for name, path, _ in write_cases(str(tmp_path), cases(), suffix)}
    out = str(tmp_path / "run")
    code = main(["train", task, "--data", written[case], "--out", out, "--epochs", "1", *options])
    err = capsys.readouterr().err
    if not trains:
        assert code == 1
        assert len([line for line in err.splitlines() if line.strip()]) == 1
        assert err.startswith("keras-adl: error: ")
        assert not os.path.exists(out)
        return
    assert code == 0, err
    with open(os.path.join(out, "run.json")) as f:
        record = json.load(f)
    assert record["status"] == "finished" and record["metrics"] is not None
    import keras

    import keras_adl  # noqa: F401

    model = keras.saving.load_model(os.path.join(out, "model.keras"))
    assert not non_finite_variables(model)


@pytest.mark.slow  # two runs of keras-adl train translated_digits, under a minute
@pytest.mark.parametrize("case, trains", [("20×20 images", True), ("labels beyond 9", False)])
def test_train_vision_on_an_awkward_idx_directory(tmp_path, capsys, case, trains):
    from keras_adl.training.divergence import non_finite_variables

    files = {name: data for name, data, _ in idx_cases()}[case]
    directory = write_idx_case(str(tmp_path / "idx"), files)
    out = str(tmp_path / "run")
    code = main(["train", "translated_digits", "--data", directory, "--out", out, "--epochs", "1"])
    err = capsys.readouterr().err
    if not trains:
        assert code == 1 and err.startswith("keras-adl: error: ") and directory in err
        assert len([line for line in err.splitlines() if line.strip()]) == 1
        assert not os.path.exists(out)
        return
    assert code == 0, err
    with open(os.path.join(out, "run.json")) as f:
        record = json.load(f)
    assert record["status"] == "finished" and 0.0 <= record["metrics"]["held_out_error"] <= 1.0
    import keras

    import keras_adl  # noqa: F401

    model = keras.saving.load_model(os.path.join(out, "model.keras"))
    assert not non_finite_variables(model)

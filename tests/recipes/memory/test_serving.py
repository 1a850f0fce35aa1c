"""The memory family's export and ``predict``: copy models read bit vectors typed on the command
line; the other tasks' models are served through the Python API only."""

import json
import os

import numpy as np
import pytest

from keras_adl.recipes import RecipeError
from keras_adl.recipes.memory.tasks import RECIPES
from keras_adl.training.rundir import TASK_FILE

VECTORS = ["10110010", "01100110", "11110000"]


@pytest.fixture(scope="module")
def copy_export(tmp_path_factory):
    copy = RECIPES["copy"]
    model = copy.build_model("lstm", jit_compile=False, lstm_units=8, lstm_layers=1)
    export_dir = str(tmp_path_factory.mktemp("copy") / "export")
    copy.export("unused", {"task": "copy", "model": "lstm"}, model, export_dir)
    return model, export_dir


def test_an_exported_copy_model_prints_each_vector_and_its_copy(copy_export, capsys):
    model, export_dir = copy_export
    with open(os.path.join(export_dir, TASK_FILE)) as f:
        assert json.load(f) == {"task": "copy", "model": "lstm"}
    RECIPES["copy"].predict(export_dir, VECTORS, {"task": "copy", "model": "lstm"})
    rows = [line.split("\t") for line in capsys.readouterr().out.strip().splitlines()]
    assert [row[0] for row in rows] == VECTORS
    # the copies are the model's own answer steps, read after the end-of-input flag
    x = np.zeros((1, 7, 9), "float32")
    x[0, :3, :8] = [[float(c) for c in v] for v in VECTORS]
    x[0, 3, 8] = 1.0
    logits = np.asarray(model(x))[0, 4:]
    assert [row[1] for row in rows] == ["".join("1" if v > 0 else "0" for v in r) for r in logits]


def test_predict_names_vectors_of_other_widths_and_copies_the_others(copy_export, capsys):
    model, export_dir = copy_export
    info = {"task": "copy", "model": "lstm"}
    with pytest.raises(RecipeError, match=r"2 of 4 input\(s\) got no answer \(input 2, 4: "):
        RECIPES["copy"].predict(export_dir, [VECTORS[0], "1011", VECTORS[1], "10a1"], info)
    rows = [line.split("\t") for line in capsys.readouterr().out.strip().splitlines()]
    assert rows[1] == ["1011", "(this model copies 8-bit vectors; received 4 bits)"]
    assert rows[3] == ["10a1", "(not a bit vector: write it in 0s and 1s, e.g. 10110010)"]
    # The others are copied as one sequence of two vectors.
    x = np.zeros((1, 5, 9), "float32")
    x[0, :2, :8] = [[float(c) for c in v] for v in VECTORS[:2]]
    x[0, 2, 8] = 1.0
    logits = np.asarray(model(x))[0, 3:]
    copies = ["".join("1" if v > 0 else "0" for v in r) for r in logits]
    assert [rows[0][1], rows[2][1]] == copies


@pytest.mark.parametrize("task", ["repeat_copy", "associative_recall", "priority_sort"])
def test_predict_reads_copy_vectors_only(task):
    with pytest.raises(
        RecipeError,
        match=rf"predict reads copy-task bit vectors; a '{task}' model takes \[batch, time, "
        r"features\] arrays through the Python API",
    ):
        RECIPES[task].predict("unused", VECTORS, {"task": task, "model": "ntm"})


def test_a_memory_export_answers_every_batch(copy_export):
    import tensorflow as tf

    from tests import serving_fuzz

    _, export_dir = copy_export
    shapes = {"logits": (tf.float32, (7, 8)), "invalid_values": (tf.bool, ())}
    serving_fuzz.check_arrays_answered(export_dir, (7, 9), shapes, large_batch=1000)
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    out = serve(inputs=tf.zeros((3, 0, 9)))  # sequences of no step
    assert out["logits"].shape == (3, 0, 8) and not out["invalid_values"].numpy().any()

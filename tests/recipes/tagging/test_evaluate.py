"""The tagging family's figures: token accuracy, chunk F1 and the modules' accuracies."""

import os

import keras
import numpy as np

from keras_adl.recipes.tagging import data
from keras_adl.recipes.tagging.evaluate import chunk_f1, chunks, evaluate, token_accuracy
from keras_adl.recipes.tagging.tasks import RECIPES

OPTIONS = {"labelled": 8, "unlabelled": "on", "views": "future,past"}


def test_token_accuracy_counts_real_tokens_only():
    true = np.array([[3, 4, 5, 0, 0], [1, 1, 0, 0, 0]])
    predicted = np.array([[3, 4, 6, 2, 2], [1, 2, 5, 5, 5]])
    assert token_accuracy(true, predicted) == 3 / 5
    assert token_accuracy(np.zeros((2, 3), int), predicted[:, :3]) == 0.0


def test_chunks_are_maximal_runs_of_one_tag_outside_O_and_padding():
    tags = np.array([[2, 6, 3, 3, 1, 4, 0, 0], [5, 5, 5, 5, 5, 5, 5, 5]])
    assert chunks(tags) == {(0, 0, 1, 2), (0, 1, 2, 6), (0, 2, 4, 3), (0, 5, 6, 4), (1, 0, 8, 5)}


def test_chunk_f1_needs_span_and_tag_and_ignores_padding():
    true = np.array([[3, 3, 1, 4, 0]])
    assert chunk_f1(true, np.array([[3, 3, 1, 4, 4]])) == 1.0  # padding predictions ignored
    assert chunk_f1(true, np.array([[3, 1, 1, 4, 0]])) == 0.5  # a span cut short is wrong
    # 1 right of 2 predicted (precision 1/2) and of 2 true (recall 1/2).
    assert chunk_f1(true, np.array([[3, 3, 1, 5, 0]])) == 0.5
    # Two chunks predicted where there is one: precision 0/2, recall 0/1.
    assert chunk_f1(np.array([[3, 3]]), np.array([[3, 4]])) == 0.0
    assert chunk_f1(np.array([[1, 1]]), np.array([[1, 1]])) == 1.0  # no chunk at all


def test_evaluate_reports_the_primary_and_every_auxiliary(tmp_path):
    keras.utils.set_random_seed(0)
    task = RECIPES["date_fields"]
    tagging_data = data.date_field_data("date_fields", OPTIONS, 16, seed=0, characters=False)
    tagging_data = tagging_data._replace(test=tuple(a[:40] for a in tagging_data.test))
    model = task.build_model("bilstm", tagging_data, jit_compile=False, units=8, hidden_units=8)
    metrics = evaluate(model, tagging_data, str(tmp_path), "t")
    words, tags = tagging_data.test
    outputs = model.predict({"words": words}, verbose=0)
    assert metrics["held_out_token_accuracy"] == token_accuracy(
        tags, outputs["date_fields"].argmax(-1)
    )
    assert set(metrics["auxiliary_token_accuracy"]) == {"future", "past"}
    assert metrics["auxiliary_token_accuracy"]["past"] == token_accuracy(
        tags, outputs["date_fields/past"].argmax(-1)
    )
    assert 0.0 <= metrics["held_out_chunk_f1"] <= 1.0 and metrics["held_out_sequences"] == 40
    assert os.path.getsize(tmp_path / "views.png") > 1000

"""The runs the contextual tasks read: ``--features`` names the runs it needs, a run of another
task is refused, and a ``cove`` run of an earlier version (its tokenizer in ``vocab.json``)
still gives its words and encoder."""

import json

import numpy as np
import pytest

from keras_adl.recipes import RecipeError
from keras_adl.recipes.contextual.sources import sources
from tests.recipes.contextual.runs import cove_run


@pytest.mark.parametrize(
    "features, options, message",
    [
        ("static", {}, "--features static needs --vectors"),
        ("elmo", {"vectors": "x"}, "--features elmo needs --bilm"),
        ("elmo_top", {}, "needs --vectors and --bilm"),
        ("cove", {"vectors": "x"}, "--features cove needs --cove"),
    ],
)
def test_features_name_the_runs_they_need(features, options, message):
    with pytest.raises(RecipeError, match=message):
        sources(features, options)


def test_a_run_of_another_task_is_refused_in_one_line(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"task": "dates", "status": "finished"}))
    with pytest.raises(RecipeError, match="expected a finished `keras-adl train word2vec` run"):
        sources("static", {"vectors": str(tmp_path)})
    with pytest.raises(RecipeError, match="holds no keras-adl run"):
        sources("elmo", {"vectors": str(tmp_path / "nothing"), "bilm": "x"})


@pytest.mark.parametrize("tokenizer_file", ["tokenizer.json", "vocab.json"])
def test_a_cove_run_is_read_under_the_tokenizers_new_and_earlier_name(tmp_path, tokenizer_file):
    run_dir, tokenizer, _ = cove_run(tmp_path / "cove", tokenizer_file)
    found = sources("cove", {"cove": run_dir})
    assert found["words"] == tokenizer.source_vocabulary
    assert found["cove_run"]["task"] == "cove"
    vectors = found["cove"](np.array([[4, 5, 0]], "int32"))
    assert tuple(vectors.shape) == (1, 3, 4 + 2 * 8)  # [word vectors; both directions]

"""The word2vec task on a user's own corpus: ``--learning-rate`` is SGD's per-example rate."""

import json

import pytest

from keras_adl import recipes
from keras_adl.data.text_corpora import topic_corpus
from keras_adl.recipes.embeddings.spec import BATCH_SIZE, WORD2VEC_TASK
from keras_adl.training.divergence import peak_learning_rate


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_learning_rate_is_sgds_per_example_rate(tmp_path, optimizer):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(topic_corpus(60, 2000), encoding="utf-8")
    model, _, _ = recipes.train(
        "word2vec",
        str(tmp_path / "run"),
        epochs=1,
        data=str(corpus),
        optimizer=optimizer,
        learning_rate=0.01,
        min_count=1,
    )
    with open(tmp_path / "run" / "run.json") as f:
        record = json.load(f)
    assert record["learning_rate"] == pytest.approx(0.01)
    assert record["status"] == "finished"
    # SGD's step rate is alpha times the logits of a batch (word2vec.c's rule, batched).
    per_step = BATCH_SIZE * (WORD2VEC_TASK.preset("skipgram")["negatives"] + 1)
    expected = 0.01 * per_step if optimizer == "sgd" else 0.01
    assert peak_learning_rate(model.optimizer) == pytest.approx(expected)


def test_word2vec_checkpoints_every_5000_steps_unless_told():
    from keras_adl.cli.parsing import task_parser
    from keras_adl.recipes import checkpoint_interval
    from keras_adl.recipes.embeddings.spec import FAMILY

    dates = recipes.find("dates", None)[1]
    assert checkpoint_interval(WORD2VEC_TASK, "task") == 5000  # a step is about 2 ms
    assert checkpoint_interval(dates, "task") == recipes.CHECKPOINT_EVERY == 200
    assert checkpoint_interval(WORD2VEC_TASK, 30) == 30
    assert checkpoint_interval(WORD2VEC_TASK, None) is None  # epoch ends only
    parser = task_parser("train", FAMILY, WORD2VEC_TASK)
    assert parser.parse_args(["--out", "run"]).checkpoint_every is None
    assert "default: 5000" in " ".join(parser.format_help().split())

"""The development splits of the documents, memory, vision and pretraining tasks: carved from
the training data (or drawn with their own seed), disjoint from training and test, their loss
picking the best epoch; tiny data trains without one, and --patience is then refused."""

import json

import keras
import numpy as np
import pytest

from keras_adl import recipes
from keras_adl.recipes import RecipeError
from keras_adl.recipes._development import MIN_FOR_DEVELOPMENT, development_rows


class _Weights(keras.callbacks.Callback):
    """The model's weights at every epoch's end."""

    def __init__(self):
        super().__init__()
        self.by_epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.by_epoch.append([w.copy() for w in self.model.get_weights()])


def _kept_the_best_epoch(out, model, seen):
    record = json.loads((out / "run.json").read_text())
    assert record["best_epoch"] in (1, 2) and record["ended_by"] == "epochs"
    assert np.isfinite(record["best_val_loss"])
    for kept, best in zip(model.get_weights(), seen.by_epoch[record["best_epoch"] - 1]):
        np.testing.assert_array_equal(kept, best)
    return record


def test_development_rows_partition_the_training_examples_with_a_fixed_seed():
    assert development_rows(MIN_FOR_DEVELOPMENT - 1, 100) is None
    train, held = development_rows(1000, most=50)
    assert len(held) == 50 and len(train) == 950
    assert sorted([*train, *held]) == list(range(1000))
    again = development_rows(1000, most=50)
    np.testing.assert_array_equal(held, again[1])  # a resumed run sees the same split


# -- documents --------------------------------------------------------------------------------


def _documents_file(tmp_path, count):
    lines = []
    for i in range(count):
        label, word = (("sport", "ball"), ("food", "bread"))[i % 2]
        lines.append(f"{label}\t{word} number {i} is here. The {word} again {i}.")
    path = tmp_path / f"documents{count}.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _streamed_training_texts(streamed):
    """Every training document of a `StreamedDocuments`, read back from its class files."""
    import tensorflow as tf

    texts = []
    for label in streamed.class_counts:
        for record in tf.data.TFRecordDataset(streamed._path(label)).as_numpy_iterator():
            texts.append(record.decode("utf-8"))
    return texts


def test_documents_development_is_disjoint_and_picks_the_best_epoch(tmp_path):
    from keras_adl.recipes.documents.streaming import StreamedDocuments

    data = _documents_file(tmp_path, 60)
    streamed = StreamedDocuments(str(data), 10**6)
    development, test = streamed.development[0], streamed.test_docs
    assert 2 <= len(development) <= 12  # about a tenth of the ~48 not tested
    training = _streamed_training_texts(streamed)
    assert len(training) == streamed.train_documents
    assert not set(development) & set(training) and not set(development) & set(test)
    assert not set(test) & set(training)
    assert len(training) + len(development) + len(test) == 60
    seen = _Weights()
    out = tmp_path / "run"
    model, _, _ = recipes.train(
        "documents",
        str(out),
        epochs=2,
        batch_size=16,
        data=str(data),
        callbacks=(seen,),
        jit_compile=False,
    )
    record = _kept_the_best_epoch(out, model, seen)
    assert record["development_documents"] == len(development)
    assert record["train_documents"] == streamed.train_documents


def test_needle_development_documents_are_fresh():
    from keras_adl.recipes.documents.tasks import RECIPES

    task = RECIPES["needle"]
    train, labels, test, *_ = task.documents(None, 500)
    kept, _, (development, _) = task.development(train, labels)
    assert kept == train and len(development) == 256
    assert not set(development) & (set(train) | set(test))


def test_tiny_documents_train_without_a_development_split_and_refuse_patience(tmp_path, capsys):
    two = _documents_file(tmp_path, 2)  # one to train on, one to test
    out = tmp_path / "run"
    recipes.train("documents", str(out), epochs=1, data=str(two), jit_compile=False)
    record = json.loads((out / "run.json").read_text())
    assert record["development_examples"] == 0 and "best_epoch" not in record
    assert "documents: no development split: 1 training documents" in capsys.readouterr().out
    data = _documents_file(tmp_path, 10)
    with pytest.raises(RecipeError, match="--patience watches a held-out loss, and 'documents'"):
        recipes.train("documents", str(tmp_path / "p"), epochs=1, data=str(data), patience=1)
    assert not (tmp_path / "p").exists()  # refused before anything is left behind


# -- memory -----------------------------------------------------------------------------------


def test_memory_development_sequences_are_their_own_and_pick_the_best_epoch(tmp_path):
    from keras_adl.data.algorithmic import GENERATORS, task_dataset
    from keras_adl.recipes.memory.spec import HELD_OUT
    from keras_adl.recipes.memory.tasks import RECIPES

    x, _, _ = RECIPES["copy"].development()
    rows = {r.tobytes() for r in x}
    test = GENERATORS["copy"](HELD_OUT, seed=1)[0]
    stream = iter(task_dataset("copy", 32, seed=0))
    training = [b for _ in range(4) for b in next(stream)[0]]
    assert not rows & {r.tobytes() for r in test}
    assert not rows & {np.asarray(r).tobytes() for r in training}
    seen = _Weights()
    out = tmp_path / "run"
    model, _, _ = recipes.train(
        "copy", str(out), model="lstm", epochs=2, samples=64, callbacks=(seen,), jit_compile=False
    )
    assert _kept_the_best_epoch(out, model, seen)["development_sequences"] == 128


# -- vision -----------------------------------------------------------------------------------


def test_vision_development_digits_come_from_training_only_and_pick_the_best_epoch(tmp_path):
    from keras_adl.recipes.vision.data import development_split, load_digits
    from keras_adl.recipes.vision.tasks import RECIPES

    (train_x, train_y), (test_x, _) = load_digits()
    ids = np.arange(len(train_x))  # each training digit by its row
    (kept, _), (development, _) = development_split(ids, train_y)
    assert len(development) == round(len(ids) / 10)
    assert not set(development) & set(kept) and len(kept) + len(development) == len(ids)
    (_, _), held = development_split(train_x, train_y)
    assert not {i.tobytes() for i in held[0]} & {i.tobytes() for i in test_x} - {
        i.tobytes() for i in train_x
    }
    translated = RECIPES["translated_digits"]
    canvases, classes = translated.development_data(held, 16)
    again, _ = translated.development_data(held, 16)
    np.testing.assert_array_equal(canvases, again)  # placed once, the same every epoch
    assert canvases.shape == (len(held[0]), 32, 32, 1) and len(classes) == len(held[0])
    seen = _Weights()
    out = tmp_path / "run"
    model, _, _ = recipes.train(
        "translated_digits", str(out), model="mlp", epochs=2, samples=300, callbacks=(seen,)
    )
    assert _kept_the_best_epoch(out, model, seen)["development_digits"] == 30


def test_tiny_vision_data_trains_without_a_development_split(tmp_path, capsys):
    out = tmp_path / "run"
    recipes.train("translated_digits", str(out), model="mlp", epochs=1, samples=12)
    assert "no development split: 12 training digits" in capsys.readouterr().out
    with pytest.raises(RecipeError, match="has no development split here: 12 training digits"):
        recipes.train("translated_digits", str(tmp_path / "p"), model="mlp", samples=12, patience=2)


# -- pretraining ------------------------------------------------------------------------------

_TINY = dict(
    num_layers=1, model_dim=16, num_heads=2, intermediate_dim=32, vocab_size=120, jit_compile=False
)


def _corpus(tmp_path, count):
    words = "cat dog bird fish tree rock river cloud stone leaf".split()
    rng = np.random.default_rng(0)
    paragraphs = [
        " ".join(rng.choice(words, 40)) + f" number {i}.\n" + " ".join(rng.choice(words, 40))
        for i in range(count)
    ]
    path = tmp_path / f"corpus{count}.txt"
    path.write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return path


def test_pretraining_development_is_disjoint_and_picks_the_best_epoch(tmp_path):
    from keras_adl.recipes.pretraining import data as pretraining_data

    data = _corpus(tmp_path, 60)
    train, held_out = pretraining_data.corpus(str(data), 10**6)
    # repeats leave training too
    kept, development = pretraining_data.development_split(train + train[:5])
    assert len(development) == 6
    assert not set(development) & (set(kept) | set(held_out))
    seen = _Weights()
    out = tmp_path / "run"
    model, _, _ = recipes.train(
        "pretrain_lm",
        str(out),
        epochs=2,
        batch_size=4,
        data=str(data),
        steps=2,
        callbacks=(seen,),
        **_TINY,
    )
    # pretrain_lm streams --data: its development split is drawn by a hash of each text
    from keras_adl.recipes.pretraining.streaming import StreamedCorpus

    streamed = StreamedCorpus(str(data), 10**6)
    assert not set(streamed.development) & set(streamed.held_out)
    recorded = _kept_the_best_epoch(out, model, seen)["development_documents"]
    assert recorded == len(streamed.development) > 2


def test_a_tiny_corpus_pretrains_without_a_development_split(tmp_path, capsys):
    data = _corpus(tmp_path, 6)
    with pytest.raises(RecipeError, match="'pretrain_mlm' has no development split here"):
        recipes.train("pretrain_mlm", str(tmp_path / "p"), data=str(data), patience=1, **_TINY)
    out = tmp_path / "run"
    recipes.train(
        "pretrain_mlm", str(out), epochs=1, batch_size=4, data=str(data), steps=1, **_TINY
    )
    assert "pretrain_mlm: no development split: 5 distinct" in capsys.readouterr().out


def test_finetuning_and_fortune_features_read_the_documents_development_split(monkeypatch):
    from keras_adl.recipes.documents import data as documents_data
    from keras_adl.recipes.pretraining import data as pretraining_data

    docs = [f"fortune number {i}." for i in range(100)]
    labels = np.arange(100) % 3

    def fortune_topics(data, samples, seed=0):
        return documents_data.Documents(
            docs[:80], labels[:80], docs[80:], labels[80:], ["a", "b", "c"], None
        )

    monkeypatch.setattr(documents_data, "fortune_topics", fortune_topics)
    fortunes, (development, _) = pretraining_data.fortunes(None, 10**6)
    train, test = fortunes.train_docs, fortunes.test_docs
    assert len(development) == 8 and len(train) == 72
    assert not set(development) & (set(train) | set(test))
    tasks = recipes.all_tasks()
    for name in ("needle", "fortunes", "documents", "copy", "digit_strips", "pretrain_mlm"):
        assert tasks[name][1].held_out
    for name in ("pretrain_lm", "finetune", "cove", "fortunes_features"):
        assert tasks[name][1].held_out

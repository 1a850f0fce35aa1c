"""The sequences family's exports: the ``pairs`` task's run directory and export (the tokenizer
file under its new name, and the ``vocab.json`` of earlier versions still read by ``export``,
``evaluate`` and ``predict``), and every export answering every input (`tests.serving_fuzz`)."""

import json
import os
import shutil

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.data.dates import SOURCE_LENGTH, SOURCE_VOCAB, TARGET_LENGTH, TARGET_VOCAB
from keras_adl.models import attention_seq2seq, greedy_decode, pointer_network
from keras_adl.recipes.sequences import data
from keras_adl.recipes.sequences.evaluate import translate
from keras_adl.recipes.sequences.retrieval import MatchInput
from keras_adl.recipes.sequences.serving import (
    export_seq2seq,
    export_text_pairs,
    make_pointer_serving_fn,
)
from keras_adl.recipes.sequences.spec import OLD_TOKENIZER_FILE, TOKENIZER_FILE
from keras_adl.recipes.sequences.tasks import RECIPES
from keras_adl.text import TextPairTokenizer, TranslationMemory
from keras_adl.training.export import export_serving_fn
from keras_adl.training.rundir import MODEL_FILE, RUN_FILE, TASK_FILE
from tests import serving_fuzz

SOURCES = ["one two", "two three", "three four", "four one", "one three", "two four"]
TARGETS = ["un deux", "deux trois", "trois quatre", "quatre un", "un trois", "deux quatre"]


def _tokenizer():
    return TextPairTokenizer.build(SOURCES, TARGETS, level="word")


def test_the_tokenizer_is_written_as_tokenizer_json_and_read_under_both_names(tmp_path):
    tokenizer = _tokenizer()
    data.write_tokenizer(tokenizer, str(tmp_path))
    assert os.listdir(tmp_path) == [TOKENIZER_FILE] == ["tokenizer.json"]
    assert data.read_tokenizer(str(tmp_path)).to_config() == tokenizer.to_config()
    old = tmp_path / "old"
    old.mkdir()
    shutil.copy(tmp_path / TOKENIZER_FILE, old / OLD_TOKENIZER_FILE)
    assert OLD_TOKENIZER_FILE == "vocab.json"
    assert data.read_tokenizer(str(old)).to_config() == tokenizer.to_config()
    with pytest.raises(FileNotFoundError, match="tokenizer.json"):
        data.read_tokenizer(str(tmp_path / "none"))


@pytest.mark.slow  # two SavedModel exports and three decodings, ~20 s
def test_a_run_and_an_export_of_an_earlier_version_export_evaluate_and_predict(tmp_path, capsys):
    """A finished ``pairs`` run whose tokenizer is ``vocab.json`` (earlier versions) exports;
    the export carries ``tokenizer.json``; an export holding only ``vocab.json`` is scored by
    ``evaluate`` as the run is, and serves ``predict``."""
    tokenizer = _tokenizer()
    task = RECIPES["pairs"]
    run_dir, export_dir = tmp_path / "run", str(tmp_path / "export")
    run_dir.mkdir()
    with open(run_dir / OLD_TOKENIZER_FILE, "w") as f:
        json.dump(tokenizer.to_config(), f)
    model = task.build_model(
        "attention_seq2seq", tokenizer.source_size, tokenizer.target_size, embedding_dim=8, units=8
    )
    model.save(str(run_dir / MODEL_FILE))
    record = {"task": "pairs", "model": "attention_seq2seq", "max_length": 6}
    (run_dir / RUN_FILE).write_text(json.dumps(record))
    model = keras.saving.load_model(str(run_dir / MODEL_FILE))

    task.export(str(run_dir), record, model, export_dir)
    assert json.load(open(os.path.join(export_dir, TASK_FILE))) == record
    assert data.read_tokenizer(export_dir).to_config() == tokenizer.to_config()
    os.rename(
        os.path.join(export_dir, TOKENIZER_FILE), os.path.join(export_dir, OLD_TOKENIZER_FILE)
    )

    pairs = tmp_path / "pairs.tsv"
    pairs.write_text("".join(f"{s}\t{t}\n" for s, t in zip(SOURCES, TARGETS)))
    from_run = task.evaluate_file(str(run_dir), record, True, str(pairs))
    from_export = task.evaluate_file(export_dir, record, False, str(pairs))
    assert from_run == from_export and from_run["pairs"] == len(SOURCES)

    task.predict(export_dir, ["one two", "three"], record)
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [row[0] for row in rows] == ["one two", "three"]


def test_a_dates_export_answers_every_input(tmp_path):
    """The fuzz suite on a small dates export (issue 59): no input raises, and blank, invalid
    and over-long inputs get their defined answers."""
    model = attention_seq2seq(len(SOURCE_VOCAB), len(TARGET_VOCAB), 8, 16)
    export_dir = str(tmp_path / "dates")
    export_seq2seq(model, export_dir, SOURCE_VOCAB, TARGET_VOCAB, TARGET_LENGTH - 1)
    steps = TARGET_LENGTH - 1
    counts = serving_fuzz.check_answers_everything(
        export_dir,
        {
            "output": (tf.string, ()),
            "tokens": (tf.int32, (steps,)),
            "attention": (tf.float32, (steps, None)),
            "log_likelihood": (tf.float32, ()),
            "empty": (tf.bool, ()),
            "truncated": (tf.bool, ()),
            "invalid_utf8": (tf.bool, ()),
        },
    )
    assert counts["batch of 10000"] == 10_000 and counts["huge"] == 100
    serve, _, _ = serving_fuzz.signature(export_dir)
    out = serve(inputs=tf.constant(["", " \u00a0", "3 may 1998", b"\xff3 may", "9" * 5000]))
    assert [s.decode() for s in out["output"].numpy()[:2]] == ["", ""]
    assert out["empty"].numpy().tolist() == [True, True, False, False, False]
    assert out["invalid_utf8"].numpy().tolist() == [False, False, False, True, False]
    assert out["truncated"].numpy().tolist() == [False, False, False, False, True]
    assert out["attention"].shape[-1] == SOURCE_LENGTH  # the long input read its first 32
    np.testing.assert_array_equal(out["tokens"].numpy()[:2], 0)
    np.testing.assert_array_equal(out["attention"].numpy()[:2], 0.0)
    # An answer does not depend on the rest of the batch: alone, the same tokens.
    alone = serve(inputs=tf.constant(["3 may 1998"]))
    np.testing.assert_array_equal(alone["tokens"].numpy()[0], out["tokens"].numpy()[2])


def test_a_sort_export_answers_every_input(tmp_path):
    model = pointer_network(units=8)
    export_dir = str(tmp_path / "sort")
    export_serving_fn(model, export_dir, make_pointer_serving_fn(model))
    shapes = {"order": (tf.int32, (None,)), "output": (tf.string, ()), "count": (tf.int32, ())}
    shapes.update({k: (tf.bool, ()) for k in ("empty", "invalid", "truncated", "invalid_utf8")})
    serving_fuzz.check_answers_everything(export_dir, shapes, per_category=50, text=False)
    serve, _, _ = serving_fuzz.signature(export_dir)
    batch = ["0.5 0.1", "0.3; 0.2, 0.1", "0.5 zero", "1e999", "", " ".join(["0.1"] * 150)]
    out = {k: v.numpy() for k, v in serve(inputs=tf.constant(batch)).items()}
    assert out["count"].tolist() == [2, 3, 0, 0, 0, 100]
    assert out["invalid"].tolist() == [False, False, True, True, False, False]
    assert out["empty"].tolist() == [False, False, True, True, True, False]
    assert out["truncated"].tolist() == [False, False, False, False, False, True]
    assert sorted(out["order"][0][:2]) == [0, 1] and (out["order"][0][2:] == -1).all()
    assert sorted(out["output"][1].decode().split()) == ["0.1000", "0.2000", "0.3000"]
    # Each row is decoded over its own numbers: alone, the same order.
    alone = serve(inputs=tf.constant(["0.5 0.1"]))["order"].numpy()[0]
    assert alone.tolist() == out["order"][0][:2].tolist()


def _pair_shapes(**more):
    """The outputs of a pairs export of 6 tokens (`make_text_pair_serving_fn`), and ``more``."""
    shapes = {
        "output": (tf.string, ()),
        "tokens": (tf.int32, (6,)),
        "attention": (tf.float32, (6, 6)),
        "log_likelihood": (tf.float32, ()),
        "source_tokens": (tf.int32, ()),
    }
    return {**shapes, **{k: (tf.bool, ()) for k in ("empty", "truncated", "invalid_utf8")}, **more}


def test_a_pairs_export_answers_every_input(tmp_path):
    tokenizer = _tokenizer()
    model = attention_seq2seq(tokenizer.source_size, tokenizer.target_size, 8, 16)
    export_dir = str(tmp_path / "pairs")
    export_text_pairs(model, export_dir, tokenizer, 6, greedy_decode)
    serving_fuzz.check_answers_everything(export_dir, _pair_shapes(), per_category=50)
    serve, _, _ = serving_fuzz.signature(export_dir)
    out = serve(inputs=tf.constant(["", "one two", "one two three four one two three"]))
    assert [s.decode() for s in out["output"].numpy()][0] == ""
    assert out["truncated"].numpy().tolist() == [False, False, True]


@pytest.mark.slow  # 17 s: a pairs run and its export; make test keeps its 8-minute budget
def test_a_pairs_export_with_a_memory_answers_a_stored_source_with_its_target(tmp_path):
    tokenizer = _tokenizer()
    keras.utils.set_random_seed(0)
    model = attention_seq2seq(tokenizer.source_size, tokenizer.target_size, 8, 16)
    targets = [t.replace("un", "Un\u00a0😀") for t in TARGETS]  # kept byte for byte
    memory = TranslationMemory(SOURCES, targets)
    plain, remembering = str(tmp_path / "plain"), str(tmp_path / "memory")
    export_text_pairs(model, plain, tokenizer, 6, greedy_decode)
    export_text_pairs(model, remembering, tokenizer, 6, greedy_decode, memory, 0.9)
    inputs = tf.constant(SOURCES + ["four four four", "", "One two"])
    out = serving_fuzz.signature(remembering)[0](inputs=inputs)
    alone = serving_fuzz.signature(plain)[0](inputs=inputs)["output"].numpy()
    outputs, used = out["output"].numpy(), out["from_memory"].numpy()
    assert [o.decode() for o in outputs[: len(SOURCES)]] == targets
    assert used.tolist() == [True] * len(SOURCES) + [False, False, True]
    assert outputs[-1].decode() == targets[0]  # "One two": a fuzzy match above 0.9
    assert outputs[-3] == alone[-3] and outputs[-2] == b""  # the model's; a blank input
    score = out["memory_score"].numpy()
    assert (score[: len(SOURCES)] == 1.0).all() and score[-2] == 0.0 and score[-3] < 0.9
    shapes = _pair_shapes(memory_score=(tf.float32, ()), from_memory=(tf.bool, ()))
    serving_fuzz.check_answers_everything(remembering, shapes, per_category=20)


@pytest.mark.slow  # an export fuzzed, ~19 s (the memory export above is fuzzed in make test)
def test_a_pairs_export_whose_model_reads_its_matches_answers_as_the_model_in_memory(tmp_path):
    """``--memory input``: the export retrieves each input's match inside the SavedModel and
    the model reads both; its outputs equal the in-process translations read the same way."""
    tokenizer = _tokenizer()
    match_input = MatchInput(tokenizer)
    keras.utils.set_random_seed(0)
    model = attention_seq2seq(match_input.vocab_size, tokenizer.target_size, 8, 16)
    memory = TranslationMemory(SOURCES, TARGETS)
    export_dir = str(tmp_path / "reads")
    export_text_pairs(model, export_dir, tokenizer, 6, greedy_decode, memory, 0.99, match_input)
    inputs = ["one two", "four four four", "one two three", "three"]
    out = serving_fuzz.signature(export_dir)[0](inputs=tf.constant(inputs))
    expected, _, _ = translate(
        "attention_seq2seq",
        model,
        tokenizer,
        inputs,
        6,
        lambda batch: match_input.encode(memory, batch, 6),
    )
    from_memory = out["from_memory"].numpy().tolist()
    assert from_memory == [True, False, False, False]
    outputs = [o.decode() for o in out["output"].numpy()]
    assert outputs[0] == TARGETS[0] and outputs[1:] == expected[1:]
    assert out["attention"].shape[-1] == match_input.length(6)  # the source and its match
    shapes = _pair_shapes(
        attention=(tf.float32, (6, 13)), memory_score=(tf.float32, ()), from_memory=(tf.bool, ())
    )
    serving_fuzz.check_answers_everything(export_dir, shapes, per_category=20)

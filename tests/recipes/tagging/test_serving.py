"""The tagging family's export: raw strings in, a tag per token out, as the model in memory
tags them; ``predict`` prints ``token/TAG`` pairs."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.conventions import UNK
from keras_adl.data.date_fields import date_field_tokens
from keras_adl.recipes.tagging import data
from keras_adl.recipes.tagging.serving import text_tokens
from keras_adl.recipes.tagging.tasks import RECIPES
from keras_adl.text.characters import character_ids
from keras_adl.training.rundir import RecipeError
from tests import serving_fuzz

TEXTS = [
    "Wed, 05/06/2002 to 17/06/2002",
    "du 3\u00a0mars\u202f1999 au 4 May 2001",  # French no-break spaces
    "Été — ÉTÉ 12.1.99",  # accented capitals, a dash
    "Москва 東京 2024-05-06",  # Cyrillic, CJK
]


def test_the_exported_tokenizer_splits_as_the_training_data_was_split():
    tokens = text_tokens(tf.constant(TEXTS + ["", " \t "])).numpy()
    for text, row in zip(TEXTS + ["", " \t "], tokens):
        assert [t.decode() for t in row if t] == date_field_tokens(text)


@pytest.mark.parametrize("model_name", ["bilstm", "bilstm_chars"])
def test_export_tags_raw_strings_as_the_model_in_memory(tmp_path, capsys, model_name):
    keras.utils.set_random_seed(0)
    task = RECIPES["date_fields"]
    options = {"labelled": 8, "unlabelled": "on", "views": "future"}
    characters = model_name == "bilstm_chars"
    tagging_data = data.date_field_data("date_fields", options, 8, 0, characters)
    model = task.build_model(model_name, tagging_data, jit_compile=False, units=8, hidden_units=8)
    run_dir, export_dir = tmp_path / "run", str(tmp_path / "export")
    run_dir.mkdir()
    data.write_vocabulary(tagging_data.vocabulary, tagging_data.tag_names, str(run_dir))
    record = {"task": "date_fields", "model": model_name}
    task.export(str(run_dir), record, model, export_dir)
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    served = serve(texts=tf.constant(TEXTS))
    tokens = [[t.decode() for t in row if t] for row in served["tokens"].numpy()]
    assert tokens == [date_field_tokens(text) for text in TEXTS]
    # The same tokens through the model in memory: word ids (unknown: <unk>) and characters.
    index = {w: i + 4 for i, w in enumerate(tagging_data.vocabulary)}
    width = max(len(row) for row in tokens)
    words = np.array(
        [[index.get(t, UNK) for t in row] + [0] * (width - len(row)) for row in tokens]
    )
    table = data.character_table(tagging_data.vocabulary) if characters else None
    inputs = data.model_inputs(words, table)
    if characters:  # served characters spell the token itself, an unknown one too
        inputs["characters"] = served_characters = np.asarray(
            character_ids(tf.constant(served["tokens"]), 12)
        )
        assert served_characters.shape == (len(TEXTS), width, 12)
    logits = np.asarray(model.predict(inputs, verbose=0)["date_fields"])
    expected = logits[..., 1:].argmax(-1) + 1
    tag_ids = served["tag_ids"].numpy()
    real = words > 0
    np.testing.assert_array_equal(tag_ids[real], expected[real])
    assert not tag_ids[~real].any()
    names = [[g.decode() for g in row if g] for row in served["tags"].numpy()]
    assert names == [
        [tagging_data.tag_names[i] for i in row[: len(t)]] for row, t in zip(tag_ids, tokens)
    ]

    with pytest.raises(RecipeError, match="1 of 3 input"):
        task.predict(export_dir, TEXTS[:2] + [" "], {"task": "date_fields"})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == TEXTS[0] + "\t" + " ".join(f"{t}/{g}" for t, g in zip(tokens[0], names[0]))
    assert lines[2] == " \t(no tokens)"
    if characters:  # the fuzz suite, on one of the two exports
        shapes = {
            "tokens": (tf.string, (None,)),
            "tags": (tf.string, (None,)),
            "tag_ids": (tf.int32, (None,)),
            "probabilities": (tf.float32, (None,)),
        }
        shapes.update({k: (tf.bool, ()) for k in ("empty", "truncated", "invalid_utf8")})
        serving_fuzz.check_answers_everything(export_dir, shapes, per_category=50)
        out = serve(texts=tf.constant(["", "9 " * 300, b"\xff05/06"]))
        assert out["empty"].numpy().tolist() == [True, False, False]
        assert out["truncated"].numpy().tolist() == [False, True, False]
        assert out["tokens"].shape[1] == 256 and out["invalid_utf8"].numpy()[2]

"""The pretraining family's serving: a fine-tuned classifier reads a text as it was trained to,
window by window, multiplying its windows' probabilities, in the export too; exports and
``--init`` read the vocabulary of runs written before it was named ``tokenizer.json``."""

import json

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.recipes.pretraining import data, spec
from keras_adl.recipes.pretraining.serving import make_text_classifier_serving_fn
from keras_adl.recipes.pretraining.tasks import RECIPES
from tests.recipes.pretraining.windows import (
    WINDOW_LABELS,
    WINDOW_TEXTS,
    log_softmax,
    window_tokenizer,
    windows_of,
)


def test_classifier_serving_multiplies_the_windows_probabilities():
    tokenizer, ids = window_tokenizer()
    table = np.random.default_rng(0).normal(0.0, 2.0, (tokenizer.size, 3)).astype("float32")
    variable = tf.Variable(table)

    def model(inputs, training):  # logits from each window's first piece
        assert not training
        return tf.gather(variable, inputs["token_ids"][:, 1])

    names = ["fr", "ru", "ja"]
    serve = make_text_classifier_serving_fn(model, "bert", tokenizer, 6, names, 3)
    outputs = serve(tf.constant(WINDOW_TEXTS))
    scores = np.zeros((4, 3))
    for i, pieces in windows_of(ids, 4, 3):
        scores[i] += log_softmax(table[pieces[0]])
    expected = np.exp(log_softmax(scores))
    np.testing.assert_allclose(outputs["probabilities"].numpy(), expected, rtol=1e-5, atol=1e-6)
    assert outputs["classes"].numpy().tolist() == expected.argmax(axis=1).tolist()
    assert [n.decode() for n in outputs["class_names"].numpy()] == [
        names[c] for c in expected.argmax(axis=1)
    ]
    assert outputs["windows"].numpy().tolist() == [3, 2, 3, 1]
    # One window: the model's own probabilities on each text's first window.
    first = make_text_classifier_serving_fn(model, "bert", tokenizer, 6, names, 1)
    probabilities = first(tf.constant(WINDOW_TEXTS))["probabilities"].numpy()
    np.testing.assert_allclose(
        probabilities, np.exp(log_softmax(table[[p[0] for p in ids]])), rtol=1e-5, atol=1e-6
    )
    # One confident window outweighs two mild ones (class 1: 0 + 2 x -3.05; class 0: -10 +
    # 2 x -0.05), where a majority vote or summed probabilities would choose class 0.
    starts = [ids[0][0], ids[0][4], ids[0][8]]
    assert len(set(starts)) == 3
    table[:] = 0.0
    table[starts[0], :2] = [0.0, 10.0]
    table[starts[1], :2] = table[starts[2], :2] = [3.0, 0.0]
    table[:, 2] = -30.0
    variable.assign(table)
    assert serve(tf.constant(WINDOW_TEXTS[:1]))["classes"].numpy().tolist() == [1]
    assert serve(tf.constant([], tf.string))["classes"].shape == (0,)


@pytest.mark.parametrize("model_name", ["bert", "gpt"])
def test_finetuned_classifier_serving_and_export_read_the_training_windows(tmp_path, model_name):
    tokenizer, ids = window_tokenizer()
    finetune = RECIPES["finetune"]
    sizes = dict(sequence_length=6, model_dim=16, num_heads=2, intermediate_dim=32, num_layers=1)
    model = finetune.build_model(
        model_name, tokenizer.size, num_classes=3, jit_compile=False, **sizes
    )
    serve = make_text_classifier_serving_fn(model, model_name, tokenizer, 6, "abc", 3)
    first = make_text_classifier_serving_fn(model, model_name, tokenizer, 6, "abc", 1)
    outputs = serve(tf.constant(WINDOW_TEXTS))
    # The classifier's logits on the training windows, multiplied text by text.
    windows = data.text_classes(
        tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 16, 6, False, model_name, max_windows=3
    )
    logits = model.predict(windows.map(lambda x, y: x), verbose=0)
    logits = logits["classes"] if isinstance(logits, dict) else logits
    scores = np.zeros((4, 3))
    np.add.at(scores, [i for i, _ in windows_of(ids, 4, 3)], log_softmax(logits))
    np.testing.assert_allclose(
        outputs["probabilities"].numpy(), np.exp(log_softmax(scores)), rtol=1e-4, atol=1e-5
    )
    if model_name == "gpt":
        return  # the export path is the same function; one SavedModel suffices
    # The export reads as many windows as the run trained on; a run from before windows, one.
    # The run is one of an earlier version, its vocabulary in vocab.json.
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "vocab.json").write_text(json.dumps(tokenizer.get_config()))
    record = {"task": "finetune", "model": "bert", "settings": {"sequence_length": 6}}
    record["class_names"] = list("abc")
    texts = tf.constant(WINDOW_TEXTS)
    for windows, expected in ((3, outputs), (None, first(texts))):
        export_dir = str(tmp_path / f"export{windows}")
        run_record = dict(record, windows=windows) if windows else record
        finetune.export(str(run_dir), run_record, model, export_dir)
        again = tf.saved_model.load(export_dir).signatures["serving_default"](texts=texts)
        np.testing.assert_allclose(
            again["probabilities"].numpy(),
            expected["probabilities"].numpy(),
            rtol=1e-5,
            atol=1e-6,
        )
        assert again["windows"].numpy().tolist() == expected["windows"].numpy().tolist()
        # The export holds the vocabulary under its new name.
        assert json.loads((tmp_path / f"export{windows}" / spec.TOKENIZER_FILE).read_text()) == (
            tokenizer.get_config()
        )
    assert first(texts)["windows"].numpy().tolist() == [1, 1, 1, 1]


def test_the_vocabulary_is_written_under_its_new_name_and_read_under_both(tmp_path):
    tokenizer, _ = window_tokenizer()
    data.save_tokenizer(tokenizer, str(tmp_path))
    assert [p.name for p in tmp_path.iterdir()] == [spec.TOKENIZER_FILE] == ["tokenizer.json"]
    assert data.load_tokenizer(str(tmp_path)).get_config() == tokenizer.get_config()
    (tmp_path / spec.TOKENIZER_FILE).rename(tmp_path / spec.OLD_TOKENIZER_FILE)
    assert spec.OLD_TOKENIZER_FILE == "vocab.json"
    assert data.load_tokenizer(str(tmp_path)).get_config() == tokenizer.get_config()
    (tmp_path / spec.OLD_TOKENIZER_FILE).unlink()
    with pytest.raises(FileNotFoundError, match="tokenizer.json"):
        data.load_tokenizer(str(tmp_path))

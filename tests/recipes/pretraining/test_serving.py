"""The pretraining family's serving: a fine-tuned classifier reads a text as it was trained to,
window by window, multiplying its windows' probabilities, in the export too; exports and
``--init`` read the vocabulary of runs written before it was named ``tokenizer.json``."""

import json

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.models import gpt_lm
from keras_adl.recipes.pretraining import data, spec
from keras_adl.recipes.pretraining.serving import (
    export,
    make_generation_endpoints,
    make_text_classifier_serving_fn,
)
from keras_adl.recipes.pretraining.tasks import RECIPES
from keras_adl.training.rundir import RecipeError
from tests import serving_fuzz
from tests.recipes.pretraining.windows import (
    WINDOW_LABELS,
    WINDOW_TEXTS,
    log_softmax,
    window_tokenizer,
    windows_of,
)

FLAGS = {k: (tf.bool, ()) for k in ("empty", "truncated", "invalid_utf8")}


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


@pytest.mark.parametrize(
    "model_name",
    [pytest.param("bert", marks=pytest.mark.slow), "gpt"],  # bert: 20 s, in make test-slow
)
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
    shapes = {
        "classes": (tf.int32, ()),
        "probabilities": (tf.float32, (3,)),
        "class_names": (tf.string, ()),
        "windows": (tf.int32, ()),
        **FLAGS,
    }
    serving_fuzz.check_answers_everything(str(tmp_path / "export3"), shapes, per_category=50)
    out = serve(tf.constant(["", "a " * 40]))
    assert out["classes"].numpy().tolist()[0] == -1 and out["truncated"].numpy().tolist() == [
        False,
        True,
    ]


def _gpt_export(tmp_path):
    tokenizer, _ = window_tokenizer()
    sizes = dict(sequence_length=12, model_dim=16, num_heads=2, intermediate_dim=32, num_layers=1)
    model = gpt_lm(tokenizer.size, dropout=0.0, **sizes)
    export_dir = str(tmp_path / "gpt")
    record = {"task": "pretrain_lm", "model": "gpt", "settings": {"sequence_length": 12}}
    export(model, export_dir, make_generation_endpoints(model, tokenizer, 12), tokenizer, record)
    return export_dir


def test_a_run_of_an_earlier_version_generates_normalised_text():
    # Its tokenizer normalises (NFKC, case folded): the whole text comes from the pieces.
    tokenizer = data.learn_tokenizer(WINDOW_TEXTS * 5, 60, surface=False)
    assert type(tokenizer).__name__ == "WordPieceTokenizer"
    model = gpt_lm(tokenizer.size, dropout=0.0, sequence_length=8, model_dim=8, num_heads=2,
                   intermediate_dim=16, num_layers=1)  # fmt: skip
    serve = make_generation_endpoints(model, tokenizer, 8)["serve"]
    text = serve(tf.constant(["ÉTÉ à"]))["texts"].numpy()[0].decode()
    assert text.startswith("été à")
    reloaded = data.wordpiece_from_config({"vocabulary": tokenizer.vocabulary})
    assert type(reloaded).__name__ == "WordPieceTokenizer"


def test_a_gpt_export_continues_a_prompt_alone_and_samples_with_a_seed(tmp_path, capsys):
    export_dir = _gpt_export(tmp_path)
    signatures = tf.saved_model.load(export_dir).signatures
    assert sorted(signatures) == ["sample", "serve", "serving_default"]
    prompts = tf.constant(["Привет мир", "Été"])
    greedy = signatures["serving_default"](prompts=prompts)
    assert greedy["tokens"].shape == (2, 12)
    settings = {
        "temperature": tf.constant(1.5),
        "top_k": tf.constant(0),
        "top_p": tf.constant(1.0),
        "max_new_tokens": tf.constant(0),
    }
    runs = [
        signatures["sample"](prompts=prompts, seed=tf.constant(seed), **settings)["tokens"].numpy()
        for seed in (3, 3, 4)
    ]
    np.testing.assert_array_equal(runs[0], runs[1])  # a seed reproduces its text
    assert not np.array_equal(runs[0], runs[2])
    zero = dict(settings, temperature=tf.constant(0.0), seed=tf.constant(0))
    np.testing.assert_array_equal(
        signatures["sample"](prompts=prompts, **zero)["tokens"].numpy(), greedy["tokens"].numpy()
    )
    two = signatures["sample"](prompts=prompts, **dict(zero, max_new_tokens=tf.constant(2)))
    tokenizer, _ = window_tokenizer()
    lengths = [len(p) for p in data.token_lists(tokenizer, ["Привет мир", "Été"])]
    assert lengths == [10, 3]
    for row, length in zip(two["tokens"].numpy(), lengths):
        assert row[: length + 2].all() and not row[length + 2 :].any()
    # Text kept as written: the prompt comes back byte for byte, characters the vocabulary
    # lacks (ß, the emoji, the capital S) included; then the continuation.
    for prompt in ("Straße 😀 is", "à  Paris\u00a0:", "東京"):
        out = signatures["serving_default"](prompts=tf.constant([prompt]))
        assert not out["truncated"].numpy()[0], prompt  # within the 11 pieces a prompt may take
        assert out["texts"].numpy()[0].startswith(prompt.encode()), (prompt, out["texts"])
    shapes = {"texts": (tf.string, ()), "tokens": (tf.int32, (12,)), **FLAGS}
    serving_fuzz.check_answers_everything(export_dir, shapes, per_category=20, large_batch=1000)
    # predict: greedy by default, an empty prompt said so and the others continued.
    with pytest.raises(RecipeError, match="1 of 2 input.s. got no answer .input 2: empty prompt"):
        RECIPES["pretrain_lm"].predict(export_dir, ["Привет мир", " "], {})
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert rows[0][1] == greedy["texts"].numpy()[0].decode()
    assert rows[1] == [" ", "(empty prompt: nothing to continue)"]
    sampling = {"temperature": 1.5, "top_k": 0, "top_p": 1.0, "seed": 3, "max_new_tokens": 0}
    RECIPES["pretrain_lm"].predict(export_dir, ["Привет мир"], {"sampling": sampling})
    sampled = capsys.readouterr().out.splitlines()[0].split("\t")[1]
    assert (
        sampled
        == signatures["sample"](prompts=prompts[:1], seed=tf.constant(3), **settings)["texts"]
        .numpy()[0]
        .decode()
    )


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

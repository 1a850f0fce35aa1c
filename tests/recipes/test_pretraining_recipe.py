"""The pretraining recipe's data: the default corpus keeps the held-out topic fortunes out and
weights the fortunes, and masked-LM examples are whole documents or sentence pairs."""

import numpy as np
import pytest

from keras_adl.recipes import pretraining
from keras_adl.recipes.pretraining import RECIPE, default_corpus


def test_default_corpus_excludes_held_out_fortunes_and_weights_the_rest(monkeypatch):
    import keras_adl.data.fortunes as fortunes
    import keras_adl.data.text_corpora as text_corpora
    from keras_adl.recipes.documents import data as documents_data

    definitions = [f"definition {i}." for i in range(400)]
    train_topics = [f"topic fortune {i}." for i in range(40)]
    test_topics = ["a held-out fortune."]
    seen = {}

    def other_fortunes(exclude=()):
        seen["exclude"] = list(exclude)
        return [f"other fortune {i}." for i in range(10)]

    monkeypatch.setattr(text_corpora, "load_corpus", lambda path=None: definitions)
    monkeypatch.setattr(fortunes, "read_other_fortunes", other_fortunes)
    monkeypatch.setattr(
        documents_data,
        "fortune_topics",
        lambda *a: (train_topics, np.zeros(40), test_topics, np.zeros(1), ["x", "y"], None),
    )
    train, held_out = default_corpus()
    assert seen["exclude"] == test_topics  # the other files are read without them
    assert not set(test_topics) & (set(train) | set(held_out))
    fortune_count = sum(not t.startswith("definition") for t in train)
    assert abs(fortune_count / len(train) - pretraining.FORTUNE_SHARE) < 0.05
    assert not set(train) & set(held_out)  # repeats stay on the training side
    assert len(held_out) == int(400 * pretraining.HELD_OUT_FRACTION) + int(
        50 * pretraining.HELD_OUT_FRACTION
    )
    assert len(default_corpus(samples=30)[0]) == 30


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_masked_lm_examples_are_documents_or_sentence_pairs():
    from keras_adl.data.pretraining import pretraining_vocabulary
    from keras_adl.text.wordpiece import WordPieceTokenizer

    words = "the cat sat on mat Été ça Привет 東京".split()
    tokenizer = WordPieceTokenizer(pretraining_vocabulary([w.lower() for w in words]))
    documents = ["The cat sat. Été ça!", "Привет mat.", "東京 the cat. On mat."]
    assert RECIPE.mlm_examples(documents, "documents") == 3
    assert RECIPE.mlm_examples(documents, "pairs") == 2
    inputs, targets, weights = next(iter(RECIPE.mlm_dataset(tokenizer, documents, 4, 12, 0)))
    assert set(targets) == {"mlm"} and inputs["token_ids"].shape == (4, 12)
    assert (inputs["segment_ids"].numpy() == 0).all()  # one segment per example
    inputs, targets, weights = next(
        iter(RECIPE.mlm_dataset(tokenizer, documents, 4, 12, 0, segments="pairs"))
    )
    assert set(targets) == {"mlm", "nsp"} and (inputs["segment_ids"].numpy() == 1).any()
    with pytest.raises(ValueError, match="`segments` must be 'documents' or 'pairs'"):
        RECIPE.mlm_dataset(tokenizer, documents, 4, 12, 0, segments="sentences")
    model = RECIPE.build_model("pretrain_mlm", "bert", tokenizer.size, jit_compile=False)
    assert set(model.output) == {"mlm"}
    batch = RECIPE.mlm_dataset(tokenizer, documents, 4, 64, 0).take(1)
    assert set(model.evaluate(batch, verbose=0, return_dict=True)) == {"loss", "mlm_accuracy"}
    model = RECIPE.build_model("pretrain_mlm", "bert", tokenizer.size, segments="pairs")
    assert set(model.output) == {"mlm", "nsp"}


WINDOW_TEXTS = ["Été à Paris\u00a0: très chaud", "Привет мир", "東京大学の学生です 東京 大学", "a"]
WINDOW_LABELS = [2, 1, 0, 1]


def _windows_of(ids, width, max_windows):
    """The reference windows: ``(owner, pieces)`` of each text, full windows from the start."""
    return [
        (i, pieces[start : start + width])
        for i, pieces in enumerate(ids)
        for start in range(0, max(len(pieces) - width, 0) + 1, width)[:max_windows]
    ]


def _window_tokenizer():
    tokenizer = RECIPE.learn_tokenizer(WINDOW_TEXTS * 5, 60)
    ids = RECIPE.token_lists(tokenizer, WINDOW_TEXTS)
    # 19 pieces: four full windows of 4, capped at 3; 9: two, the last piece left out; 13:
    # three; 1: shorter than a window, its own window.
    assert [len(p) for p in ids] == [19, 9, 13, 1]
    return tokenizer, ids


def test_finetuning_trains_on_every_window_of_a_text_with_its_label():
    from keras_adl.data.pretraining import CLS, PAD, SEP

    tokenizer, ids = _window_tokenizer()
    expected = _windows_of(ids, 4, 3)
    assert [i for i, _ in expected] == [0, 0, 0, 1, 1, 2, 2, 2, 3]
    data = RECIPE.text_classes(tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 4, 6, False, max_windows=3)
    batches = list(data)
    rows = np.concatenate([x["token_ids"].numpy() for x, _ in batches]).tolist()
    labels = np.concatenate([y.numpy() for _, y in batches]).tolist()
    assert rows == [([CLS, *w, SEP] + [PAD] * 6)[:6] for _, w in expected]
    assert labels == [WINDOW_LABELS[i] for i, _ in expected]
    assert all(not x["segment_ids"].numpy().any() for x, _ in batches)
    # Shuffled for training: the same windows, the last partial batch dropped, and the
    # cardinality is the steps of an epoch.
    shuffled = RECIPE.text_classes(
        tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 4, 6, True, max_windows=3
    )
    assert int(shuffled.cardinality()) == 9 // 4 == len(list(shuffled))
    seen = [tuple(r) for x, _ in shuffled for r in x["token_ids"].numpy().tolist()]
    assert len(seen) == 8 and set(seen) <= {tuple(r) for r in rows}
    # One window: each text's first 4 pieces, as before windows.
    first = RECIPE.text_classes(tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 8, 6, False)
    ((x, y),) = list(first)
    assert x["token_ids"].numpy().tolist() == [([CLS, *p[:4], SEP] + [PAD] * 6)[:6] for p in ids]
    # GPT reads the same windows between separators, with next-token targets.
    gpt = RECIPE.text_classes(
        tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 16, 6, False, "gpt", True, max_windows=3
    )
    ((token_ids, targets),) = list(gpt)
    assert token_ids.numpy().tolist() == [([SEP, *w, SEP] + [PAD] * 6)[:6] for _, w in expected]
    assert targets["classes"].numpy().tolist() == labels
    assert targets["lm"].numpy().tolist() == [([*w, SEP] + [PAD] * 6)[:6] for _, w in expected]


def _log_softmax(x):
    x = np.asarray(x, "float64")
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


def test_classifier_serving_multiplies_the_windows_probabilities():
    import tensorflow as tf

    from keras_adl.recipes.pretraining import make_text_classifier_serving_fn

    tokenizer, ids = _window_tokenizer()
    table = np.random.default_rng(0).normal(0.0, 2.0, (tokenizer.size, 3)).astype("float32")
    variable = tf.Variable(table)

    def model(inputs, training):  # logits from each window's first piece
        assert not training
        return tf.gather(variable, inputs["token_ids"][:, 1])

    names = ["fr", "ru", "ja"]
    serve = make_text_classifier_serving_fn(model, "bert", tokenizer, 6, names, 3)
    outputs = serve(tf.constant(WINDOW_TEXTS))
    scores = np.zeros((4, 3))
    for i, pieces in _windows_of(ids, 4, 3):
        scores[i] += _log_softmax(table[pieces[0]])
    expected = np.exp(_log_softmax(scores))
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
        probabilities, np.exp(_log_softmax(table[[p[0] for p in ids]])), rtol=1e-5, atol=1e-6
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
    import tensorflow as tf

    from keras_adl.recipes.pretraining import make_text_classifier_serving_fn

    tokenizer, ids = _window_tokenizer()
    sizes = dict(sequence_length=6, model_dim=16, num_heads=2, intermediate_dim=32, num_layers=1)
    model = RECIPE.build_model(
        "finetune", model_name, tokenizer.size, num_classes=3, jit_compile=False, **sizes
    )
    serve = make_text_classifier_serving_fn(model, model_name, tokenizer, 6, "abc", 3)
    first = make_text_classifier_serving_fn(model, model_name, tokenizer, 6, "abc", 1)
    outputs = serve(tf.constant(WINDOW_TEXTS))
    # The classifier's logits on the training windows, multiplied text by text.
    data = RECIPE.text_classes(
        tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 16, 6, False, model_name, max_windows=3
    )
    logits = model.predict(data.map(lambda x, y: x), verbose=0)
    logits = logits["classes"] if isinstance(logits, dict) else logits
    scores = np.zeros((4, 3))
    np.add.at(scores, [i for i, _ in _windows_of(ids, 4, 3)], _log_softmax(logits))
    np.testing.assert_allclose(
        outputs["probabilities"].numpy(), np.exp(_log_softmax(scores)), rtol=1e-4, atol=1e-5
    )
    if model_name == "gpt":
        return  # the export path is the same function; one SavedModel suffices
    # The export reads as many windows as the run trained on; a run from before windows, one.
    import json

    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "vocab.json").write_text(json.dumps(tokenizer.get_config()))
    record = {"task": "finetune", "model": "bert", "settings": {"sequence_length": 6}}
    record["class_names"] = list("abc")
    texts = tf.constant(WINDOW_TEXTS)
    for windows, expected in ((3, outputs), (None, first(texts))):
        export_dir = str(tmp_path / f"export{windows}")
        run_record = dict(record, windows=windows) if windows else record
        RECIPE.export(str(run_dir), run_record, model, export_dir)
        again = tf.saved_model.load(export_dir).signatures["serving_default"](texts=texts)
        np.testing.assert_allclose(
            again["probabilities"].numpy(),
            expected["probabilities"].numpy(),
            rtol=1e-5,
            atol=1e-6,
        )
        assert again["windows"].numpy().tolist() == expected["windows"].numpy().tolist()
    assert first(texts)["windows"].numpy().tolist() == [1, 1, 1, 1]


def test_classifier_data_and_serving_refuse_bad_arguments():
    from keras_adl.recipes.pretraining import make_text_classifier_serving_fn

    tokenizer, _ = _window_tokenizer()
    with pytest.raises(
        ValueError, match="`model_name` must be one of 'bert', 'gpt'; received 'GPT'"
    ):
        make_text_classifier_serving_fn(None, "GPT", tokenizer, 6, "abc")
    with pytest.raises(ValueError, match="`sequence_length` must be at least 3; received 2"):
        RECIPE.classifier_windows("bert", tokenizer, WINDOW_TEXTS, 2)
    with pytest.raises(TypeError, match="`sequence_length` must be an int; received float"):
        RECIPE.classifier_windows("gpt", tokenizer, WINDOW_TEXTS, 6.0)
    with pytest.raises(ValueError, match="one label per text: 4 texts; received 3 labels"):
        RECIPE.text_classes(tokenizer, WINDOW_TEXTS, [0, 1, 2], 4, 6, False)
    with pytest.raises(ValueError, match="`texts` is empty"):
        RECIPE.classifier_accuracy(None, [], [])

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.data.needle import needle_documents
from keras_adl.models import han_attention, han_classifier
from keras_adl.recipes._compile import compile_for_training
from keras_adl.recipes.documents.evaluate import sentence_attention_hit_rate
from keras_adl.recipes.documents.hypermodels import HierarchicalAttentionHyperModel
from keras_adl.recipes.documents.serving import export_han, make_han_serving_fn
from keras_adl.text import DocumentTokenizer
from tests.harness import np_
from tests.mirrored import assert_mirrored_fit_matches_one_device

LOSS = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
DOCUMENTS = [
    "The striker scored twice. The crowd roared!\n\nA late goal sealed it.",
    "Parliament passed the bill. The vote was close.",
    "An empty sentence follows... !!! Then one more.",
    "",  # no sentence at all: only padding
    "Ünïcode wörds, naïve café — ok?",
]


def _needle_run(num_documents, epochs, sizes, seed):
    keras.utils.set_random_seed(seed)
    docs, labels, _ = needle_documents(num_documents, seed=seed)
    test_docs, test_labels, keys = needle_documents(500, seed=seed + 100)
    tokenizer = DocumentTokenizer.build(docs, 10, 10)  # the task's most sentences and words
    model = han_classifier(tokenizer.vocabulary_size, 4, 10, 10, **sizes)
    compile_for_training(model, LOSS, 2e-3)
    model.fit(
        tokenizer.dataset(docs, labels, 32, seed=seed), epochs=epochs, shuffle=False, verbose=0
    )
    outputs = han_attention(model).predict(tokenizer.encode(tf.constant(test_docs)), verbose=0)
    accuracy = float(np.mean(outputs["probabilities"].argmax(-1) == test_labels))
    return accuracy, sentence_attention_hit_rate(outputs["sentence_attention"], keys)


@pytest.mark.slow  # a learning test, ~27 s (make test-slow)
def test_a_small_han_learns_the_needle_task():
    # The task's defaults (4–10 sentences of 4–10 words), half the CLI's sizes, 2000
    # documents × 4 epochs = 250 steps: the issue's figures already (about 10 s on 2 cores).
    accuracy, hit_rate = _needle_run(
        2000, 4, dict(embedding_dim=32, units=32, encoder_units=16, dropout=0.1), seed=0
    )
    assert accuracy >= 0.95 and hit_rate >= 0.7, (accuracy, hit_rate)


@pytest.mark.slow  # ~27 s; make test trains the smaller HAN above
def test_needle_reaches_the_issue_figures_on_the_default_task():
    # The task's defaults (4–10 sentences of 4–10 words), the CLI's sizes, 4000 documents ×
    # 4 epochs = 500 steps (about 20 s on 2 cores).
    accuracy, hit_rate = _needle_run(
        4000, 4, dict(embedding_dim=64, units=64, encoder_units=32, dropout=0.1), seed=0
    )
    assert accuracy >= 0.95 and hit_rate >= 0.7, (accuracy, hit_rate)


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_needle_figures_hold_for_other_seeds_and_the_lstm_encoder(seed):
    accuracy, hit_rate = _needle_run(
        4000,
        4,
        dict(embedding_dim=64, units=64, encoder_units=32, dropout=0.1, encoder="lstm"),
        seed=seed,
    )
    assert accuracy >= 0.95 and hit_rate >= 0.7, (accuracy, hit_rate)


def _tokenizer(max_sentences=4, max_words=6):
    vocabulary = DocumentTokenizer.build(DOCUMENTS).vocabulary
    return DocumentTokenizer(vocabulary, max_sentences, max_words)


def test_raw_text_padding_changes_no_logit_and_padding_gets_zero_attention():
    small, large = _tokenizer(4, 6), _tokenizer(9, 14)
    model = han_classifier(small.vocabulary_size, 3, embedding_dim=8, units=8, encoder_units=4)
    attention = han_attention(model)
    texts = tf.constant(DOCUMENTS)
    a, b = attention(small.encode(texts)), attention(large.encode(texts))
    ids = np_(large.encode(texts))
    # Documents that fit in the small shape: identical logits with more padding.
    fits = [
        i
        for i, d in enumerate(DOCUMENTS)
        if np.array_equal(np_(large.encode(tf.constant([d])))[0, :4, :6].sum(), ids[i].sum())
    ]
    assert len(fits) >= 3
    np.testing.assert_allclose(np_(b["logits"])[fits], np_(a["logits"])[fits], rtol=1e-5, atol=1e-6)
    words, sentences = np_(b["word_attention"]), np_(b["sentence_attention"])
    assert np.all(words[ids == 0] == 0.0) and np.all(sentences[~(ids != 0).any(-1)] == 0.0)
    assert np.isfinite(np_(b["logits"])).all()
    # The empty document is all padding: zero attention and the bias-only logits.
    assert np.all(sentences[3] == 0.0)
    np.testing.assert_allclose(np_(b["logits"])[3], np_(model.get_layer("logits").bias), atol=1e-6)


def test_keras_file_round_trip_keeps_the_attention_model(tmp_path):
    tokenizer = _tokenizer()
    model = han_classifier(
        tokenizer.vocabulary_size,
        3,
        4,
        6,
        embedding_dim=8,
        units=8,
        encoder_units=4,
        encoder="lstm",
        dropout=0.2,
    )
    path = str(tmp_path / "han.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path)
    ids = tokenizer.encode(tf.constant(DOCUMENTS))
    for key, value in han_attention(model)(ids).items():
        np.testing.assert_allclose(np_(han_attention(reloaded)(ids)[key]), np_(value), atol=1e-6)
    with pytest.raises(ValueError, match="must come from han_classifier"):
        han_attention(keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]))


RELOAD = r"""
import json, sys
sys.modules["keras_adl"] = None  # keras_adl must not be needed to serve
import tensorflow as tf
import tensorflow_text  # registers the tokenizer's ops
loaded = tf.saved_model.load(sys.argv[1])
out = loaded.signatures["serving_default"](documents=tf.constant(json.loads(sys.argv[2])))
print(json.dumps({k: v.numpy().tolist() if v.dtype != tf.string
                  else [[[w.decode() for w in s] for s in d] if v.shape.rank == 3 else d.decode()
                        for d in v.numpy()]
                  for k, v in out.items()}))
"""


@pytest.mark.slow  # a fresh process, ~18 s; make test keeps test_export's fresh-process check
def test_exported_saved_model_classifies_raw_strings_in_a_fresh_process(tmp_path):
    tokenizer = _tokenizer()
    model = han_classifier(
        tokenizer.vocabulary_size, 3, 4, 6, embedding_dim=8, units=8, encoder_units=4
    )
    names = ["sports", "politics", "other"]
    expected = han_attention(model)(tokenizer.encode(tf.constant(DOCUMENTS)))
    # The empty document (index 3) is answered class -1, no name, zero probabilities.
    empty = np.array([d == "" for d in DOCUMENTS])
    expected = {k: np.where(empty.reshape(-1, *[1] * (np_(v).ndim - 1)), 0.0, np_(v))
                for k, v in expected.items()}  # fmt: skip
    serve = make_han_serving_fn(model, tokenizer, names)
    in_memory = serve(tf.constant(DOCUMENTS))
    np.testing.assert_allclose(
        np_(in_memory["probabilities"]), expected["probabilities"], atol=1e-6
    )
    export_dir = str(tmp_path / "export")
    export_han(model, export_dir, tokenizer, class_names=names)
    result = subprocess.run(
        [sys.executable, "-c", RELOAD, export_dir, json.dumps(DOCUMENTS)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    served = json.loads(result.stdout.strip().splitlines()[-1])
    np.testing.assert_allclose(served["probabilities"], expected["probabilities"], atol=1e-6)
    np.testing.assert_allclose(served["word_attention"], expected["word_attention"], atol=1e-6)
    np.testing.assert_allclose(
        served["sentence_attention"], expected["sentence_attention"], atol=1e-6
    )
    classes = np.where(empty, -1, expected["probabilities"].argmax(-1))
    assert served["classes"] == classes.tolist()
    assert served["class_names"] == [names[c] if c >= 0 else "" for c in classes]
    assert served["tokens"][0][0][:3] == ["the", "striker", "scored"]
    assert served["tokens"][3] == [[""] * 6] * 4


@pytest.mark.slow  # ~15 s; MirroredStrategy fit is tested in tests/training too
def test_mirrored_fit_matches_one_device():
    docs, labels, _ = needle_documents(128, num_sentences=(2, 4), sentence_length=(2, 5))
    tokenizer = DocumentTokenizer.build(docs, 4, 5)

    def build():
        model = han_classifier(
            tokenizer.vocabulary_size, 4, 4, 5, embedding_dim=8, units=8, encoder_units=4
        )
        return compile_for_training(model, LOSS, 1e-2, jit_compile=False)

    data = tokenizer.dataset(docs, labels, 32, shuffle=False)
    assert_mirrored_fit_matches_one_device(
        build, lambda m: m.fit(data, epochs=1, shuffle=False, verbose=0), weights_rtol=1e-3
    )


def test_hypermodel_builds_a_compiled_han_with_its_search_space():
    import keras_tuner

    tokenizer = _tokenizer()
    hp = keras_tuner.HyperParameters()
    hp.Fixed("encoder_units", 16)
    model = HierarchicalAttentionHyperModel(
        tokenizer.vocabulary_size, 3, 4, 6, encoder="lstm"
    ).build(hp)
    assert {"embedding_dim", "units", "encoder_units", "dropout", "learning_rate"} == set(hp.values)
    layer = model.get_layer("hierarchical_attention")
    assert (layer.word_encoder, layer.encoder_units) == ("lstm", 16)
    assert model.optimizer is not None and model.input.shape[1:] == (4, 6)
    logits = model(tokenizer.encode(tf.constant(DOCUMENTS)))  # fit: tests/models above
    assert logits.shape == (5, 3) and np.isfinite(np_(logits)).all()


def test_bad_arguments():
    with pytest.raises(ValueError, match="`num_classes` must be a positive integer"):
        han_classifier(10, 0)
    with pytest.raises(ValueError, match="`dropout` must be a float in"):
        han_classifier(10, 2, dropout=1.5)
    with pytest.raises(ValueError, match="`encoder` must be one of"):
        han_classifier(10, 2, encoder=keras.layers.GRU(4, return_sequences=True))


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_export_refuses_a_tokenizer_or_class_names_that_do_not_fit():
    tokenizer = _tokenizer()
    model = han_classifier(
        tokenizer.vocabulary_size, 3, 4, 6, embedding_dim=8, units=8, encoder_units=4
    )
    with pytest.raises(
        ValueError,
        match=r"reads \[S, W\] = \[4, 6\] but `tokenizer` pads "
        r"documents to \[9, 14\]",
    ):
        make_han_serving_fn(model, _tokenizer(9, 14))
    small = han_classifier(5, 3, 4, 6, embedding_dim=8, units=8, encoder_units=4)
    with pytest.raises(
        ValueError,
        match=f"`tokenizer` has {tokenizer.vocabulary_size} ids but the model's embedding holds 5",
    ):
        make_han_serving_fn(small, tokenizer)
    with pytest.raises(
        ValueError, match="`class_names` must name the model's 3 classes; received 2 names"
    ):
        make_han_serving_fn(model, tokenizer, ["a", "b"])

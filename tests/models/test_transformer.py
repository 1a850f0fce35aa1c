import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.conventions import END, START
from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB, date_arrays
from keras_adl.models import transformer_classifier, transformer_greedy_decode, transformer_seq2seq
from tests.harness import np_

MAX_LENGTH = 11


def _compile(model, lr=1e-3, jit_compile=True):
    model.compile(
        optimizer=keras.optimizers.Adam(lr),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    return model


def _small(model_dim=16, intermediate_dim=32, num_layers=2):
    return transformer_seq2seq(
        len(SOURCE_VOCAB),
        len(TARGET_VOCAB),
        model_dim=model_dim,
        num_heads=2,
        intermediate_dim=intermediate_dim,
        num_layers=num_layers,
    )


def _feed(data):
    return {"source": data["source"], "decoder_input": data["decoder_input"]}


def test_transformer_seq2seq_learns_dates_in_a_few_hundred_steps():
    # The fast suite's learning test of the builder (~8 s): one layer of width 32, 6,000 seeded
    # dates, 3 epochs (282 steps) without XLA. Seeds 0-3 reached 0.74-0.79 held-out exact match
    # and 0.974-0.980 teacher-forced token accuracy (the longer test below reaches 0.95).
    keras.utils.set_random_seed(0)
    train, test = date_arrays(6000, seed=0), date_arrays(200, seed=1)
    model = _compile(_small(32, 64, num_layers=1), lr=5e-3, jit_compile=False)
    history = model.fit(_feed(train), train["target"], batch_size=64, epochs=3, verbose=0)
    assert history.history["loss"][-1] < 0.2 * history.history["loss"][0]
    figures = model.evaluate(_feed(test), test["target"], verbose=0, return_dict=True)
    assert figures["accuracy"] >= 0.95
    tokens, _, _ = transformer_greedy_decode(model, test["source"], MAX_LENGTH)
    predictions = TARGET_VOCAB.decode(np_(tokens))
    assert np.mean([p == t for p, t in zip(predictions, test["target_text"])]) >= 0.6


@pytest.mark.slow  # ~70 s; the fast learning test of the builder is above
def test_transformer_seq2seq_learns_dates():
    # 1,252 seeded steps; 6 epochs reached 0.999 here (benchmarks/RESULTS.md). After 3 epochs
    # the figure sat on the threshold (0.934–0.974 as XLA's fusion changed the rounding); 4 give
    # 0.996.
    keras.utils.set_random_seed(0)
    train, test = date_arrays(20000, seed=0), date_arrays(500, seed=1)
    model = _compile(transformer_seq2seq(len(SOURCE_VOCAB), len(TARGET_VOCAB)))
    model.fit(_feed(train), train["target"], batch_size=64, epochs=4, verbose=0)
    tokens, _, _ = transformer_greedy_decode(model, test["source"], MAX_LENGTH)
    predictions = TARGET_VOCAB.decode(np_(tokens))
    assert np.mean([p == t for p, t in zip(predictions, test["target_text"])]) >= 0.95


def test_cached_greedy_decode_agrees_with_teacher_forced_model():
    model = _small()
    data = date_arrays(16, seed=3)
    tokens, attention, score = transformer_greedy_decode(model, data["source"], MAX_LENGTH)
    tokens = np_(tokens)
    decoder_input = np.concatenate([np.full((16, 1), START), tokens[:, :-1]], 1)
    logits = np_(model({"source": data["source"], "decoder_input": decoder_input}))
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    for row in range(16):
        length = int(np.argmax(tokens[row] == END)) + 1 if END in tokens[row] else MAX_LENGTH
        np.testing.assert_array_equal(logits[row, :length].argmax(-1), tokens[row, :length])
        expected = log_probs[row, np.arange(length), tokens[row, :length]].sum()
        assert float(np_(score)[row]) == pytest.approx(expected, abs=1e-3)
    attention = np_(attention)
    assert np.all(attention[np.broadcast_to((data["source"] == 0)[:, None], attention.shape)] == 0)


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_decoding_compiles_and_round_trips(tmp_path):
    model = _small()
    data = date_arrays(8, seed=4)

    @tf.function(jit_compile=True, input_signature=[tf.TensorSpec((None, None), tf.int32)])
    def decode(source):
        return transformer_greedy_decode(model, source, MAX_LENGTH)[0]

    expected = np_(transformer_greedy_decode(model, data["source"], MAX_LENGTH)[0])
    np.testing.assert_array_equal(np_(decode(tf.constant(data["source"]))), expected)
    path = os.path.join(tmp_path, "model.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path)
    np.testing.assert_array_equal(
        np_(transformer_greedy_decode(reloaded, data["source"], MAX_LENGTH)[0]), expected
    )


def test_transformer_classifier_padding_and_fit():
    # Without XLA (the encoder block's harness fits it with XLA).
    model = _compile(
        transformer_classifier(30, 3, model_dim=16, num_heads=2, intermediate_dim=32),
        jit_compile=False,
    )
    a = np.array([[4, 5, 6, 0], [7, 8, 0, 0]])
    b = np.array([[4, 5, 6, 0, 0, 0], [7, 8, 0, 0, 0, 0]])
    np.testing.assert_allclose(np_(model(a)), np_(model(b)), atol=1e-5)
    history = model.fit(a, np.array([0, 2]), epochs=2, verbose=0)
    assert history.history["loss"][1] < history.history["loss"][0]


def test_transformer_classifier_keras_round_trip(tmp_path):
    model = transformer_classifier(30, 3, model_dim=16, num_heads=2, intermediate_dim=32)
    tokens = np.array([[4, 5, 6, 0], [7, 8, 0, 0]])
    path = os.path.join(tmp_path, "classifier.keras")
    model.save(path)
    np.testing.assert_allclose(
        np_(keras.saving.load_model(path)(tokens)), np_(model(tokens)), atol=1e-6
    )


def test_bad_arguments():
    with pytest.raises(
        ValueError, match="transformer_seq2seq: `num_layers` must be a positive integer"
    ):
        transformer_seq2seq(10, 10, num_layers=0)
    with pytest.raises(ValueError, match="not divisible by `num_heads`=3"):
        transformer_seq2seq(10, 10, model_dim=16, num_heads=3)
    with pytest.raises(ValueError, match="`dropout`"):
        transformer_classifier(10, 2, dropout=2.0)

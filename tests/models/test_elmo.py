"""ELMo's biLM (directions, padding, learning), its embedder, CoVe's encoder and the
downstream classifier."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.data.bilm import bilm_dataset, lm_targets, unigram_perplexity, window_ids
from keras_adl.data.skipgrams import WordVocabulary
from keras_adl.models import (
    attention_seq2seq,
    compile_bilm,
    cove_encoder,
    elmo_bilm,
    elmo_embedder,
    features_classifier,
)
from keras_adl.models.elmo import ReverseSequence
from keras_adl.text.characters import character_ids
from tests import debian_data
from tests.harness import np_

SMALL = dict(max_characters=8, filters=((1, 8), (2, 8)), projection_dim=8, units=12)
WORDS = np.array([["le", "chat", "noir", "dort", "", ""], ["été", "ёж", "日本", "x", "y", "z"]])


def _characters(words=WORDS, length=8):
    return character_ids(tf.constant(words), length).numpy()


def test_forward_lm_reads_only_the_past_and_backward_only_the_future():
    bilm = elmo_bilm(20, **SMALL)
    chars = _characters()
    out = {k: np_(v) for k, v in bilm(chars).items()}
    changed = chars.copy()
    changed[1, 3] = _characters([["zzz"]])[0, 0]  # word 3 of row 1
    after = {k: np_(v) for k, v in bilm(changed).items()}
    np.testing.assert_allclose(after["forward"][1, :3], out["forward"][1, :3], atol=1e-6)
    assert np.abs(after["forward"][1, 3:] - out["forward"][1, 3:]).max() > 1e-4
    np.testing.assert_allclose(after["backward"][1, 4:], out["backward"][1, 4:], atol=1e-6)
    assert np.abs(after["backward"][1, :4] - out["backward"][1, :4]).max() > 1e-4
    np.testing.assert_allclose(after["forward"][0], out["forward"][0], atol=1e-6)


def test_padding_words_change_nothing_at_the_real_words():
    bilm = elmo_bilm(20, **SMALL)
    chars = _characters()
    longer = np.concatenate([chars, np.zeros_like(chars[:, :3])], axis=1)
    short = {k: np_(v) for k, v in bilm(chars).items()}
    long = {k: np_(v) for k, v in bilm(longer).items()}
    for direction in ("forward", "backward"):
        np.testing.assert_allclose(long[direction][0, :4], short[direction][0, :4], atol=1e-5)
        np.testing.assert_allclose(long[direction][1, :6], short[direction][1, :6], atol=1e-5)


def test_embedder_layers_are_the_token_vectors_and_both_directions_states():
    bilm = elmo_bilm(20, **SMALL)
    chars = _characters()
    layers = np_(elmo_embedder(bilm)(chars))
    assert layers.shape == (2, 3, 6, 16)
    tokens = np_(bilm.get_layer("token_encoder")(chars))
    np.testing.assert_allclose(layers[:, 0], np.concatenate([tokens, tokens], -1), atol=1e-6)
    # The forward half of layer 2 feeds the softmax that scores the next word.
    softmax = bilm.get_layer("softmax")
    logits = np_(bilm(chars)["forward"])
    np.testing.assert_allclose(np_(softmax(layers[:, 2, :, :8])), logits, rtol=1e-4, atol=1e-4)
    backward = np_(bilm(chars)["backward"])
    np.testing.assert_allclose(np_(softmax(layers[:, 2, :, 8:]))[0, :4], backward[0, :4], atol=1e-4)


def test_reverse_sequence_keeps_padding_at_the_end_and_undoes_itself():
    x = np.arange(2 * 4 * 1, dtype="float32").reshape(2, 4, 1)
    mask = np.array([[True, True, True, False], [True, True, True, True]])
    layer = ReverseSequence()
    y = np_(layer(x, mask=mask))
    np.testing.assert_array_equal(y[0, :, 0], [2, 1, 0, 3])
    np.testing.assert_array_equal(y[1, :, 0], [7, 6, 5, 4])
    np.testing.assert_array_equal(np_(layer(y, mask=mask)), x)


def test_bilm_learns_a_planted_successor_rule():
    """Words follow a fixed cycle with a random start: both directions can be predicted
    exactly from one neighbour, so held-out perplexities fall far below the unigram's."""
    rng = np.random.default_rng(0)
    cycle = ["ab", "cd", "ef", "gh", "ij", "kl", "mn", "op", "qr", "st"]
    windows = [[cycle[(start + i) % 10] for i in range(8)] for start in rng.integers(0, 10, 400)]
    vocabulary = WordVocabulary.build(windows, min_count=1)
    keras.utils.set_random_seed(0)
    bilm = elmo_bilm(vocabulary.size, dropout=0.0, **SMALL)
    compile_bilm(bilm, learning_rate=1e-2, jit_compile=False)
    data = bilm_dataset(windows, vocabulary, 32, 8, 8, repeat=True)
    bilm.fit(data, steps_per_epoch=60, epochs=1, verbose=0, shuffle=False)
    held = bilm_dataset(windows[:64], vocabulary, 32, 8, 8, shuffle=False)
    figures = bilm.evaluate(held, verbose=0, return_dict=True)
    ids = window_ids(windows, vocabulary, 8)
    unigram = unigram_perplexity(ids, ids)
    assert unigram > 9
    assert figures["forward_perplexity"] < 1.5 and figures["backward_perplexity"] < 1.5


def test_bilm_targets_are_the_neighbours():
    ids = np.array([[5, 6, 7, 0]])
    forward, backward = lm_targets(ids)
    np.testing.assert_array_equal(forward, [[6, 7, 0, 0]])
    np.testing.assert_array_equal(backward, [[0, 5, 6, 0]])


def test_cove_encoder_is_the_translators_source_embedding_and_encoder_states():
    translator = attention_seq2seq(40, 15, embedding_dim=6, units=5, cell="lstm")
    source = np.array([[5, 6, 7, 0, 0], [8, 9, 0, 0, 0]], "int32")
    cove = cove_encoder(translator)
    out = np_(cove(source))
    assert out.shape == (2, 5, 16)
    vectors = np_(translator.get_layer("source_embedding")(source))
    np.testing.assert_allclose(out[..., :6], vectors, atol=1e-6)
    states = translator.get_layer("encoder")(vectors, mask=source != 0)[0]
    np.testing.assert_allclose(out[0, :3, 6:], np_(states)[0, :3], atol=1e-5)
    assert tuple(cove_encoder(translator, with_word_vectors=False).output.shape) == (None, None, 10)
    mask = cove.output._keras_mask
    assert mask is not None
    with pytest.raises(ValueError, match="`model` must come from `attention_seq2seq`"):
        cove_encoder(elmo_bilm(20, **SMALL))


def test_features_classifier_reads_masked_features():
    inputs = keras.Input((None,), dtype="int32")
    features = keras.layers.Embedding(10, 3, mask_zero=True)(inputs)
    model = features_classifier(inputs, features, 5, units=4)
    padded = np_(model(np.array([[1, 2, 0, 0, 0]])))
    assert padded.shape == (1, 5)
    np.testing.assert_allclose(padded, np_(model(np.array([[1, 2]]))), atol=1e-6)
    assert np.abs(padded - np_(model(np.array([[1, 3]])))).max() > 1e-6
    with pytest.raises(ValueError, match="`num_classes` must be a positive integer"):
        features_classifier(inputs, features, 0)


@debian_data.needs("wamerican")
def test_every_wamerican_word_outside_the_corpus_gets_a_finite_token_vector():
    with open(debian_data.WAMERICAN, encoding="utf-8") as f:
        words = sorted({line.strip() for line in f if line.strip()} - {"le", "chat", "noir"})
    bilm = elmo_bilm(20, **SMALL)
    encoder = bilm.get_layer("token_encoder")
    for start in range(0, len(words), 8192):
        ids = character_ids(tf.constant([words[start : start + 8192]]), 8)
        vectors = np_(encoder(ids))[0]
        assert np.isfinite(vectors).all() and (np.abs(vectors).sum(-1) > 0).all()
    assert len(words) > 100_000

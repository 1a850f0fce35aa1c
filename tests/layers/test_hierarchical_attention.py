import keras
import numpy as np
import pytest

from keras_adl.layers import HierarchicalAttention
from tests.harness import np_, run_layer_test

RNG = np.random.default_rng(0)


def _documents(batch=3, sentences=4, words=5, vocab=30):
    """Ids [B, S, W] with ragged sentences, a padding sentence and a short document."""
    ids = RNG.integers(1, vocab, (batch, sentences, words)).astype("int32")
    lengths = RNG.integers(1, words + 1, (batch, sentences))
    ids[np.arange(words)[None, None, :] >= lengths[..., None]] = 0
    ids[0, -1] = 0  # a padding sentence at the end
    ids[-1, 1:] = 0  # a one-sentence document
    return ids


IDS = _documents()
SMALL = {"units": 6, "encoder_units": 3, "vocab_size": 30, "embedding_dim": 5}


def test_harness_token_ids():
    run_layer_test(
        HierarchicalAttention,
        SMALL,
        IDS,
        [(3, 6), (3, 4, 5), (3, 4)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=19,
        # The word weights come before the sentence encoder and attention.
        no_gradient={1: ("/sentence_encoder/", "/sentence_attention/")},
    )


@pytest.mark.portable
def test_full_harness_word_vectors_custom_encoders_with_attention():
    # Word vectors with zero vectors as padding; a Dense word encoder (no mask argument) and a
    # unidirectional LSTM sentence encoder, given serialized (as get_config writes them: the
    # harness builds several layers from these arguments, and instances would be shared).
    vectors = RNG.normal(size=(2, 3, 4, 5)).astype("float32")
    vectors[0, 1, 2:] = 0.0  # padding words
    vectors[1, 2] = 0.0  # a padding sentence
    serialize = keras.saving.serialize_keras_object
    run_layer_test(
        HierarchicalAttention,
        {
            "units": 4,
            "word_encoder": serialize(keras.layers.Dense(7, activation="tanh")),
            "sentence_encoder": serialize(keras.layers.LSTM(5, return_sequences=True)),
        },
        vectors,
        [(2, 5), (2, 3, 4), (2, 3)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=11,
        full=True,
        # The word weights come before the sentence encoder and the sentence attention.
        no_gradient={1: ("/lstm/", "/sentence_attention/")},
    )


def test_lstm_unidirectional_encoders():
    layer = HierarchicalAttention(
        word_encoder="lstm", sentence_encoder="LSTM", **SMALL, bidirectional=False
    )
    assert layer(IDS).shape == (3, 3)
    assert isinstance(layer.word_rnn, keras.layers.LSTM) and layer.sentence_encoder == "lstm"


def _pad(ids, sentences, words):
    out = np.zeros((ids.shape[0], sentences, words), "int32")
    out[:, : ids.shape[1], : ids.shape[2]] = ids
    return out


def test_padding_more_sentences_and_longer_sentences_changes_nothing():
    layer = HierarchicalAttention(**SMALL)
    v, words, sentences = (np_(t) for t in layer(IDS, return_attention_scores=True))
    v2, words2, sentences2 = (np_(t) for t in layer(_pad(IDS, 7, 9), return_attention_scores=True))
    np.testing.assert_allclose(v2, v, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(words2[:, :4, :5], words, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(sentences2[:, :4], sentences, rtol=1e-5, atol=1e-7)


def test_attention_on_padding_is_exactly_zero_and_sums_to_one_elsewhere():
    layer = HierarchicalAttention(**SMALL)
    _, words, sentences = (np_(t) for t in layer(_pad(IDS, 6, 8), return_attention_scores=True))
    ids = _pad(IDS, 6, 8)
    real_words, real_sentences = ids != 0, (ids != 0).any(-1)
    assert np.all(words[~real_words] == 0.0)
    assert np.all(sentences[~real_sentences] == 0.0)
    np.testing.assert_allclose(words.sum(-1)[real_sentences], 1.0, rtol=1e-5)
    np.testing.assert_allclose(sentences.sum(-1), 1.0, rtol=1e-5)


def test_empty_sentence_is_skipped_and_all_padding_document_is_zero():
    layer = HierarchicalAttention(**SMALL)
    doc = IDS[1:2].copy()  # 4 sentences
    with_empty = np.zeros((1, 5, 5), "int32")
    with_empty[0, [0, 2, 3, 4]] = doc[0]  # an empty sentence at position 1
    v, _, sentences = layer(with_empty, return_attention_scores=True)
    assert np.isfinite(np_(v)).all() and float(sentences[0, 1]) == 0.0
    # The sentence encoder skips a masked step, so the empty sentence changes nothing.
    np.testing.assert_allclose(np_(v), np_(layer(doc)), rtol=1e-5, atol=1e-6)
    padding_only = np.zeros((2, 4, 5), "int32")
    v, words, sentences = layer(padding_only, return_attention_scores=True)
    assert np.all(np_(v) == 0.0) and np.all(np_(words) == 0.0) and np.all(np_(sentences) == 0.0)


def test_masks_of_word_vectors_come_from_zero_vectors_or_the_keras_mask():
    embedding = keras.layers.Embedding(30, 5, mask_zero=True)
    layer = HierarchicalAttention(units=6, encoder_units=3)
    ids = keras.Input((None, None), dtype="int32")
    model = keras.Model(ids, layer(embedding(ids), return_attention_scores=True))
    _, words, sentences = model(IDS)
    real = IDS != 0
    assert np.all(np_(words)[~real] == 0.0) and np.all(np_(sentences)[~real.any(-1)] == 0.0)
    # Without a Keras mask, all-zero word vectors are padding: same attention.
    vectors = np_(embedding(IDS)) * real[..., None]
    _, words_zero, sentences_zero = layer(vectors, return_attention_scores=True)
    np.testing.assert_allclose(np_(words_zero), np_(words), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(np_(sentences_zero), np_(sentences), rtol=1e-5, atol=1e-7)


def test_every_real_word_gets_a_gradient_and_padding_none():
    layer = HierarchicalAttention(units=6, encoder_units=3)
    vectors = keras.ops.convert_to_tensor(
        RNG.normal(size=(3, 4, 5, 5)).astype("float32") * (IDS != 0)[..., None]
    )
    import tensorflow as tf

    with tf.GradientTape() as tape:
        tape.watch(vectors)
        loss = keras.ops.sum(layer(vectors))
    grad = np_(tape.gradient(loss, vectors))
    assert np.isfinite(grad).all()
    assert np.all(np.abs(grad).sum(-1)[IDS != 0] > 0)


def test_bad_arguments():
    with pytest.raises(ValueError, match="`vocab_size` and `embedding_dim` go together"):
        HierarchicalAttention(vocab_size=10)
    with pytest.raises(ValueError, match="`word_encoder` must be one of"):
        HierarchicalAttention(word_encoder="rnn")
    with pytest.raises(TypeError, match="`sentence_encoder` must be 'gru', 'lstm' or a Keras"):
        HierarchicalAttention(sentence_encoder=3)
    with pytest.raises(ValueError, match="token ids `inputs` must have rank 3"):
        HierarchicalAttention(**SMALL)(np.zeros((2, 3, 4, 5), "int32"))
    with pytest.raises(TypeError, match="must be integer token ids"):
        HierarchicalAttention(**SMALL)(IDS.astype("float32"))
    with pytest.raises(ValueError, match="word vectors `inputs` must have rank 4"):
        HierarchicalAttention(units=4)(IDS)

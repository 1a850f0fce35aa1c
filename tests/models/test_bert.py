"""BERT: the encoder's masks, the pretrainer's tied masked-LM projection through saving, the
encoder recovered for fine-tuning, and masked-LM learning of a planted rule."""

import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.data.pretraining import FIRST_PIECE, masked_lm_batches, pack_inputs
from keras_adl.models.bert import (
    attention_weights,
    bert_classifier,
    bert_encoder,
    bert_pretrainer,
    compile_pretrainer,
    encoder_of,
)
from tests.harness import np_

SIZES = dict(sequence_length=12, model_dim=16, num_heads=2, intermediate_dim=32, num_layers=1)
INPUTS = {
    "token_ids": np.array([[1, 5, 6, 7, 2, 8, 9, 2, 0, 0, 0, 0]] * 2, "int32"),
    "segment_ids": np.array([[0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 0, 0]] * 2, "int32"),
}


def test_padding_changes_nothing_and_the_pretrainer_round_trips_with_the_tie(tmp_path):
    keras.utils.set_random_seed(0)
    encoder = bert_encoder(40, dropout=0.0, **SIZES)
    out = encoder(INPUTS)
    other = {k: v.copy() for k, v in INPUTS.items()}
    other["segment_ids"][1, 9] = 1  # a padded position's segment: ignored
    np.testing.assert_allclose(
        np_(encoder(other)["pooled_output"])[1], np_(out["pooled_output"])[0], rtol=1e-5
    )
    pretrainer = bert_pretrainer(encoder, max_predictions=3)
    batch = dict(INPUTS, mask_positions=np.array([[1, 3, 0], [2, 6, 0]], "int32"))
    outputs = pretrainer(batch)
    assert tuple(outputs["mlm"].shape) == (2, 3, 40) and tuple(outputs["nsp"].shape) == (2, 2)
    pretrainer.save(tmp_path / "bert.keras")
    restored = keras.saving.load_model(tmp_path / "bert.keras")
    np.testing.assert_allclose(np_(restored(batch)["mlm"]), np_(outputs["mlm"]), rtol=1e-5)
    embedding = restored.get_layer("embedding")
    assert len(embedding._inbound_nodes) == 2  # embedding and tied projection: one layer
    # The encoder recovered from the reloaded pretrainer is the same function.
    recovered = encoder_of(restored)
    np.testing.assert_allclose(
        np_(recovered(INPUTS)["pooled_output"]), np_(out["pooled_output"]), rtol=1e-5
    )
    classifier = bert_classifier(recovered, 3)
    assert tuple(classifier(INPUTS).shape) == (2, 3)
    assert all(w is not embedding.bias for w in classifier.trainable_weights)
    with pytest.raises(ValueError, match="must be a BERT pretrainer or classifier"):
        encoder_of(keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]))


def _counting_corpus(rows, seed, length=10):
    """Runs of consecutive ids: a masked id is its neighbour plus or minus one."""
    rng = np.random.default_rng(seed)
    starts = rng.integers(FIRST_PIECE, 40 - length, rows)
    return [list(range(s, s + length)) for s in starts]


def _batches(rows, seed, sequence_length=12):
    packed = pack_inputs(tf.ragged.constant(_counting_corpus(rows, seed)), sequence_length)
    return tf.data.Dataset.from_tensor_slices(packed).batch(32, drop_remainder=True)


def test_masked_lm_learns_a_planted_rule():
    keras.utils.set_random_seed(0)
    encoder = bert_encoder(40, dropout=0.0, **SIZES)
    pretrainer = compile_pretrainer(
        bert_pretrainer(encoder, max_predictions=3, next_sentence=False), learning_rate=5e-3
    )
    train = masked_lm_batches(_batches(1024, 0).repeat(), 40, seed=1, max_predictions=3)
    pretrainer.fit(train, steps_per_epoch=200, epochs=1, verbose=0, shuffle=False)
    held_out = masked_lm_batches(_batches(256, 9), 40, seed=2, max_predictions=3)
    figures = pretrainer.evaluate(held_out, verbose=0, return_dict=True)
    # Chance is 1 / 35 real pieces; the most frequent id about 1 / 25.
    assert figures["mlm_accuracy"] > 0.6, figures  # the same name with or without NSP


def test_attention_weights_are_the_encoders_and_ignore_padding():
    keras.utils.set_random_seed(3)
    encoder = bert_encoder(40, dropout=0.0, **dict(SIZES, num_layers=2))
    weights = np_(attention_weights(encoder, INPUTS["token_ids"], INPUTS["segment_ids"]))
    assert weights.shape == (2, 2, 2, 12, 12)  # layers, batch, heads, queries, keys
    np.testing.assert_allclose(weights[..., :8, :].sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_array_equal(weights[..., 8:], 0.0)  # padded keys
    np.testing.assert_array_equal(weights[..., 8:, :], 0.0)  # and padded queries
    # The same blocks as the encoder's graph: the last block's attention fed its output,
    # so recomputing it by hand from the returned weights matches the model.
    block = encoder.get_layer("encoder_1")
    x = encoder.get_layer("embedding_norm")(
        encoder.get_layer("embedding")(INPUTS["token_ids"], INPUTS["segment_ids"])
    )
    x = encoder.get_layer("encoder_0")(x, padding_mask=INPUTS["token_ids"] > 0)
    out, w = block(x, padding_mask=INPUTS["token_ids"] > 0, return_attention_scores=True)
    np.testing.assert_allclose(np_(w), weights[1], rtol=1e-5)
    np.testing.assert_allclose(
        np_(out)[:, :8], np_(encoder(INPUTS)["sequence_output"])[:, :8], rtol=1e-4, atol=1e-5
    )
    with pytest.raises(ValueError, match="must be a BERT encoder"):
        attention_weights(keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]), [[1]])


def test_mean_pooling_classifier_averages_the_real_positions_only():
    keras.utils.set_random_seed(4)
    encoder = bert_encoder(40, dropout=0.0, **SIZES)
    classifier = bert_classifier(encoder, 3, dropout=0.0, pooling="mean")
    states = np_(encoder(INPUTS)["sequence_output"])[:, :8].mean(axis=1)
    expected = np_(classifier.get_layer("classifier")(states))
    np.testing.assert_allclose(np_(classifier(INPUTS)), expected, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="`pooling` must be one of"):
        bert_classifier(encoder, 3, pooling="max")


def test_mean_pooling_classifier_builds_on_a_pretrainer_saved_after_other_models(tmp_path):
    # The pretrainer is saved from a process that built other models first, so its
    # operations were saved with suffixed automatic names ("not_equal_1", ...); a fresh
    # process (here: a cleared session) reloading it must still build the classifier.
    keras.backend.clear_session()
    keras.utils.set_random_seed(5)
    bert_encoder(40, **SIZES)  # its padding mask takes the name "not_equal"
    pretrainer = bert_pretrainer(bert_encoder(40, dropout=0.0, **SIZES), max_predictions=3)
    pretrainer.save(tmp_path / "pretrainer.keras")
    keras.backend.clear_session()
    encoder = encoder_of(keras.saving.load_model(tmp_path / "pretrainer.keras"))
    classifier = bert_classifier(encoder, 3, dropout=0.0, pooling="mean")
    states = np_(encoder(INPUTS)["sequence_output"])[:, :8].mean(axis=1)
    expected = np_(classifier.get_layer("classifier")(states))
    np.testing.assert_allclose(np_(classifier(INPUTS)), expected, rtol=1e-4, atol=1e-6)


def test_a_trained_classifier_reloads_with_its_optimizer_state(tmp_path):
    # The embedding's output bias (unused by the classifier) is frozen in the saved config
    # too, so the reloaded model's optimizer has the saved one's variables, not a warning.
    keras.utils.set_random_seed(7)
    encoder = encoder_of(bert_pretrainer(bert_encoder(40, dropout=0.0, **SIZES), 3))
    classifier = bert_classifier(encoder, 3, dropout=0.0)
    assert all(w is not encoder.get_layer("embedding").bias for w in classifier.trainable_weights)
    classifier.compile(
        keras.optimizers.Adam(1e-2),
        keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    classifier.fit(INPUTS, np.array([0, 1]), epochs=2, verbose=0)
    classifier.save(tmp_path / "classifier.keras")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        restored = keras.saving.load_model(tmp_path / "classifier.keras")
    assert len(restored.trainable_weights) == len(classifier.trainable_weights)
    assert not restored.get_layer("embedding").bias.trainable
    saved = [np_(v) for v in classifier.optimizer.variables]
    loaded = [np_(v) for v in restored.optimizer.variables]
    assert len(loaded) == len(saved) and int(loaded[0]) == 2
    for a, b in zip(saved, loaded):
        np.testing.assert_array_equal(a, b)


def test_encoder_of_a_pretrainer_without_a_pooler_pools_the_cls_state(tmp_path):
    # A masked-LM-only pretrainer saves no pooler; `encoder_of` makes a fresh one on the
    # [CLS] state, as a named layer (no automatic names to clash with the reloaded ones).
    keras.backend.clear_session()
    keras.utils.set_random_seed(6)
    bert_encoder(40, **SIZES)
    encoder = bert_encoder(40, dropout=0.0, **SIZES)
    bert_pretrainer(encoder, max_predictions=3, next_sentence=False).save(tmp_path / "p.keras")
    keras.backend.clear_session()
    restored = keras.saving.load_model(tmp_path / "p.keras")
    assert not any(layer.name == "pooler" for layer in restored.layers)
    recovered = encoder_of(restored)
    out = recovered(INPUTS)
    pooler = recovered.get_layer("pooler")
    expected = np_(pooler(np_(out["sequence_output"])[:, 0]))
    np.testing.assert_allclose(np_(out["pooled_output"]), expected, rtol=1e-5, atol=1e-6)
    assert tuple(bert_classifier(recovered, 3)(INPUTS).shape) == (2, 3)


class _DropsTheMask(keras.layers.Layer):
    def call(self, x):
        return x


def test_mean_pooling_needs_the_padding_mask():
    encoder = bert_encoder(40, **SIZES)
    with pytest.warns(UserWarning, match="destroy the mask"):
        states = _DropsTheMask()(encoder.output["sequence_output"])
    outputs = {"sequence_output": states, "pooled_output": encoder.output["pooled_output"]}
    unmasked = keras.Model(encoder.input, outputs)
    with pytest.raises(ValueError, match="`pooling='mean'` needs the padding mask"):
        bert_classifier(unmasked, 3, pooling="mean")

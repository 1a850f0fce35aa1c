"""TokenAndPositionEmbedding: the sum of the three tables, the padding mask, cached positions
and the tied reverse projection."""

import keras
import numpy as np
import pytest

from keras_adl.layers import TokenAndPositionEmbedding
from tests.harness import np_, run_layer_test

IDS = np.array([[5, 6, 7, 0], [9, 8, 0, 0]], "int32")
SEGMENTS = np.array([[0, 0, 1, 0], [0, 1, 0, 0]], "int32")


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        TokenAndPositionEmbedding,
        {"vocab_size": 12, "max_length": 6, "embedding_dim": 8, "num_segments": 2},
        {"inputs": IDS, "segment_ids": SEGMENTS},
        (2, 4, 8),
        expected_num_trainable_weights=3,
        full=True,
    )


def test_values_are_the_sum_of_the_tables_and_padding_is_masked():
    layer = TokenAndPositionEmbedding(12, 6, 8, num_segments=2)
    out = np_(layer(IDS, SEGMENTS))
    tokens, positions, segments = (np_(w) for w in layer.weights)
    expected = tokens[IDS] + positions[None, :4] + segments[SEGMENTS]
    np.testing.assert_allclose(out, expected, rtol=1e-6)
    np.testing.assert_array_equal(np_(layer.compute_mask(IDS)), IDS != 0)
    # A call from start_index s equals the slice [s:] of the full call (cached decoding).
    np.testing.assert_allclose(
        np_(layer(IDS[:, 2:], SEGMENTS[:, 2:], start_index=2)), out[:, 2:], rtol=1e-6
    )


def test_reverse_projects_on_the_token_table_plus_bias():
    layer = TokenAndPositionEmbedding(12, 6, 8, output_bias=True)
    layer(IDS)
    layer.bias.assign(np.arange(12, dtype="float32"))
    hidden = np.random.default_rng(0).normal(size=(2, 3, 8)).astype("float32")
    logits = np_(layer(hidden, reverse=True))
    expected = hidden @ np_(layer.token_embeddings).T + np.arange(12)
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-5)


def test_tied_projection_survives_keras_saving(tmp_path):
    ids = keras.Input((None,), dtype="int32")
    embed = TokenAndPositionEmbedding(12, 6, 8, output_bias=True, name="embedding")
    model = keras.Model(ids, embed(embed(ids), reverse=True))
    model.save(tmp_path / "tied.keras")
    restored = keras.saving.load_model(tmp_path / "tied.keras")
    np.testing.assert_allclose(np_(restored(IDS)), np_(model(IDS)), rtol=1e-6)
    # One layer, called twice: one table in the model's weights, not two copies.
    assert len(restored.weights) == 3


def names(weights):
    return sorted(w.path.split("/")[-1] for w in weights)


@pytest.mark.portable
@pytest.mark.parametrize("build_first", [False, True])
def test_a_frozen_output_bias_stays_frozen_through_the_switch_and_saving(build_first):
    layer = TokenAndPositionEmbedding(12, 6, 8, output_bias=True)
    if build_first:
        layer(IDS)
    layer.set_output_bias_trainable(False)
    layer(IDS)
    assert names(layer.trainable_weights) == ["position_embeddings", "token_embeddings"]
    layer.trainable = False
    layer.trainable = True  # Keras' switch sets every variable; the bias stays frozen
    assert not layer.bias.trainable and len(layer.trainable_weights) == 2
    config = layer.get_config()
    assert config["output_bias_trainable"] is False
    restored = TokenAndPositionEmbedding.from_config(config)
    restored(IDS)
    assert not restored.bias.trainable and len(restored.trainable_weights) == 2
    restored.set_output_bias_trainable(True)
    assert names(restored.trainable_weights) == ["bias", "position_embeddings", "token_embeddings"]
    # A config saved before the option existed: the bias trains.
    del config["output_bias_trainable"]
    older = TokenAndPositionEmbedding.from_config(config)
    older(IDS)
    assert older.bias.trainable
    # Without an output bias the switch is harmless.
    plain = TokenAndPositionEmbedding(12, 6, 8)
    plain.set_output_bias_trainable(False)
    plain(IDS)
    assert plain.bias is None and len(plain.trainable_weights) == 2


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="`max_length` must be"):
        TokenAndPositionEmbedding(12, 0, 8)
    layer = TokenAndPositionEmbedding(12, 3, 8, num_segments=2)
    with pytest.raises(ValueError, match="exceed max_length = 3"):
        layer(IDS, SEGMENTS)
    with pytest.raises(ValueError, match="`segment_ids` is required"):
        layer(IDS[:, :3])
    with pytest.raises(TypeError, match="must be integer token ids"):
        TokenAndPositionEmbedding(12, 6, 8)(IDS.astype("float32"))

"""CharacterCNN: ELMo's character encoder, against a numpy re-implementation; character padding
never changes a token's output; padded tokens are exact zeros and masked."""

import keras
import numpy as np
import pytest

from keras_adl.layers import CharacterCNN
from keras_adl.utils import keras_mask_of
from tests.harness import np_, run_layer_test

SMALL = {
    "num_characters": 12,
    "character_dim": 3,
    "filters": ((1, 2), (3, 3)),
    "num_highway": 1,
    "output_dim": 4,
}
# Tokens of 4, 2 (shorter than the width-3 filter), 1 and 0 characters (a padded token).
IDS = np.array(
    [
        [[3, 4, 5, 6, 0], [7, 8, 0, 0, 0], [0, 0, 0, 0, 0]],
        [[9, 0, 0, 0, 0], [2, 3, 4, 5, 6], [11, 10, 9, 0, 0]],
    ],
    "int32",
)


@pytest.mark.portable
def test_full_harness():
    run_layer_test(CharacterCNN, SMALL, IDS, (2, 3, 4), expected_num_trainable_weights=9, full=True)


def _numpy_character_cnn(layer, ids):
    """The layer's math in numpy, token by token: only the valid windows enter the max."""
    table = np_(layer.character_embedding.embeddings)
    max_width = max(w for w, _ in layer.filters)
    out = np.zeros(ids.shape[:2] + (layer.output_dim,), "float32")
    for b, t in np.ndindex(*ids.shape[:2]):
        chars = ids[b, t]
        if chars[0] == 0:
            continue  # a padded token: exact zeros
        length = int((chars != 0).sum())
        padded = np.concatenate([chars, np.zeros(max(0, max_width - len(chars)), "int32")])
        e = table[padded]  # [P, E]
        pooled = []
        for (width, _), conv in zip(layer.filters, layer.convolutions):
            kernel, bias = np_(conv.kernel), np_(conv.bias)  # [w, E, count], [count]
            starts = range(length - width + 1) if length >= width else [0]
            windows = [
                np.maximum(np.einsum("we,wec->c", e[s : s + width], kernel) + bias, 0.0)
                for s in starts
            ]
            pooled.append(np.max(windows, axis=0))
        x = np.concatenate(pooled)
        for dense in layer.highway.highway_layers:
            kernel, bias = np_(dense.kernel), np_(dense.bias)
            d = x.shape[-1]
            z = x @ kernel + bias
            gate = 1.0 / (1.0 + np.exp(-z[d:]))
            x = gate * np.maximum(z[:d], 0.0) + (1.0 - gate) * x
        out[b, t] = x @ np_(layer.projection.kernel) + np_(layer.projection.bias)
    return out


def test_values_match_a_numpy_reimplementation():
    layer = CharacterCNN(**SMALL)
    out = np_(layer(IDS))
    np.testing.assert_allclose(out, _numpy_character_cnn(layer, IDS), rtol=1e-5, atol=1e-5)


def _random_tokens(rng, num_tokens, max_length, width):
    lengths = rng.integers(1, max_length + 1, num_tokens)
    ids = np.zeros((num_tokens, width), "int32")
    for i, n in enumerate(lengths):
        ids[i, :n] = rng.integers(1, 40, n)
    return ids


def test_character_padding_never_changes_a_token():
    rng = np.random.default_rng(1)
    layer = CharacterCNN(num_characters=40, character_dim=4, num_highway=2, output_dim=8)
    tokens = _random_tokens(rng, 12, 20, 20)  # 1–20 characters, some shorter than width 5
    tokens[:3, 3:] = 0  # three tokens of at most 3 characters
    short = np_(layer(tokens.reshape(3, 4, 20)))
    longer = np_(layer(np.pad(tokens, ((0, 0), (0, 10))).reshape(3, 4, 30)))  # C = 30
    np.testing.assert_allclose(short, longer, rtol=1e-5, atol=1e-6)
    # Nor the other tokens of the batch: each token alone gives the same vector.
    alone = np.concatenate([np_(layer(token[None, None])) for token in tokens]).reshape(3, 4, 8)
    np.testing.assert_allclose(alone, short, rtol=1e-5, atol=1e-6)
    # C shorter than the widest filter: padded to it, same output as with C = 20.
    tiny = np_(layer(tokens[:3, :3].reshape(1, 3, 3)))
    np.testing.assert_allclose(tiny[0], short[0, :3], rtol=1e-5, atol=1e-6)


def test_padded_tokens_are_exact_zeros_and_masked():
    layer = CharacterCNN(**SMALL)
    out = np_(layer(IDS))
    mask = np_(layer.compute_mask(IDS))
    np.testing.assert_array_equal(mask, IDS[..., 0] != 0)
    assert np.all(out[0, 2] == 0.0) and np.all(out[~mask] == 0.0)
    # The mask is attached to the output, eagerly and in a functional model.
    np.testing.assert_array_equal(np_(keras_mask_of(layer(IDS))), mask)
    symbolic = CharacterCNN(**SMALL)(keras.Input((None, None), dtype="int32"))
    assert tuple(keras_mask_of(symbolic).shape) == (None, None)


def test_filters_are_stored_as_lists_and_accepted_back():
    layer = CharacterCNN(**SMALL)
    config = layer.get_config()
    assert config["filters"] == [[1, 2], [3, 3]]
    assert CharacterCNN.from_config(config).filters == [[1, 2], [3, 3]]


@pytest.mark.parametrize(
    "filters", [(), [], "abc", [(1,)], [(1, 2, 3)], [(0, 4)], [(2, -1)], [(1.5, 2)], [(True, 2)], 5]
)
def test_bad_filters_are_named(filters):
    with pytest.raises(ValueError, match=r"CharacterCNN: `filters` must be a non-empty sequence"):
        CharacterCNN(filters=filters)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match=r"CharacterCNN: `output_dim` must be a positive integer"):
        CharacterCNN(output_dim=0)
    with pytest.raises(ValueError, match=r"CharacterCNN: `num_highway` must be an int >= 0"):
        CharacterCNN(num_highway=-1)
    with pytest.raises(ValueError, match=r"CharacterCNN: `inputs` must have rank 3; .*\(3, 5\)"):
        CharacterCNN(**SMALL)(IDS[0])
    with pytest.raises(TypeError, match=r"CharacterCNN: `inputs` must be integer .*float32"):
        CharacterCNN(**SMALL)(IDS.astype("float32"))


def test_convolution_features_are_what_the_highway_and_projection_read():
    layer = CharacterCNN(**SMALL)
    out = np_(layer(IDS))
    features = np_(layer.convolution_features(IDS))
    assert features.shape == IDS.shape[:2] + (layer.num_features,)
    mask = IDS[..., 0] != 0
    assert not features[~mask].any()
    x = features[mask]
    if layer.highway is not None:
        x = np_(layer.highway(x))
    np.testing.assert_allclose(np_(layer.projection(x)), out[mask], rtol=1e-5, atol=1e-5)


def test_an_empty_batch_and_zero_steps_give_empty_outputs():
    # TensorFlow's convolutions return a wrong shape for zero rows; the layer pads one.
    layer = CharacterCNN(20, 4, ((2, 3), (3, 5)), output_dim=6)
    for shape in ((0, 4, 7), (2, 0, 7)):
        out = layer(np.zeros(shape, "int32"))
        assert tuple(out.shape) == shape[:2] + (6,)

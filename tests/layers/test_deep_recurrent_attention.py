import json
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.layers import DeepRecurrentAttention
from tests.harness import np_, run_layer_test
from tests.layers import glimpse_policy_checks

SMALL = dict(
    num_symbols=2,
    glimpses_per_symbol=2,
    patch_size=4,
    num_scales=2,
    glimpse_units=8,
    location_units=8,
    glimpse_output_units=16,
    units=12,
    context_size=(4, 8),
    context_filters=(4, 4, 8),
    seed=3,
)


def _images(batch=4, height=16, width=32):
    return np.random.default_rng(0).random((batch, height, width, 1)).astype("float32")


@pytest.mark.portable
def test_full_harness():
    # Outputs in key order: baselines, hidden, locations, log_probs. The emission network and
    # the baseline read stop_gradient(r²); the locations are samples without a gradient; the
    # context network reaches `hidden` through r²_0.
    run_layer_test(
        DeepRecurrentAttention,
        SMALL,
        _images(),
        [(4, 4), (4, 2, 12), (4, 4, 2), (4, 4)],
        expected_num_trainable_weights=26,
        full=True,
        no_gradient={
            0: ("glimpse_network", "core", "location_network", "context", "input:inputs"),
            1: ("location_network", "baseline"),
            2: ("*",),
            3: ("glimpse_network", "core", "baseline", "context", "input:inputs"),
        },
        float32_outputs=glimpse_policy_checks.FLOAT32_OUTPUTS,
    )


def test_config_round_trip_and_no_num_glimpses():
    layer = DeepRecurrentAttention(**SMALL, core="gru", policy="random", read_from="bottom")
    config = layer.get_config()
    assert "num_glimpses" not in config and config["context_filters"] == [4, 4, 8]
    assert config["read_from"] == "bottom"
    assert DeepRecurrentAttention.from_config(config).get_config() == config
    serialized = json.loads(json.dumps(keras.saving.serialize_keras_object(layer)))
    assert keras.saving.deserialize_keras_object(serialized).get_config() == config
    assert layer.num_glimpses == 4


@pytest.mark.parametrize(
    "core, read_from", [("lstm", "top"), ("gru", "top"), ("rnn", "top"), ("lstm", "bottom")]
)
def test_hidden_is_the_top_state_after_each_symbols_glimpses(core, read_from):
    """Rerun the recurrence by hand from the layer's own sublayers, at the policy's means;
    ``read_from="bottom"`` gives r¹ at the same steps instead of r²."""
    layer = DeepRecurrentAttention(**SMALL, core=core, read_from=read_from)
    images = _images()
    out = layer(images, training=False)
    context = layer._context(images)
    top_states = [context] + list(layer.emission_cell.get_initial_state(batch_size=4)[1:])
    bottom_states = layer.core_cell.get_initial_state(batch_size=4)
    top, hidden, locations = context, [], []
    for k in range(4):
        location = np.tanh(np_(layer.location_network(top)))  # μ_k
        locations.append(location)
        glimpse = layer.glimpse_network(images, location)
        bottom, bottom_states = layer.core_cell(glimpse, bottom_states)
        top, top_states = layer.emission_cell(bottom, top_states)
        if k % 2 == 1:
            hidden.append(np_(top if read_from == "top" else bottom))
    np.testing.assert_allclose(np_(out["locations"]), np.stack(locations, 1), atol=1e-5)
    np.testing.assert_allclose(np_(out["hidden"]), np.stack(hidden, 1), atol=1e-5)
    # At the mean, log N(μ; μ, σ²I) = −2 log(σ √(2π)).
    np.testing.assert_allclose(
        np_(out["log_probs"]), -2 * math.log(0.1 * math.sqrt(2 * math.pi)), rtol=1e-6
    )


def test_reading_from_the_bottom_rnn_keeps_the_context_out_of_the_symbols():
    """With ``read_from="bottom"`` the symbols come from the glimpses alone: no gradient from
    ``hidden`` reaches the context network or the top RNN (with ``"top"`` it reaches the
    context network)."""
    layer = DeepRecurrentAttention(**SMALL, read_from="bottom")
    images = tf.constant(_images())
    layer(images)
    watched = [w for w in layer.weights if "context" in w.path or "emission" in w.path]
    assert len(watched) == 2 * len(SMALL["context_filters"]) + 2 + 3  # convs, dense, LSTM
    # nothing trains them, so they are not trainable (no "gradients do not exist" warning)
    assert not any(w.trainable for w in watched)
    assert len(layer.trainable_weights) == 26 - len(watched)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(layer(images, training=False)["hidden"])
    assert all(g is None for g in tape.gradient(loss, watched))
    top = DeepRecurrentAttention(**SMALL, read_from="top")
    top(images)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(top(images, training=False)["hidden"])
    watched = [w for w in top.trainable_weights if "context" in w.path]
    assert all(g is not None for g in tape.gradient(loss, watched))


def test_the_first_glimpse_is_chosen_from_the_context():
    """The first location depends on the image (through the context network), unlike the
    RAM's fixed central first glimpse; it is deterministic at inference, sampled in training."""
    layer = DeepRecurrentAttention(**SMALL)
    images = _images()
    a = np_(layer(images, training=False)["locations"])[:, 0]
    assert not np.allclose(a[0], a[1])
    np.testing.assert_array_equal(a, np_(layer(images, training=False)["locations"])[:, 0])
    b = np_(layer(images, training=True)["locations"])[:, 0]
    assert not np.allclose(a, b)
    context = np_(layer._context(images))
    np.testing.assert_allclose(a, np.tanh(np_(layer.location_network(context))), atol=1e-5)


def test_the_glimpse_network_multiplies_what_and_where():
    layer = DeepRecurrentAttention(**SMALL)
    layer(_images())
    assert layer.glimpse_network.combine == "multiply"


def test_random_policy_has_no_policy_weights_and_uniform_locations():
    layer = DeepRecurrentAttention(**SMALL, policy="random")
    images = _images(batch=256)
    out = layer(images, training=False)
    assert not any("location_network" in w.path or "baseline" in w.path for w in layer.weights)
    locations = np_(out["locations"])
    assert abs(locations.mean()) < 0.05 and 0.5 < locations.std() < 0.65  # U(−1, 1): 0.577
    np.testing.assert_array_equal(np_(out["log_probs"]), 0.0)


def test_policy_gradient_reaches_only_the_emission_network_and_its_mean():
    layer = DeepRecurrentAttention(**SMALL)
    images = tf.constant(_images())
    layer(images)
    with tf.GradientTape(persistent=True) as tape:
        out = layer(images, training=True)
        hidden = tf.reduce_sum(out["hidden"])
        log_prob = tf.reduce_sum(out["log_probs"])
    by_path = dict(zip([w.path for w in layer.trainable_weights], layer.trainable_weights))
    policy = tape.gradient(log_prob, by_path)
    classify = tape.gradient(hidden, by_path)
    for path in by_path:
        reached = policy[path] is not None and np.any(np_(policy[path]))
        assert reached == ("location_network" in path), path
    by_name = {path.split("/", 1)[1]: path for path in by_path}
    assert np.any(np_(classify[by_name["context_conv_1/kernel"]]))
    assert classify[by_name["location_network/kernel"]] is None


def test_the_papers_policy_gradient_trains_the_context_and_the_top_rnn():
    layer = DeepRecurrentAttention(**SMALL, read_from="bottom", policy_gradient_to_core=True)
    images = tf.constant(_images())
    layer(images)
    assert len(layer.trainable_weights) == 26  # nothing frozen: REINFORCE trains them
    with tf.GradientTape() as tape:
        log_prob = tf.reduce_sum(layer(images, training=True)["log_probs"])
    by_path = dict(zip([w.path for w in layer.trainable_weights], layer.trainable_weights))
    policy = tape.gradient(log_prob, by_path)
    for part in ("context_conv_1/kernel", "context_output/kernel", "emission"):
        paths = [path for path in by_path if part in path]
        assert paths and any(np.any(np_(policy[path])) for path in paths), part
    config = layer.get_config()
    assert config["policy_gradient_to_core"] is True
    assert DeepRecurrentAttention.from_config(config).get_config() == config


def test_sampled_locations_under_mixed_precision_match_float32():
    glimpse_policy_checks.check_sampled_mixed_precision(DeepRecurrentAttention, SMALL, _images())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_symbols": 0}, "`num_symbols`"),
        ({"glimpses_per_symbol": -1}, "`glimpses_per_symbol`"),
        ({"context_size": (4, 0)}, r"`context_size` must be two positive integers"),
        ({"context_size": 8}, r"`context_size` must be two positive integers \(h, w\); received 8"),
        ({"context_filters": (8, 8)}, "`context_filters` must be three positive integers"),
        ({"policy": "greedy"}, "`policy`"),
        ({"read_from": "middle"}, "`read_from` must be 'top' or 'bottom'; received 'middle'"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DeepRecurrentAttention(**kwargs)


def test_num_glimpses_is_refused_with_the_reason():
    with pytest.raises(TypeError, match="`num_symbols` × `glimpses_per_symbol`"):
        DeepRecurrentAttention(num_glimpses=4)


def test_the_coarse_view_averages_blocks_then_fits_the_context_size():
    layer = DeepRecurrentAttention(**SMALL)
    images = _images()
    layer(images)
    coarse = np_(layer.coarse_view(images))  # 16×32 → 4×4 blocks → 4×8, no resize
    blocks = images.reshape(4, 4, 4, 8, 4, 1).mean(axis=(2, 4))
    np.testing.assert_allclose(coarse, blocks, atol=1e-6)
    assert np_(layer.coarse_view(_images(height=20, width=36))).shape == (4, 4, 8, 1)


def test_images_of_a_size_known_only_at_run_time():
    layer = DeepRecurrentAttention(**SMALL)
    model = keras.Model(inputs := keras.Input((None, None, 1)), layer(inputs)["hidden"])
    assert model.predict(_images(height=24, width=40), verbose=0).shape == (4, 2, 12)
    with pytest.raises(ValueError, match="channel dimension of `images` must be known"):
        DeepRecurrentAttention(**SMALL)(keras.Input((16, 32, None)))

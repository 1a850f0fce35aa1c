import json
import math

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.layers import RecurrentAttention
from tests.harness import np_, run_layer_test
from tests.layers import glimpse_policy_checks

SMALL = dict(
    num_glimpses=3,
    patch_size=4,
    num_scales=2,
    glimpse_units=8,
    location_units=8,
    glimpse_output_units=16,
    units=12,
    seed=3,
)


def _images(batch=4, size=16):
    return np.random.default_rng(0).random((batch, size, size, 1)).astype("float32")


@pytest.mark.portable
def test_full_harness():
    # Outputs in key order: baselines, hidden, locations, log_probs. The harness differentiates
    # in training mode, where the locations are samples (no gradient), the policy and the
    # baseline read stop_gradient(h_t), and the core never sees the location network.
    run_layer_test(
        RecurrentAttention,
        SMALL,
        _images(),
        [(4, 2), (4, 12), (4, 3, 2), (4, 2)],
        expected_num_trainable_weights=14,
        full=True,
        no_gradient={
            0: ("glimpse_network", "core", "location_network", "input:inputs"),
            1: ("location_network", "baseline"),
            2: ("*",),
            3: ("glimpse_network", "core", "baseline", "input:inputs"),
        },
        # Only `hidden` follows the policy; log-probabilities, baselines and locations stay
        # float32 (and in training: test_sampled_locations_under_mixed_precision_match_float32).
        float32_outputs=glimpse_policy_checks.FLOAT32_OUTPUTS,
    )


def test_config_round_trip():
    layer = RecurrentAttention(
        **SMALL,
        core="gru",
        location_std=0.2,
        policy="random",
        policy_gradient_to_core=True,
        glimpse_filters=(3,),
    )
    config = layer.get_config()
    assert config["glimpse_filters"] == [3]
    assert RecurrentAttention.from_config(config).get_config() == config
    serialized = json.loads(json.dumps(keras.saving.serialize_keras_object(layer)))
    assert keras.saving.deserialize_keras_object(serialized).get_config() == config


@pytest.mark.parametrize("core", ["lstm", "gru", "rnn"])
def test_shapes_and_first_location_is_the_centre(core):
    out = RecurrentAttention(**dict(SMALL, num_glimpses=4), core=core)(_images(), training=True)
    assert tuple(out["hidden"].shape) == (4, 12)
    assert tuple(out["locations"].shape) == (4, 4, 2)
    assert tuple(out["log_probs"].shape) == tuple(out["baselines"].shape) == (4, 3)
    locations = np_(out["locations"])
    np.testing.assert_array_equal(locations[:, 0], 0.0)
    assert np.all(np.abs(locations) <= 1.0)


def test_inference_uses_the_mean_and_training_samples():
    layer = RecurrentAttention(**SMALL, location_std=0.1)
    images = _images()
    a, b = layer(images, training=False), layer(images, training=False)
    np.testing.assert_array_equal(np_(a["locations"]), np_(b["locations"]))
    # At the mean, log N(μ; μ, σ²I) = −2 log(σ √(2π)).
    np.testing.assert_allclose(
        np_(a["log_probs"]), -2 * math.log(0.1 * math.sqrt(2 * math.pi)), rtol=1e-6
    )
    c, d = layer(images, training=True), layer(images, training=True)
    assert not np.allclose(np_(c["locations"]), np_(d["locations"]))
    assert np.all(np_(c["log_probs"]) < np_(a["log_probs"]))  # a sample is off the mode


def test_log_probs_are_the_gaussian_density_of_the_samples():
    """With the policy's mean pinned at tanh(0.2) and σ = 0.05, no sample clips: the
    log-density of the returned locations is the returned log-probability."""
    layer = RecurrentAttention(**dict(SMALL, num_glimpses=2), location_std=0.05)
    images = _images(batch=64)
    layer(images)
    kernel, bias = layer.location_network.get_weights()
    layer.location_network.set_weights([np.zeros_like(kernel), np.full_like(bias, 0.2)])
    out = layer(images, training=True)
    mean = np.tanh(0.2)
    sample = np_(out["locations"])[:, 1]
    expected = -np.sum((sample - mean) ** 2, axis=-1) / (2 * 0.05**2) - 2 * math.log(
        0.05 * math.sqrt(2 * math.pi)
    )
    np.testing.assert_allclose(np_(out["log_probs"])[:, 0], expected, rtol=1e-4, atol=1e-4)
    assert 0.02 < np.std(sample) < 0.08


def test_log_probs_are_of_the_unclipped_sample():
    """With the mean pinned near the edge (tanh(3) ≈ 0.995) and σ = 0.3, about half the
    samples clip in each coordinate. ‖l − μ‖²/σ² of the unclipped samples is χ²(2) (mean 2);
    the clipped samples would give a much smaller mean."""
    layer = RecurrentAttention(**dict(SMALL, num_glimpses=2), location_std=0.3)
    images = _images(batch=4000)
    layer(images[:2])
    kernel, bias = layer.location_network.get_weights()
    layer.location_network.set_weights([np.zeros_like(kernel), np.full_like(bias, 3.0)])
    out = layer(images, training=True)
    clipped = np_(out["locations"])[:, 1]
    assert np.mean(clipped == 1.0) > 0.3  # many samples were clipped
    constant = -2 * math.log(0.3 * math.sqrt(2 * math.pi))
    chi2 = -2 * (np_(out["log_probs"])[:, 0] - constant)  # ‖l − μ‖²/σ²
    assert abs(np.mean(chi2) - 2.0) < 0.2
    from_clipped = np.sum((clipped - np.tanh(3.0)) ** 2, -1) / 0.3**2
    assert np.mean(from_clipped) < 1.5


def test_random_policy_has_no_location_network_and_random_locations():
    layer = RecurrentAttention(**SMALL, policy="random")
    images = _images()
    a, b = layer(images, training=False), layer(images, training=False)
    assert not hasattr(layer, "location_network")
    assert not any("location_network" in w.path or "baseline" in w.path for w in layer.weights)
    np.testing.assert_array_equal(np_(a["locations"])[:, 0], 0.0)
    assert not np.allclose(np_(a["locations"])[:, 1:], np_(b["locations"])[:, 1:])
    np.testing.assert_array_equal(np_(a["log_probs"]), 0.0)


def test_glimpse_locations_carry_no_gradient_but_the_mean_does():
    layer = RecurrentAttention(**SMALL)
    images = tf.constant(_images())
    layer(images)
    with tf.GradientTape(persistent=True) as tape:
        out = layer(images, training=True)
        hidden = tf.reduce_sum(out["hidden"])
        log_prob = tf.reduce_sum(out["log_probs"])
    # The classification path never reaches the location network (locations are samples).
    grads = tape.gradient(hidden, layer.location_network.trainable_weights)
    assert all(g is None or not np.any(np_(g)) for g in grads)
    # log π reaches it through μ_t.
    grads = tape.gradient(log_prob, layer.location_network.trainable_weights)
    assert all(g is not None and np.any(np_(g)) for g in grads)


@pytest.mark.parametrize("to_core", [False, True])
def test_policy_gradient_reaches_the_core_only_when_asked(to_core):
    layer = RecurrentAttention(**SMALL, policy_gradient_to_core=to_core)
    images = tf.constant(_images())
    layer(images)
    with tf.GradientTape() as tape:
        log_prob = tf.reduce_sum(layer(images, training=True)["log_probs"])
    core = layer.core_cell.trainable_weights + layer.glimpse_network.trainable_weights
    grads = tape.gradient(log_prob, core)
    reached = [g is not None and bool(np.any(np_(g))) for g in grads]
    # The paper: REINFORCE's gradient reaches every parameter; ours, by default, only the
    # location network. The core's input kernel (the first weight) is the one to check.
    assert reached[0] == to_core and any(reached) == to_core


def test_policy_gradient_to_core_must_be_a_bool():
    with pytest.raises(TypeError, match="`policy_gradient_to_core`.*received 'yes'"):
        RecurrentAttention(policy_gradient_to_core="yes")


def test_single_glimpse_has_empty_policy_outputs():
    out = RecurrentAttention(**dict(SMALL, num_glimpses=1))(_images())
    assert tuple(out["log_probs"].shape) == (4, 0)
    assert tuple(out["locations"].shape) == (4, 1, 2)


def test_sampled_locations_under_mixed_precision_match_float32():
    glimpse_policy_checks.check_sampled_mixed_precision(RecurrentAttention, SMALL, _images())


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"num_glimpses": 0}, "`num_glimpses`"),
        ({"core": "transformer"}, "`core`"),
        ({"policy": "greedy"}, "`policy`"),
        ({"location_std": 0.0}, "`location_std`"),
        ({"patch_size": -2}, "`patch_size`"),
        ({"glimpse_filters": (4, 4, 4, 4)}, r"4 3×3 valid convolutions need `patch_size` > 8"),
        ({"glimpse_filters": (4, -1)}, r"`glimpse_filters` must be positive integers"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        RecurrentAttention(**kwargs)


def test_replicas_draw_different_locations():
    """Under MirroredStrategy the seed generator is mirrored; each replica must still sample
    its own locations (else exploration is duplicated across replicas)."""
    from tests.mirrored import two_cpus

    strategy = two_cpus()
    for policy in ("learned", "random"):
        with strategy.scope():
            layer = RecurrentAttention(**dict(SMALL, num_glimpses=2), policy=policy)
            layer.build((None, 16, 16, 1))
        dataset = strategy.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices(np.zeros((4, 16, 16, 1), "float32")).batch(4)
        )

        @tf.function
        def sample(x):
            # Called below, in the iteration that defines it.
            return strategy.run(
                lambda x: layer(x, training=True)["locations"][:, 1],  # noqa: B023
                args=(x,),
            )

        per_replica = [np_(v) for v in sample(next(iter(dataset))).values]
        assert len(per_replica) == 2 and per_replica[0].shape == (2, 2)
        assert not np.allclose(per_replica[0], per_replica[1])


def test_replicas_together_draw_the_locations_of_one_device():
    """Each replica keeps its rows of the global batch's draw, so two replicas sample what one
    device samples for the whole batch (multi-worker runs then train as one process)."""
    from tests.mirrored import two_cpus

    strategy = two_cpus()
    images = np.random.default_rng(0).normal(size=(4, 16, 16, 1)).astype("float32")
    for policy in ("learned", "random"):
        single = RecurrentAttention(**dict(SMALL, num_glimpses=3, seed=5), policy=policy)
        single.build((None, 16, 16, 1))
        with strategy.scope():
            layer = RecurrentAttention(**dict(SMALL, num_glimpses=3, seed=5), policy=policy)
            layer.build((None, 16, 16, 1))
        layer.set_weights(single.get_weights())
        dataset = strategy.experimental_distribute_dataset(
            tf.data.Dataset.from_tensor_slices(images).batch(4)
        )

        @tf.function
        def sample(x):
            return strategy.run(
                lambda x: layer(x, training=True)["locations"],  # noqa: B023
                args=(x,),
            )

        replicas = np.concatenate([np_(v) for v in sample(next(iter(dataset))).values])
        expected = np_(tf.function(lambda x: single(x, training=True)["locations"])(images))  # noqa: B023
        np.testing.assert_allclose(replicas, expected, rtol=1e-5, atol=1e-6)

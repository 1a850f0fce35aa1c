"""GlobalBatchDropout: inverted dropout in training, the identity otherwise, the mask passes
through, and replicas together draw the masks of one device."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.layers import GlobalBatchDropout
from keras_adl.utils import keras_mask_of
from tests.harness import np_, run_layer_test

X = np.random.default_rng(0).normal(size=(2, 3, 6)).astype("float32")


@pytest.mark.portable
def test_full_harness():
    # Not training (the eager call, predict, the .keras and mixed_float16 checks) the layer is
    # the identity; in training (the gradient check) the kept units pass the input's gradient.
    run_layer_test(
        GlobalBatchDropout,
        {"rate": 0.3, "seed": 1},
        X,
        (2, 3, 6),
        expected_num_trainable_weights=0,
        full=True,
    )


def test_identity_when_not_training_or_rate_zero():
    layer = GlobalBatchDropout(0.5, seed=0)
    np.testing.assert_array_equal(np_(layer(X)), X)
    np.testing.assert_array_equal(np_(layer(X, training=False)), X)
    np.testing.assert_array_equal(np_(GlobalBatchDropout(0.0, seed=0)(X, training=True)), X)


def test_training_drops_or_scales_each_unit():
    rate = 0.3
    x = np.random.default_rng(1).uniform(1.0, 2.0, size=(100, 100)).astype("float32")
    y = np_(GlobalBatchDropout(rate, seed=2)(x, training=True))
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / (1 - rate), rtol=1e-6)
    # 10 000 units: the kept fraction's standard deviation is sqrt(0.3 · 0.7 / 1e4) ≈ 0.0046.
    assert abs(kept.mean() - (1 - rate)) < 0.02, kept.mean()


def test_same_seed_same_masks_for_the_same_calls():
    x = np.ones((8, 16), "float32")
    a, b = GlobalBatchDropout(0.5, seed=7), GlobalBatchDropout(0.5, seed=7)
    first_a, second_a = np_(a(x, training=True)), np_(a(x, training=True))
    first_b, second_b = np_(b(x, training=True)), np_(b(x, training=True))
    np.testing.assert_array_equal(first_a, first_b)
    np.testing.assert_array_equal(second_a, second_b)
    assert not np.array_equal(first_a, second_a)  # the generator moves on between calls
    assert not np.array_equal(first_a, np_(GlobalBatchDropout(0.5, seed=8)(x, training=True)))


def test_mask_passes_through():
    ids = np.array([[3, 4, 0], [5, 0, 0]], "int32")
    x = keras.layers.Embedding(10, 6, mask_zero=True)(ids)
    for training in (False, True):
        y = GlobalBatchDropout(0.5, seed=0)(x, training=training)
        np.testing.assert_array_equal(np_(keras_mask_of(y)), ids != 0)
    inputs = keras.Input((None,), dtype="int32")
    model_out = GlobalBatchDropout(0.5)(keras.layers.Embedding(10, 6, mask_zero=True)(inputs))
    assert keras_mask_of(model_out) is not None


@pytest.mark.parametrize("rate", [-0.1, 1.0, "a", True])
def test_bad_rate_is_named(rate):
    with pytest.raises(
        ValueError,
        match=rf"GlobalBatchDropout: `rate` must be a float in \[0, 1\); received {rate!r}",
    ):
        GlobalBatchDropout(rate)


def test_bad_seed_and_rank_are_named():
    with pytest.raises(ValueError, match=r"GlobalBatchDropout: `seed` must be a non-negative"):
        GlobalBatchDropout(0.5, seed=-1)
    with pytest.raises(ValueError, match=r"GlobalBatchDropout: `inputs` must have rank >= 1"):
        GlobalBatchDropout(0.5).build(())


def test_replicas_together_draw_the_masks_of_one_device():
    """Each replica keeps its rows of the global batch's draw, so two replicas drop what one
    device drops for the whole batch (where keras.layers.Dropout draws per replica)."""
    from tests.mirrored import two_cpus

    strategy = two_cpus()
    x = np.random.default_rng(0).uniform(1.0, 2.0, size=(4, 5, 6)).astype("float32")
    single = GlobalBatchDropout(0.5, seed=5)
    with strategy.scope():
        layer = GlobalBatchDropout(0.5, seed=5)
    dataset = strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices(x).batch(4)
    )

    @tf.function
    def run(x):
        return strategy.run(lambda x: layer(x, training=True), args=(x,))

    single_run = tf.function(lambda x: single(x, training=True))
    for _ in range(2):  # and the seed generators move on alike
        per_replica = [np_(v) for v in run(next(iter(dataset))).values]
        assert [p.shape for p in per_replica] == [(2, 5, 6), (2, 5, 6)]
        expected = np_(single_run(x))
        np.testing.assert_array_equal(np.concatenate(per_replica), expected)
        assert 0 < (expected == 0).mean() < 1
        assert not np.array_equal(per_replica[0] == 0, per_replica[1] == 0)


def test_mixed_float16_keeps_the_input_dtype_and_the_mask():
    x = np.random.default_rng(0).uniform(1.0, 2.0, size=(4, 8)).astype("float32")
    mixed = GlobalBatchDropout(0.25, seed=3, dtype="mixed_float16")
    y = mixed(x, training=True)
    assert keras.backend.standardize_dtype(y.dtype) == "float16"
    assert keras.backend.standardize_dtype(mixed(x).dtype) == "float16"
    reference = np_(GlobalBatchDropout(0.25, seed=3)(x, training=True))
    y = np_(y).astype("float32")
    np.testing.assert_array_equal(y == 0, reference == 0)  # drawn in float32: the same mask
    np.testing.assert_allclose(y, reference, rtol=2e-3)

"""SequencePooling: the mean over the real steps, the first and the last real step; padded
steps (even non-finite ones) change nothing, an all-masked row gives zeros, float16 sums do
not overflow, bad arguments named."""

import keras
import numpy as np
import pytest

from keras_adl.layers import SequencePooling
from keras_adl.utils import keras_mask_of
from tests.harness import np_, run_layer_test

RNG = np.random.default_rng(0)
H = RNG.normal(size=(3, 5, 4)).astype("float32")
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool)


def test_harness_last():
    run_layer_test(
        SequencePooling,
        {"mode": "last"},
        {"inputs": H, "mask": MASK},
        (3, 4),
        expected_num_trainable_weights=0,
    )


@pytest.mark.portable
def test_full_harness_mean_with_mask():
    run_layer_test(
        SequencePooling,
        {"mode": "mean"},
        {"inputs": H, "mask": MASK},
        (3, 4),
        expected_num_trainable_weights=0,
        full=True,
    )


def test_values_against_the_formulas():
    mean = np.stack([H[b, MASK[b]].mean(0) for b in range(3)])
    last = H[np.arange(3), MASK.sum(1) - 1]
    np.testing.assert_allclose(np_(SequencePooling("first")(H, mask=MASK)), H[:, 0], rtol=1e-6)
    np.testing.assert_allclose(np_(SequencePooling("mean")(H, mask=MASK)), mean, rtol=1e-6)
    np.testing.assert_allclose(np_(SequencePooling("last")(H, mask=MASK)), last, rtol=1e-6)
    # Without a mask every step is real.
    np.testing.assert_allclose(np_(SequencePooling("mean")(H)), H.mean(1), rtol=1e-6)
    np.testing.assert_allclose(np_(SequencePooling("last")(H)), H[:, -1], rtol=1e-6)
    np.testing.assert_allclose(np_(SequencePooling("first")(H)), H[:, 0], rtol=1e-6)


@pytest.mark.portable
@pytest.mark.parametrize("mode", ["mean", "first", "last"])
def test_padded_steps_change_nothing_and_an_all_masked_row_gives_zeros(mode):
    layer = SequencePooling(mode)
    for fill in (1e4 * RNG.normal(size=H.shape), np.inf, np.nan):
        noisy = np.where(MASK[..., None], H, fill).astype("float32")
        np.testing.assert_array_equal(np_(layer(noisy, mask=MASK)), np_(layer(H, mask=MASK)))
    mask = MASK.copy()
    mask[1] = False
    out = np_(layer(H, mask=mask))
    np.testing.assert_array_equal(out[1], 0.0)
    assert np.isfinite(out).all()


def test_the_mask_comes_from_upstream_and_is_consumed():
    ids = keras.Input((5,), dtype="int32")
    states = keras.layers.Embedding(20, 4, mask_zero=True)(ids)
    pooled = SequencePooling("mean")(states)
    assert keras_mask_of(pooled) is None
    model = keras.Model(ids, [states, pooled])
    tokens = np.array([[3, 4, 0, 0, 0], [5, 6, 7, 8, 9]], "int32")
    embedded, out = (np_(t) for t in model(tokens))
    np.testing.assert_allclose(out, [embedded[0, :2].mean(0), embedded[1].mean(0)], rtol=1e-6)


def test_first_and_last_are_the_first_and_last_real_steps_whatever_the_gaps():
    mask = np.array([[1, 0, 1, 0, 0], [0, 1, 1, 0, 1], [0, 0, 0, 1, 1]], bool)  # gaps, left pad
    np.testing.assert_allclose(
        np_(SequencePooling("last")(H, mask=mask)), H[[0, 1, 2], [2, 4, 4]], rtol=1e-6
    )
    np.testing.assert_allclose(
        np_(SequencePooling("first")(H, mask=mask)), H[[0, 1, 2], [0, 1, 3]], rtol=1e-6
    )


def test_float64_stays_float64():
    x = H.astype("float64") + 1e-12
    out = SequencePooling("mean", dtype="float64")(x)
    assert out.dtype == "float64"
    np.testing.assert_allclose(np_(out), x.mean(1), rtol=1e-14)


def test_float16_sums_do_not_overflow():
    x = np.full((1, 8, 2), 30000.0, "float16")  # the float16 sum (240000) overflows
    out = SequencePooling("mean", dtype="mixed_float16")(x)
    assert out.dtype == "float16"
    np.testing.assert_allclose(np_(out).astype("float32"), 30000.0, rtol=1e-3)


def test_bad_arguments_are_named():
    with pytest.raises(
        ValueError,
        match=r"SequencePooling: `mode` must be one of \['first', 'last', 'mean'\]; received 'max'",
    ):
        SequencePooling("max")
    with pytest.raises(ValueError, match=r"SequencePooling: `inputs` must have rank 3"):
        SequencePooling().build((None, 4))

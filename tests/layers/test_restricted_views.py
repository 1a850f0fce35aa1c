import keras
import numpy as np
import pytest

from keras_adl.layers import RestrictedViews
from keras_adl.ops import restricted_views
from tests.harness import np_, run_layer_test

RNG = np.random.default_rng(0)
STATES = RNG.normal(size=(3, 5, 8)).astype("float32")  # [h→ | h←], D = 4
FORWARD, BACKWARD = STATES[..., :4], STATES[..., 4:]
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]], bool)
NAMES = ("backward", "forward", "future", "past")  # a dict's outputs flatten in key order


@pytest.mark.portable
def test_full_harness_with_mask():
    run_layer_test(
        RestrictedViews,
        {},
        {"inputs": STATES, "mask": MASK},
        [(3, 5, 4)] * 4,
        expected_num_trainable_weights=0,
        full=True,
    )


@pytest.mark.portable
def test_values_are_the_ops_views_for_both_input_forms():
    expected = restricted_views(FORWARD, BACKWARD, mask=MASK)
    layer = RestrictedViews()
    for got in (layer(STATES, mask=MASK), layer([FORWARD, BACKWARD], mask=[MASK, MASK])):
        assert sorted(got) == list(NAMES)
        for name in NAMES:
            np.testing.assert_array_equal(np_(got[name]), np_(expected[name]))
    past = np_(layer(STATES, mask=MASK)["past"])
    assert not np.any(past[0, 2]) and not np.any(past[2, 1])  # last real token: zero
    np.testing.assert_array_equal(past[0, 1], BACKWARD[0, 2])


@pytest.mark.portable
def test_keras_mask_is_read_and_propagated_to_every_view():
    ids = keras.Input((None,), dtype="int32")
    x = keras.layers.Embedding(10, 6, mask_zero=True)(ids)
    states = keras.layers.Bidirectional(
        keras.layers.SimpleRNN(4, return_sequences=True), merge_mode=None
    )(x)
    views = RestrictedViews()(states)
    logits = {k: keras.layers.Dense(3, name=f"head_{k}")(v) for k, v in views.items()}
    probe = keras.Model(ids, views)
    data = np.array([[3, 4, 5, 0, 0], [1, 2, 0, 0, 0]])
    out = {k: np_(v) for k, v in probe(data).items()}
    assert not np.any(out["past"][0, 2:]) and np.any(out["past"][0, :2])
    assert not np.any(out["future"][1, 0]) and not np.any(out["forward"][1, 2:])
    for name, view in views.items():
        mask = getattr(view, "_keras_mask", None)
        assert mask is not None, name
        assert getattr(logits[name], "_keras_mask", None) is not None, name
    masks = RestrictedViews().compute_mask(STATES, [MASK, None])
    assert all(m is MASK for m in masks.values())


def test_bad_inputs():
    with pytest.raises(ValueError, match="a list of 3 tensors"):
        RestrictedViews()([FORWARD, BACKWARD, FORWARD])
    with pytest.raises(ValueError, match="must be static and even"):
        RestrictedViews()(STATES[..., :7])
    with pytest.raises(ValueError, match="`inputs` must have rank 3"):
        RestrictedViews()(STATES[0])

import keras
import numpy as np
import pytest

from keras_adl.layers import GlimpseSensor
from keras_adl.ops import extract_glimpses
from tests.harness import np_, run_layer_test


def _data(batch=2, size=12, channels=2):
    rng = np.random.default_rng(0)
    return {
        "images": rng.random((batch, size, size, channels)).astype("float32"),
        "locations": rng.uniform(-1, 1, (batch, 2)).astype("float32"),
    }


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        GlimpseSensor,
        {"patch_size": 4, "num_scales": 2},
        _data(),
        (2, 2, 4, 4, 2),
        expected_num_trainable_weights=0,
        full=True,
    )


def test_harness_flattened():
    run_layer_test(
        GlimpseSensor,
        {"patch_size": 3, "num_scales": 3, "scale_factor": 1.5, "flatten": True},
        _data(),
        (2, 54),
        expected_num_trainable_weights=0,
    )


def test_equals_the_op_and_flattens_in_scale_row_column_channel_order():
    data = _data()
    nested = np_(GlimpseSensor(4, 2)(**data))
    np.testing.assert_allclose(
        nested, np_(extract_glimpses(data["images"], data["locations"], 4, 2))
    )
    flat = np_(GlimpseSensor(4, 2, flatten=True)(**data))
    np.testing.assert_allclose(flat, nested.reshape(2, -1))


def test_functional_model_with_known_image_size():
    images, locations = keras.Input((28, 28, 1)), keras.Input((2,))
    out = GlimpseSensor(8, 3, flatten=True)(images, locations)
    assert tuple(out.shape) == (None, 192)


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"patch_size": 0}, ValueError, "`patch_size`"),
        ({"patch_size": 4, "scale_factor": 0.9}, ValueError, "`scale_factor`"),
        ({"patch_size": 4, "flatten": "yes"}, TypeError, "`flatten` must be a bool"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        GlimpseSensor(**kwargs)

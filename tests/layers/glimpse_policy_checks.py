"""Checks shared by the glimpse-policy layers, `RecurrentAttention` and `DeepRecurrentAttention`:
both return ``{"baselines", "hidden", "locations", "log_probs"}``."""

import keras
import numpy as np

from tests.harness import np_

# The REINFORCE terms, which the layers keep in float32 under mixed precision, as indices into
# the outputs in key order (baselines, hidden, locations, log_probs): the harness's
# `float32_outputs`.
FLOAT32_OUTPUTS = (0, 2, 3)


def check_sampled_mixed_precision(layer_cls, kwargs, images):
    """In training, where locations are sampled, a ``mixed_float16`` copy with the same weights
    and seed draws the same locations and returns what float32 returns: float16 ``hidden``,
    float32 REINFORCE terms, all finite and within the harness's tolerance."""
    layer = layer_cls(**kwargs)
    layer(images)  # built at inference, which draws nothing
    mixed = layer_cls.from_config({**layer.get_config(), "dtype": "mixed_float16"})
    mixed(images)
    mixed.set_weights(layer.get_weights())
    want, got = layer(images, training=True), mixed(images, training=True)
    assert sorted(got) == ["baselines", "hidden", "locations", "log_probs"]
    for key in sorted(got):
        dtype = "float16" if key == "hidden" else "float32"
        assert keras.backend.standardize_dtype(got[key].dtype) == dtype, key
        value = np_(got[key]).astype("float32")
        assert np.all(np.isfinite(value)), key
        np.testing.assert_allclose(value, np_(want[key]), rtol=2e-2, atol=2e-2, err_msg=key)
    # The draw is a real one: training locations are not the inference means.
    assert not np.allclose(np_(want["locations"]), np_(layer(images)["locations"]))

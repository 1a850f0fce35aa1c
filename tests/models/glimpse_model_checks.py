"""Checks shared by the glimpse models, `recurrent_attention_model` (RAM) and
`deep_recurrent_attention_model` (DRAM): both predict ``{"probabilities", "locations", ...}``."""

import keras
import numpy as np


def check_mixed_precision(build, images, labels):
    """Under ``mixed_float16``, a model given the float32 model's weights predicts what it
    predicts at inference (mean locations: deterministic) within the harness's tolerance, in
    float32; and it trains with finite losses (sampled locations)."""
    reference = build()
    expected = reference.predict(images, verbose=0)
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = build()
        model.set_weights(reference.get_weights())
        got = model.predict(images, verbose=0)
        model.compile(optimizer="adam")
        history = model.fit(images, labels, batch_size=8, epochs=1, verbose=0)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    for key in ("probabilities", "locations"):
        assert got[key].dtype == np.float32, key
        np.testing.assert_allclose(got[key], expected[key], rtol=2e-2, atol=2e-2, err_msg=key)
    assert not np.allclose(got["locations"][:, 1:], 0.0)  # the policy moved the glimpses
    assert all(np.isfinite(v).all() for v in history.history.values()), history.history

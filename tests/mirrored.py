"""Two replicas against one device: the mirrored strategy over the two logical CPUs that
conftest.py makes, and the check of every "mirrored fit equals one device" test."""

import numpy as np

from keras_adl.training.distribute import build_in_scope, get_strategy

DEVICES = ["/cpu:0", "/cpu:1"]


def two_cpus():
    """The `MirroredStrategy` over the two logical CPUs (`get_strategy` hands out one per device
    set: a second one over the same devices breaks collectives in TensorFlow 2.21)."""
    return get_strategy("mirrored", devices=DEVICES)


def assert_weights_close(got, expected, rtol=0.0, atol=1e-5):
    """Two lists of weights, array by array."""
    assert len(got) == len(expected)
    for index, (a, b) in enumerate(zip(got, expected)):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"weight {index}")


def assert_mirrored_fit_matches_one_device(
    build, fit, metrics=("loss",), metrics_rtol=1e-4, weights_rtol=1e-4, weights_atol=1e-5
):
    """Fits a model built by ``build()`` on one device and one built under `two_cpus` from the
    same initial weights, each by ``fit(model)`` (which returns the History): every epoch's
    ``metrics`` and the final weights agree, up to the float reassociation of the cross-replica
    sum (jit stays off in ``build``: XLA under MirroredStrategy on logical CPUs fails).

    Returns:
        The single device's History, for the caller's own assertions.
    """
    single = build()
    mirrored = build_in_scope(two_cpus(), build)
    assert mirrored.distribute_strategy.num_replicas_in_sync == 2
    mirrored.set_weights(single.get_weights())
    expected, got = fit(single), fit(mirrored)
    for key in metrics:
        np.testing.assert_allclose(
            got.history[key], expected.history[key], rtol=metrics_rtol, err_msg=key
        )
    assert_weights_close(mirrored.get_weights(), single.get_weights(), weights_rtol, weights_atol)
    return expected

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from keras_adl.ops.recurrence import scan_steps
from tests.harness import np_, value_and_grads

pytestmark = pytest.mark.portable  # run on every backend by make test-backends


def _step(state, x):
    h = ops.tanh(state * 0.5 + x)
    return h, {"h": h, "double": 2.0 * h}


@pytest.mark.parametrize("steps", [1, 5])
def test_scan_steps_equals_python_loop(steps):
    xs = ops.convert_to_tensor(np.random.rand(steps, 3, 2).astype("float32"))
    final, outputs = scan_steps(_step, ops.zeros((3, 2)), xs)
    state, expected = ops.zeros((3, 2)), []
    for t in range(steps):
        state, out = _step(state, xs[t])
        expected.append(np_(out["h"]))
    np.testing.assert_allclose(np_(final), np_(state), rtol=1e-6)
    np.testing.assert_allclose(np_(outputs["h"]), np.stack(expected), rtol=1e-6)
    np.testing.assert_allclose(np_(outputs["double"]), 2 * np.stack(expected), rtol=1e-6)


@pytest.mark.tf_only
def test_scan_steps_gradient_under_xla_with_dynamic_length():
    weight = tf.Variable(0.7)

    def step(state, x):
        h = tf.tanh(state * weight + x)
        return h, h

    @tf.function(jit_compile=True, input_signature=[tf.TensorSpec((None, 2, 3))])
    def loss_and_grad(xs):
        with tf.GradientTape() as tape:
            _, outputs = scan_steps(step, tf.zeros((2, 3)), xs)
            loss = tf.reduce_sum(outputs)
        return loss, tape.gradient(loss, weight)

    xs = tf.constant(np.random.rand(4, 2, 3).astype("float32"))
    loss, grad = loss_and_grad(xs)
    with tf.GradientTape() as tape:
        state, total = tf.zeros((2, 3)), 0.0
        for t in range(4):
            state, _ = step(state, xs[t])
            total += tf.reduce_sum(state)
    np.testing.assert_allclose(float(loss), float(total), rtol=1e-5)
    np.testing.assert_allclose(float(grad), float(tape.gradient(total, weight)), rtol=1e-4)


def test_scan_steps_gradient_equals_the_python_loop_gradient():
    xs = np.random.default_rng(0).random((4, 2, 3)).astype("float32")

    def looped(xs):
        state, total = ops.zeros((2, 3)), 0.0
        for t in range(4):
            state, _ = _step(state, xs[t])
            total = total + ops.sum(state)
        return total

    scanned_loss, (scanned,) = value_and_grads(
        lambda xs: ops.sum(scan_steps(_step, ops.zeros((2, 3)), xs)[1]["h"]), xs
    )
    loop_loss, (looped_grad,) = value_and_grads(looped, xs)
    np.testing.assert_allclose(np_(scanned_loss), np_(loop_loss), rtol=1e-5)
    np.testing.assert_allclose(np_(scanned), np_(looped_grad), rtol=1e-5, atol=1e-6)

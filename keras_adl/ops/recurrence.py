"""A time loop for recurrent layers that compiles and differentiates on every backend.

On TensorFlow, ``keras.ops.scan`` runs a ``tf.while_loop`` without ``maximum_iterations`` and
requires per-step outputs shaped like the carry; XLA cannot differentiate such a loop ("XLA
compilation requires a fixed tensor list size"). There `scan_steps` runs its own
``tf.while_loop`` with ``TensorArray`` outputs, the one place a recurrent layer's loop touches
``tf`` (imported only on the TensorFlow backend, so that this module loads no TensorFlow
elsewhere). On JAX
and PyTorch it is ``keras.ops.scan`` (``jax.lax.scan``, and a Python loop on PyTorch).
"""

import keras

# TensorFlow only where it is the backend: importing this module on JAX or PyTorch loads none.
if keras.backend.backend() == "tensorflow":
    import tensorflow as tf


__all__ = ["scan_steps"]


def scan_steps(step_fn, initial_state, inputs):
    """Runs ``state, output = step_fn(state, x_t)`` over the time-major ``inputs``.

    Args:
        step_fn: ``(state, x_t) -> (new_state, output_t)``; ``state`` and ``output_t`` are
            nested structures of tensors, ``new_state`` matching ``state`` in structure, shape
            and dtype.
        initial_state: the initial nested state.
        inputs: time-major tensor ``[S, B, ...]`` with ``S ≥ 1``, or a nested structure of them.

    Returns:
        ``(final_state, outputs)`` with every leaf of ``outputs`` stacked time-major
        ``[S, B, ...]``.

    Example:

    >>> import keras
    >>> final, outputs = scan_steps(
    ...     lambda s, x: (s + x, 2 * s), keras.ops.zeros(()), keras.ops.ones((3,))
    ... )
    >>> float(final), keras.ops.convert_to_numpy(outputs).tolist()
    (3.0, [0.0, 2.0, 4.0])
    """
    if keras.backend.backend() == "tensorflow":
        return _tf_scan_steps(step_fn, initial_state, inputs)
    return keras.ops.scan(step_fn, initial_state, inputs)


def _tf_scan_steps(step_fn, initial_state, inputs):
    """`scan_steps` as a ``tf.while_loop`` with ``maximum_iterations`` set and ``TensorArray``
    outputs, the form XLA compiles and differentiates."""
    flat_inputs = tf.nest.flatten(inputs)
    steps = tf.shape(flat_inputs[0])[0]
    input_arrays = [
        tf.TensorArray(x.dtype, size=steps, element_shape=x.shape[1:]).unstack(x)
        for x in flat_inputs
    ]

    def read(t):
        return tf.nest.pack_sequence_as(inputs, [a.read(t) for a in input_arrays])

    # The first step runs outside the loop: its outputs give the output arrays their structure
    # and dtypes, and the loop continues from t = 1.
    state, first_output = step_fn(initial_state, tf.nest.map_structure(lambda x: x[0], inputs))
    state = tf.nest.map_structure(
        lambda new, old: tf.ensure_shape(new, old.shape), state, initial_state
    )
    output_arrays = [
        tf.TensorArray(o.dtype, size=steps, element_shape=o.shape).write(0, o)
        for o in tf.nest.flatten(first_output)
    ]

    def body(t, state, arrays):
        new_state, output = step_fn(state, read(t))
        arrays = [a.write(t, o) for a, o in zip(arrays, tf.nest.flatten(output))]
        new_state = tf.nest.map_structure(
            lambda new, old: tf.ensure_shape(new, old.shape), new_state, state
        )
        return t + 1, new_state, arrays

    _, final_state, output_arrays = tf.while_loop(
        lambda t, *_: t < steps,
        body,
        (tf.constant(1), state, output_arrays),
        maximum_iterations=steps - 1,
    )
    outputs = tf.nest.pack_sequence_as(first_output, [a.stack() for a in output_arrays])
    return final_state, outputs

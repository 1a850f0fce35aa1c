"""One harness every keras-adl layer test runs: `run_layer_test`.

It checks, for one layer configuration and one input:

1. config round trip: ``from_config(get_config())`` and the JSON form give the same config, and
   every ``__init__`` argument is in the config;
2. eager call: output shapes and dtypes as expected, values finite;
3. symbolic call in a functional model: same output shapes with an unknown batch;
4. gradients: every trainable weight gets a finite, non-zero gradient, and so do the inputs
   (through a trainable probe in front of each float input);
5. one ``fit`` step with ``jit_compile=True`` changes the layer's weights;
6. ``.keras`` save + load in the same process gives identical outputs, and a layer rebuilt
   from its config with the same weights gives identical outputs;
7. a ``mixed_float16`` copy of the layer with the same weights returns finite float16 outputs
   close to the float32 ones.
"""

import inspect
import json
import os
import tempfile

import keras
import numpy as np
import tensorflow as tf


def np_(x):
    """A tensor as a numpy array (shared by the tests)."""
    return keras.ops.convert_to_numpy(x)


def _as_dict(input_data):
    if isinstance(input_data, dict):
        return dict(input_data)
    return {"inputs": input_data}


def _call(layer, inputs, call_kwargs):
    if list(inputs) == ["inputs"]:
        return layer(inputs["inputs"], **call_kwargs)
    return layer(**inputs, **call_kwargs)


def _flat(outputs):
    return [o for o in keras.tree.flatten(outputs)]


def _check_shapes(outputs, expected, symbolic=False):
    flat = _flat(outputs)
    expected = expected if isinstance(expected, list) else [expected]
    assert len(flat) == len(expected), f"expected {len(expected)} outputs, got {len(flat)}"
    for out, shape in zip(flat, expected):
        got = tuple(out.shape)
        want = tuple(shape)
        if symbolic:
            want = (None,) + want[1:]
            got = (None,) + got[1:]
            assert len(got) == len(want), f"symbolic output rank {got} != {want}"
            for g, w in zip(got, want):
                assert g is None or g == w, f"symbolic output shape {got} != {want}"
        else:
            assert got == want, f"output shape {got} != expected {want}"


def _is_float(x):
    return keras.backend.is_float_dtype(keras.backend.standardize_dtype(x.dtype))


def _numpy(outputs):
    return [keras.ops.convert_to_numpy(o) for o in _flat(outputs)]


def run_layer_test(
    layer_cls,
    init_kwargs,
    input_data,
    expected_output_shape,
    call_kwargs=None,
    zero_gradient_weights=(),
    inputs_without_gradient=(),
    run_mixed_precision=True,
):
    """Runs the common checks on ``layer_cls(**init_kwargs)``.

    Args:
        layer_cls: the layer class.
        init_kwargs: constructor arguments.
        input_data: a numpy array (the single input) or a dict of call-argument name → array.
        expected_output_shape: a shape tuple, or a list of shapes for a flat list of outputs.
        call_kwargs: extra non-tensor call arguments (e.g. ``return_attention_scores=True``).
        zero_gradient_weights: names (substrings) of weights whose gradient is zero by the
            math (documented per test).
        inputs_without_gradient: names of float inputs the output does not depend on by
            design (e.g. ``"inputs"`` for an encoding that only reads the input's shape).
        run_mixed_precision: run the ``mixed_float16`` check.

    Returns:
        The eager outputs of the layer (for further assertions by the caller).
    """
    call_kwargs = dict(call_kwargs or {})
    inputs = {k: np.asarray(v) for k, v in _as_dict(input_data).items()}

    # 1. Config round trips.
    layer = layer_cls(**init_kwargs)
    config = layer.get_config()
    init_params = [
        p
        for p in inspect.signature(layer_cls.__init__).parameters.values()
        if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    for p in init_params:
        assert p.name in config, f"`{p.name}` missing from get_config()"
    assert layer_cls.from_config(config).get_config() == config
    serialized = json.loads(json.dumps(keras.saving.serialize_keras_object(layer)))
    assert keras.saving.deserialize_keras_object(serialized).get_config() == config

    # 2. Eager call.
    tensors = {k: tf.constant(v) for k, v in inputs.items()}
    outputs = _call(layer, tensors, call_kwargs)
    _check_shapes(outputs, expected_output_shape)
    for out in _flat(outputs):
        if _is_float(out):
            assert keras.backend.standardize_dtype(out.dtype) == layer.compute_dtype
            assert np.all(np.isfinite(keras.ops.convert_to_numpy(out))), "non-finite output"

    # 3. Symbolic call in a functional model, with a trainable probe on each float input.
    # Dynamic time/step dims (only the last, feature dim of float inputs is fixed), as in a
    # user's model over variable-length data; this is where shape-dependent ops break under XLA.
    def _dynamic_shape(v):
        if keras.backend.is_float_dtype(str(v.dtype)):
            return (None,) * (v.ndim - 2) + v.shape[-1:]
        return (None,) * (v.ndim - 1)

    symbolic = {
        k: keras.Input(shape=_dynamic_shape(v), dtype=str(v.dtype), name=k)
        for k, v in inputs.items()
    }
    probed = {}
    probes = []
    for k, x in symbolic.items():
        if _is_float(x) and k not in inputs_without_gradient:
            probe = keras.layers.Dense(x.shape[-1], name=f"probe_{k}")
            probes.append(probe)
            probed[k] = probe(x)
        else:
            probed[k] = x
    model_layer = layer_cls(**init_kwargs)
    sym_outputs = _call(model_layer, probed, call_kwargs)
    _check_shapes(sym_outputs, expected_output_shape, symbolic=True)
    model = keras.Model(symbolic, _flat(sym_outputs)[0])

    # 4. Gradients reach every weight of the layer and the inputs.
    feed = {k: tf.constant(v) for k, v in inputs.items()}
    with tf.GradientTape() as tape:
        out = model(feed, training=True)
        weights = tf.random.stateless_normal(tf.shape(out), seed=(1, 2), dtype=out.dtype)
        loss = tf.reduce_sum(tf.cast(out, "float32") * tf.cast(weights, "float32"))
    variables = model_layer.trainable_weights + [p.kernel for p in probes]
    grads = tape.gradient(loss, variables)
    for var, grad in zip(variables, grads):
        name = var.path
        if any(z in name for z in zero_gradient_weights):
            continue
        assert grad is not None, f"no gradient reaches {name}"
        grad = keras.ops.convert_to_numpy(grad)
        assert np.all(np.isfinite(grad)), f"non-finite gradient for {name}"
        assert np.any(grad != 0), f"zero gradient for {name}"

    # 5. One compiled fit step changes the layer's weights.
    before = _numpy(model_layer.trainable_weights)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse", jit_compile=True)
    target = np.asarray(model.predict(inputs, verbose=0)) + 1.0
    history = model.fit(inputs, target, epochs=1, batch_size=len(target), verbose=0)
    assert np.isfinite(history.history["loss"][0])
    after = _numpy(model_layer.trainable_weights)
    if before:
        assert any(np.any(a != b) for a, b in zip(after, before)), "fit changed no weight"

    # 6. .keras round trip and config + weights rebuild give identical outputs.
    expected = model.predict(inputs, verbose=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.keras")
        model.save(path)
        reloaded = keras.saving.load_model(path)
    np.testing.assert_allclose(reloaded.predict(inputs, verbose=0), expected, rtol=1e-6, atol=1e-6)
    rebuilt = layer_cls.from_config(layer.get_config())
    _call(rebuilt, tensors, call_kwargs)
    rebuilt.set_weights(layer.get_weights())
    for a, b in zip(_numpy(_call(rebuilt, tensors, call_kwargs)), _numpy(outputs)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)

    # 7. mixed_float16: float16 outputs, finite, and close to float32 with the same weights.
    if run_mixed_precision:
        mixed = layer_cls.from_config({**config, "dtype": "mixed_float16"})
        _call(mixed, tensors, call_kwargs)
        mixed.set_weights(layer.get_weights())
        mixed_outputs = _call(mixed, tensors, call_kwargs)
        for got, want in zip(_flat(mixed_outputs), _flat(outputs)):
            if _is_float(got):
                assert keras.backend.standardize_dtype(got.dtype) == "float16"
                got = keras.ops.convert_to_numpy(got).astype("float32")
                assert np.all(np.isfinite(got))
                np.testing.assert_allclose(got, keras.ops.convert_to_numpy(want), rtol=2e-2, atol=2e-2)
    return outputs

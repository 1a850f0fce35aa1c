"""One harness every keras-adl layer test runs: `run_layer_test`.

Every call (``full=False``, the cheap checks, for each configuration of a layer):

1. config round trip: ``from_config(get_config())`` and the JSON form give the same config, and
   every ``__init__`` argument is in the config;
2. eager call: output shapes and dtypes as expected, values finite, and the layer holds the
   expected number of trainable weights;
3. symbolic call in a functional model: same output shapes with an unknown batch and unknown
   time/step dimensions;
4. gradients, output by output: each float output reaches every trainable weight of the layer
   and every float input (through a trainable probe in front of it) with a finite, non-zero
   gradient, except the pairs declared in ``no_gradient``, which must get none.

``full=True`` adds the expensive checks; each layer's test file runs them exactly once (on its
richest configuration; ``tests/layers/test_harness_coverage.py`` counts):

5. one ``fit`` step with ``jit_compile=True`` on all outputs changes the layer's weights;
6. ``.keras`` save + load in the same process gives identical outputs, and a layer rebuilt
   from its config with the same weights gives identical outputs;
7. a ``mixed_float16`` copy of the layer with the same weights returns finite float16 outputs
   (float32 for those the layer keeps in float32 by design, ``float32_outputs``) close to the
   float32 ones, at inference;
8. with ``KERAS_ADL_CROSS_BACKEND_DIR`` set (``make test-backends``), the model of step 6, its
   inputs and outputs are written to ``<dir>/<backend>/<layer>.keras`` / ``.npz``, for
   ``tests/backends/test_cross_backend.py`` to load on the other backends.

The harness runs on every Keras backend (TensorFlow, JAX, PyTorch): tensors come from
``keras.ops``, gradients from the backend's own differentiation (`gradients`), and the fit
step compiles with XLA on TensorFlow and JAX (PyTorch runs it eagerly).
"""

import inspect
import json
import os
import tempfile

import keras
import numpy as np


def np_(x):
    """A tensor as a numpy array (shared by the tests)."""
    return keras.ops.convert_to_numpy(x)


def backend():
    return keras.backend.backend()


def force_blocked_attention(monkeypatch, query_block: int) -> None:
    """TensorFlow's blocked attention at every size, in blocks of ``query_block`` queries, so
    short test sequences take it (other backends are unaffected)."""
    from keras_adl.ops import _kernels

    monkeypatch.setattr(_kernels, "BLOCKED_MIN_SCORES", 1)
    monkeypatch.setattr(_kernels, "QUERY_BLOCK", query_block)


def float32_matmul_tolerance(exact: float) -> float:
    """``exact``, or TF32's tolerance where the backend's float32 matmuls default to TF32.

    JAX on a GPU multiplies float32 matrices in TF32 (a 10-bit mantissa) unless asked for full
    precision: sums of products of values ≤ 1 move by up to ~2e-4 (measured on an H200). The
    ops that resample images (`extract_glimpses`) are not asked for more: that is far below an
    8-bit image's step of 1/255.
    """
    if backend() == "jax":
        import jax

        if jax.default_backend() == "gpu":
            return max(exact, 1e-3)
    return exact


def value_and_grads(fn, *args):
    """``(fn(*args), [d fn / d arg, ...])`` for a scalar ``fn`` of NumPy arrays, on the active
    backend (each array becomes a tensor of its own dtype)."""
    tensors = [
        keras.ops.convert_to_tensor(np.asarray(a), dtype=np.asarray(a).dtype.name) for a in args
    ]
    if backend() == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape() as tape:
            tape.watch(tensors)
            value = fn(*tensors)
        return value, tape.gradient(value, tensors)
    if backend() == "jax":
        import jax

        value, grads = jax.value_and_grad(fn, argnums=tuple(range(len(tensors))))(*tensors)
        return value, list(grads)
    import torch

    tensors = [x.detach().requires_grad_(True) for x in tensors]
    value = fn(*tensors)
    return value, list(torch.autograd.grad(value, tensors, allow_unused=True))


def gradients(model, feed, losses_of, variables):
    """``[[d loss_i / d v for v in variables] for each loss]`` on the active backend, with
    ``losses_of(outputs) -> [scalar loss, ...]`` of ``model(feed, training=True)``; ``None``
    where a loss does not reach a variable (TensorFlow and PyTorch tell; JAX gives zeros)."""
    if backend() == "tensorflow":
        import tensorflow as tf

        with tf.GradientTape(persistent=True) as tape:
            losses = losses_of(model(feed, training=True))
        grads = [tape.gradient(loss, variables) for loss in losses]
        del tape
        return grads
    if backend() == "jax":
        import jax

        trainable = [v.value for v in model.trainable_variables]
        non_trainable = [v.value for v in model.non_trainable_variables]
        index = {id(v): i for i, v in enumerate(model.trainable_variables)}
        count = len(losses_of(model(feed, training=True)))

        def loss_i(values, i):
            outputs, _ = model.stateless_call(values, non_trainable, feed, training=True)
            return losses_of(outputs)[i]

        grads = [jax.grad(loss_i)(trainable, i) for i in range(count)]
        return [[g[index[id(v)]] for v in variables] for g in grads]
    import torch

    losses = losses_of(model(feed, training=True))
    grads = []
    for loss in losses:
        if not loss.requires_grad:  # an output nothing differentiable reaches
            grads.append([None] * len(variables))
            continue
        values = [v.value for v in variables]
        found = torch.autograd.grad(loss, values, retain_graph=True, allow_unused=True)
        grads.append(list(found))
    return grads


def _as_dict(input_data):
    if isinstance(input_data, dict):
        return dict(input_data)
    return {"inputs": input_data}


def _call(layer, inputs, call_kwargs):
    if list(inputs) == ["inputs"]:
        return layer(inputs["inputs"], **call_kwargs)
    return layer(**inputs, **call_kwargs)


def _flat(outputs):
    return list(keras.tree.flatten(outputs))


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


def _check_config(layer_cls, layer):
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
    return config


def _dynamic_shape(v):
    """Only the last, feature dim of float inputs is fixed, as in a user's model over
    variable-length data; this is where shape-dependent ops break under XLA."""
    if keras.backend.is_float_dtype(str(v.dtype)):
        return (None,) * (v.ndim - 2) + v.shape[-1:]
    return (None,) * (v.ndim - 1)


def _check_gradients(model, layer, probes, inputs, no_gradient):
    """Each float output of ``model`` against each trainable weight of ``layer`` and each
    probe (one per float input), on a random projection of the output."""
    targets = [(v.path, v) for v in layer.trainable_weights]
    targets += [(f"input:{name}", probe.kernel) for name, probe in probes.items()]
    known = {i for i, o in enumerate(model.outputs) if _is_float(o)}
    unknown = set(no_gradient) - known
    assert not unknown, f"`no_gradient` names outputs {sorted(unknown)}, not float outputs"
    feed = {k: keras.ops.convert_to_tensor(v) for k, v in inputs.items()}
    rng = np.random.default_rng(1)
    projections = {}

    def losses_of(outputs):
        flat = _flat(outputs)
        for i in known:
            if i not in projections:
                projections[i] = keras.ops.convert_to_tensor(
                    rng.standard_normal(tuple(flat[i].shape)).astype("float32")
                )
        return [
            keras.ops.sum(keras.ops.cast(flat[i], "float32") * projections[i])
            for i in sorted(known)
        ]

    all_grads = gradients(model, feed, losses_of, [v for _, v in targets])
    problems = []  # all of them at once: a layer's exceptions are read off one run
    for i, grads in zip(sorted(known), all_grads):
        excepted = tuple(no_gradient.get(i, ()))
        matched = set()
        for (name, _), grad in zip(targets, grads):
            hits = [
                e
                for e in excepted
                if e == "*" or (e == name if e.startswith("input:") else e in name)
            ]
            matched.update(hits)
            grad = None if grad is None else np_(grad)
            if hits:
                # A declared exception must be real: no gradient at all.
                if grad is not None and np.any(grad):
                    problems.append(f"output {i} → {name} has a gradient (declared none)")
            elif grad is None:
                problems.append(f"no gradient reaches output {i} → {name}")
            elif not np.all(np.isfinite(grad)):
                problems.append(f"non-finite gradient output {i} → {name}")
            elif not np.any(grad):
                problems.append(f"zero gradient output {i} → {name}")
        if matched != set(excepted):
            problems.append(
                f"`no_gradient` of output {i} matches nothing: {sorted(set(excepted) - matched)}"
            )
    assert not problems, "\n".join(problems)


def cross_backend_name(layer_cls, init_kwargs):
    """The public layer a harness run tests: the class, or the cell a test wrapper holds."""
    cell = init_kwargs.get("cell")
    return cell["class_name"] if isinstance(cell, dict) else layer_cls.__name__


def _save_for_other_backends(layer_cls, init_kwargs, model, inputs, outputs):
    folder = os.environ.get("KERAS_ADL_CROSS_BACKEND_DIR")
    if not folder:
        return
    folder = os.path.join(folder, backend())
    os.makedirs(folder, exist_ok=True)
    stem = os.path.join(folder, cross_backend_name(layer_cls, init_kwargs))
    model.save(stem + ".keras")
    np.savez(
        stem + ".npz",
        **{f"input:{k}": v for k, v in inputs.items()},
        **{f"output:{i}": np.asarray(o) for i, o in enumerate(outputs)},
    )


def run_layer_test(
    layer_cls,
    init_kwargs,
    input_data,
    expected_output_shape,
    *,
    expected_num_trainable_weights,
    full=False,
    call_kwargs=None,
    no_gradient=None,
    inputs_without_gradient=(),
    float32_outputs=(),
):
    """Runs the common checks on ``layer_cls(**init_kwargs)``.

    Args:
        layer_cls: the layer class.
        init_kwargs: constructor arguments.
        input_data: a numpy array (the single input) or a dict of call-argument name → array.
        expected_output_shape: a shape tuple, or a list of shapes for a flat list of outputs
            (a dict of outputs flattens in sorted key order).
        expected_num_trainable_weights: the number of trainable weights of the built layer.
        full: also run the expensive checks (XLA ``fit`` step, ``.keras`` round trip,
            ``mixed_float16``); once per layer.
        call_kwargs: extra non-tensor call arguments (e.g. ``return_attention_scores=True``).
        no_gradient: ``{output index: names}`` of what that float output does not depend on by
            the math: substrings of weight paths, ``"input:<name>"`` for an input, or ``"*"``
            for everything (e.g. sampled locations). Each entry must match something, and what
            it matches must get no gradient from that output.
        inputs_without_gradient: names of float inputs no output depends on by design (e.g.
            ``"inputs"`` for an encoding that only reads the input's shape); they get no probe.
        float32_outputs: indices of the float outputs that stay float32 under ``mixed_float16``
            by design (e.g. the REINFORCE terms of the glimpse policies); the others must be
            float16.

    Returns:
        The eager outputs of the layer (for further assertions by the caller).
    """
    call_kwargs = dict(call_kwargs or {})
    no_gradient = dict(no_gradient or {})
    inputs = {k: np.asarray(v) for k, v in _as_dict(input_data).items()}

    # 1. Config round trips.
    layer = layer_cls(**init_kwargs)
    config = _check_config(layer_cls, layer)

    # 2. Eager call.
    tensors = {k: keras.ops.convert_to_tensor(v) for k, v in inputs.items()}
    outputs = _call(layer, tensors, call_kwargs)
    _check_shapes(outputs, expected_output_shape)
    for out in _flat(outputs):
        if _is_float(out):
            assert keras.backend.standardize_dtype(out.dtype) == layer.compute_dtype
            assert np.all(np.isfinite(np_(out))), "non-finite output"
    assert len(layer.trainable_weights) == expected_num_trainable_weights, (
        f"{len(layer.trainable_weights)} trainable weights, expected "
        f"{expected_num_trainable_weights}: {[v.path for v in layer.trainable_weights]}"
    )

    # 3. Symbolic call in a functional model, with a trainable probe on each float input.
    symbolic = {
        k: keras.Input(shape=_dynamic_shape(v), dtype=str(v.dtype), name=k)
        for k, v in inputs.items()
    }
    probed, probes = {}, {}
    for k, x in symbolic.items():
        if _is_float(x) and k not in inputs_without_gradient:
            probes[k] = keras.layers.Dense(x.shape[-1], name=f"probe_{k}")
            probed[k] = probes[k](x)
        else:
            probed[k] = x
    model_layer = layer_cls(**init_kwargs)
    sym_outputs = _call(model_layer, probed, call_kwargs)
    _check_shapes(sym_outputs, expected_output_shape, symbolic=True)
    model = keras.Model(symbolic, _flat(sym_outputs))

    # 4. Gradients, output by output.
    _check_gradients(model, model_layer, probes, inputs, no_gradient)
    if not full:
        return outputs

    # 5. One compiled fit step changes the layer's weights.
    before = _numpy(model_layer.trainable_weights)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-2), loss="mse", jit_compile=backend() != "torch"
    )
    targets = [p + 1.0 for p in _flat(model.predict(inputs, verbose=0))]
    history = model.fit(inputs, targets, epochs=1, batch_size=len(targets[0]), verbose=0)
    assert np.isfinite(history.history["loss"][0])
    after = _numpy(model_layer.trainable_weights)
    if before:
        assert any(np.any(a != b) for a, b in zip(after, before)), "fit changed no weight"

    # 6. .keras round trip and config + weights rebuild give identical outputs.
    expected = _flat(model.predict(inputs, verbose=0))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "model.keras")
        model.save(path)
        reloaded = keras.saving.load_model(path)
    for got, want in zip(_flat(reloaded.predict(inputs, verbose=0)), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    _save_for_other_backends(layer_cls, init_kwargs, model, inputs, expected)
    rebuilt = layer_cls.from_config(layer.get_config())
    _call(rebuilt, tensors, call_kwargs)
    rebuilt.set_weights(layer.get_weights())
    for a, b in zip(_numpy(_call(rebuilt, tensors, call_kwargs)), _numpy(outputs)):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)

    # 7. mixed_float16: float16 outputs, finite, and close to float32 with the same weights.
    mixed = layer_cls.from_config({**config, "dtype": "mixed_float16"})
    _call(mixed, tensors, call_kwargs)
    mixed.set_weights(layer.get_weights())
    mixed_outputs = _call(mixed, tensors, call_kwargs)
    flat_outputs = _flat(outputs)
    assert all(_is_float(flat_outputs[i]) for i in float32_outputs), float32_outputs
    for index, (got, want) in enumerate(zip(_flat(mixed_outputs), flat_outputs)):
        if _is_float(got):
            dtype = "float32" if index in float32_outputs else "float16"
            assert keras.backend.standardize_dtype(got.dtype) == dtype, (index, got.dtype)
            got = np_(got).astype("float32")
            assert np.all(np.isfinite(got))
            np.testing.assert_allclose(got, np_(want), rtol=2e-2, atol=2e-2)
    return outputs

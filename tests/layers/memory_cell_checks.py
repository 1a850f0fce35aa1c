"""Checks shared by the NTM and DNC cell tests.

`CellSequence` wraps a cell in ``keras.layers.RNN`` so that the shared layer harness (which
tests one layer over a sequence) can run on a cell; the other helpers test the cell the way a
user holds it: inside ``keras.layers.RNN`` in a functional model.
"""

import copy
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from tests.harness import np_, run_layer_test


@keras.saving.register_keras_serializable(package="keras_adl_tests")
class CellSequence(keras.layers.Layer):
    """``RNN(cell, return_sequences=True)`` as one layer, the cell given by its serialized form."""

    def __init__(self, cell, **kwargs):
        super().__init__(**kwargs)
        self.cell = cell

    def build(self, inputs_shape):
        config = copy.deepcopy(self.cell)
        config["config"]["dtype"] = keras.saving.serialize_keras_object(self.dtype_policy)
        self.rnn = keras.layers.RNN(
            keras.saving.deserialize_keras_object(config),
            return_sequences=True,
            dtype=self.dtype_policy,
        )
        self.rnn.build(inputs_shape)

    def call(self, inputs):
        return self.rnn(inputs)

    def get_config(self):
        return {**super().get_config(), "cell": self.cell}


def run_cell_harness(cell, input_dim=5, steps=6, batch=3, **kwargs):
    """The shared layer harness on ``RNN(cell)`` (``kwargs`` go to `run_layer_test`, e.g.
    ``full`` and ``expected_num_trainable_weights``); returns the eager outputs."""
    x = np.random.default_rng(0).uniform(size=(batch, steps, input_dim)).astype("float32")
    return run_layer_test(
        CellSequence,
        {"cell": keras.saving.serialize_keras_object(cell)},
        x,
        (batch, steps, cell.output_size),
        **kwargs,
    )


def check_config_round_trip(cell_cls, kwargs):
    """Every ``__init__`` argument survives ``get_config``/``from_config``."""
    cell = cell_cls(**kwargs)
    config = cell.get_config()
    for key, value in kwargs.items():
        assert config[key] == value, f"{key}: {config[key]!r} != {value!r}"
    clone = cell_cls.from_config(config)
    assert clone.get_config() == config
    assert clone.state_size == cell.state_size and clone.output_size == cell.output_size


def user_model(cell, input_dim=5):
    """A user's functional model: ``Input → RNN(cell) → Dense``."""
    inputs = keras.Input((None, input_dim))
    hidden = keras.layers.RNN(cell, return_sequences=True)(inputs)
    return keras.Model(inputs, keras.layers.Dense(3)(hidden))


def check_keras_file_and_saved_model(cell, tmp_path, input_dim=5):
    """``.keras`` round trip and SavedModel export give the model's outputs."""
    model = user_model(cell, input_dim)
    x = np.random.default_rng(1).uniform(size=(2, 7, input_dim)).astype("float32")
    expected = np_(model(x))
    path = os.path.join(str(tmp_path), "model.keras")
    model.save(path)
    np.testing.assert_allclose(np_(keras.saving.load_model(path)(x)), expected, atol=1e-6)
    export_dir = os.path.join(str(tmp_path), "saved")
    model.export(export_dir, format="tf_saved_model", verbose=False)
    reloaded = tf.saved_model.load(export_dir)
    np.testing.assert_allclose(reloaded.serve(tf.constant(x)).numpy(), expected, atol=1e-5)
    # The export has a dynamic batch and time: a longer, larger batch runs too.
    longer = np.concatenate([x, x], axis=1)
    np.testing.assert_allclose(
        reloaded.serve(tf.constant(longer)).numpy(), np_(model(longer)), atol=1e-5
    )


def check_initial_state_without_build(cell_class, kwargs, input_dim=5):
    """An unbuilt cell's initial state equals the built cell's (constant memory), as an unbuilt
    `keras.layers.LSTMCell` answers; a learned memory, which only exists once built, is one
    clear error."""
    built = cell_class(**kwargs)
    built.build((None, input_dim))
    unbuilt = cell_class(**kwargs)
    got, expected = unbuilt.get_initial_state(batch_size=2), built.get_initial_state(batch_size=2)
    assert not unbuilt.built and len(got) == len(expected) == len(unbuilt.state_names)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(np_(a), np_(b))
    cell = cell_class(**kwargs, memory_init="learned")
    with pytest.raises(ValueError, match=r"get_initial_state needs the built cell with "):
        cell.get_initial_state(batch_size=2)
    # A Bidirectional copy of the cell builds; the user's own object still answers.
    user_cell = cell_class(**kwargs)
    layer = keras.layers.Bidirectional(keras.layers.RNN(user_cell))
    layer(np.zeros((2, 3, input_dim), "float32"))
    assert len(user_cell.get_initial_state(batch_size=4)) == len(expected)


def check_mirrored_fit_matches_one_device(make_cell, input_dim=5):
    """``fit`` under MirroredStrategy on two logical CPUs equals one device (jit off there)."""
    from tests.mirrored import assert_mirrored_fit_matches_one_device

    rng = np.random.default_rng(2)
    x = rng.uniform(size=(16, 6, input_dim)).astype("float32")
    y = rng.uniform(size=(16, 6, 3)).astype("float32")

    def build():
        model = user_model(make_cell(), input_dim)
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse", jit_compile=False)
        return model

    assert_mirrored_fit_matches_one_device(
        build, lambda m: m.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0)
    )


def check_masked_steps_keep_the_state(cell, input_dim=5):
    """With a Keras mask, padded steps leave the final state and earlier outputs unchanged."""
    rng = np.random.default_rng(3)
    x = rng.uniform(size=(2, 4, input_dim)).astype("float32") + 0.1
    padded = np.concatenate([x, np.zeros((2, 3, input_dim), "float32")], axis=1)
    rnn = keras.layers.RNN(cell, return_sequences=True, return_state=True)
    out, *states = rnn(x)
    masked = keras.layers.Masking(0.0)(padded)
    out_p, *states_p = rnn(masked)
    np.testing.assert_allclose(np_(out_p)[:, :4], np_(out), atol=1e-6)
    for a, b in zip(states_p, states):
        np.testing.assert_allclose(np_(a), np_(b), atol=1e-6)

"""A `.keras` file saved on one Keras backend loads on the others with equal outputs.

``make test-backends`` runs each layer's full harness on TensorFlow, JAX and PyTorch with
``KERAS_ADL_CROSS_BACKEND_DIR`` set; the harness writes the model it trained and saved, its
inputs and its outputs to ``<dir>/<backend>/<layer>.keras`` / ``.npz``. A second pass on each
backend runs these tests: every layer's file from each other backend loads and predicts what
it predicted where it was saved.
"""

import os

import keras
import numpy as np
import pytest

import keras_adl
import tests.layers.memory_cell_checks  # noqa: F401  (registers CellSequence, the cells' wrapper)
from tests.harness import np_

BACKENDS = ("tensorflow", "jax", "torch")
OTHERS = [b for b in BACKENDS if b != keras.backend.backend()]

pytestmark = [pytest.mark.portable, pytest.mark.cross_backend]


@pytest.mark.parametrize("saved_on", OTHERS)
@pytest.mark.parametrize("layer", sorted(keras_adl.layers.__all__))
def test_keras_file_saved_on_another_backend_loads_with_equal_outputs(layer, saved_on):
    stem = os.path.join(os.environ["KERAS_ADL_CROSS_BACKEND_DIR"], saved_on, layer)
    assert os.path.exists(stem + ".keras"), f"the {saved_on} run wrote no {stem}.keras"
    saved = np.load(stem + ".npz")
    inputs = {k.split(":", 1)[1]: saved[k] for k in saved.files if k.startswith("input:")}
    expected = [saved[f"output:{i}"] for i in range(len(saved.files) - len(inputs))]
    model = keras.saving.load_model(stem + ".keras")
    got = keras.tree.flatten(model.predict(inputs, verbose=0))
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(np_(g), e, rtol=1e-4, atol=1e-5)

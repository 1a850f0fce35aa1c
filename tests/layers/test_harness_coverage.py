"""Every public layer's test file runs the full harness exactly once and pins its weight
count; and the harness's gradient checks catch what they are meant to catch."""

import ast
import pathlib
import re

import keras
import numpy as np
import pytest

import keras_adl.layers
from tests.harness import run_layer_test

HERE = pathlib.Path(__file__).parent
HARNESS_CALLS = {"run_layer_test", "run_cell_harness"}


def _snake(name):
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _harness_calls(path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            if name in HARNESS_CALLS:
                yield {k.arg: k.value for k in node.keywords}


@pytest.mark.parametrize("layer", sorted(keras_adl.layers.__all__))
def test_layer_file_runs_the_full_harness_once(layer):
    module = getattr(keras_adl.layers, layer).__module__.rsplit(".", 1)[1]
    assert module in (_snake(layer), _snake(layer).replace("el_mo", "elmo")), module
    path = HERE / f"test_{module}.py"
    assert path.exists(), f"{layer} has no test file {path.name}"
    calls = list(_harness_calls(path))
    full = [c for c in calls if isinstance(c.get("full"), ast.Constant) and c["full"].value is True]
    assert len(full) == 1, f"{path.name}: {len(full)} harness calls with full=True, expected 1"
    for call in calls:
        assert "full" not in call or isinstance(call["full"], ast.Constant), (
            f"{path.name}: pass `full` as a literal"
        )
        count = call.get("expected_num_trainable_weights")
        assert isinstance(count, ast.Constant) and count.value >= 0, (
            f"{path.name}: pin `expected_num_trainable_weights` to a literal count"
        )


@keras.saving.register_keras_serializable(package="keras_adl_tests")
class TwoOutputs(keras.layers.Layer):
    """``[x·a + b, x·a]``: the second output does not depend on ``b``."""

    def build(self, input_shape):
        self.a = self.add_weight(shape=input_shape[-1:], initializer="random_normal", name="a")
        self.b = self.add_weight(shape=input_shape[-1:], initializer="random_normal", name="b")

    def call(self, x):
        return [x * self.a + self.b, x * self.a]


X = np.random.default_rng(0).normal(size=(2, 3, 4)).astype("float32")


def test_harness_checks_every_output_and_the_declared_exceptions():
    shapes = [(2, 3, 4), (2, 3, 4)]
    run_layer_test(
        TwoOutputs, {}, X, shapes, expected_num_trainable_weights=2, no_gradient={1: ("/b",)}
    )
    with pytest.raises(AssertionError, match=r"no gradient reaches output 1 → two_outputs_\d+/b"):
        run_layer_test(TwoOutputs, {}, X, shapes, expected_num_trainable_weights=2)
    with pytest.raises(AssertionError, match=r"output 0 → two_outputs_\d+/b has a gradient"):
        run_layer_test(
            TwoOutputs,
            {},
            X,
            shapes,
            expected_num_trainable_weights=2,
            no_gradient={0: ("/b",), 1: ("/b",)},
        )
    with pytest.raises(
        AssertionError, match=r"`no_gradient` of output 1 matches nothing: \['/c'\]"
    ):
        run_layer_test(
            TwoOutputs,
            {},
            X,
            shapes,
            expected_num_trainable_weights=2,
            no_gradient={1: ("/b", "/c")},
        )
    with pytest.raises(AssertionError, match="2 trainable weights, expected 3"):
        run_layer_test(TwoOutputs, {}, X, shapes, expected_num_trainable_weights=3)

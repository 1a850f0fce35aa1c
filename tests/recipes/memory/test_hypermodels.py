"""The memory family's HyperModel: a top-level class of ``hypermodels.py`` whose defaults are
the task's preset."""

import keras
import keras_tuner
import pytest

from keras_adl.recipes.memory import hypermodels, spec
from keras_adl.recipes.memory.hypermodels import MemorySequenceHyperModel
from keras_adl.recipes.memory.tasks import RECIPES


def test_the_hypermodel_is_a_top_level_class_of_hypermodels_py():
    assert issubclass(MemorySequenceHyperModel, keras_tuner.HyperModel)
    assert MemorySequenceHyperModel.__module__ == hypermodels.__name__
    assert MemorySequenceHyperModel.__qualname__ == "MemorySequenceHyperModel"
    assert hypermodels.MemorySequenceHyperModel is MemorySequenceHyperModel


def test_memory_hypermodel_builds_each_cell_with_its_own_hyperparameters():
    for cell, names in [
        (None, {"cell", "controller_units", "memory_size", "memory_width"}),
        ("lstm", {"lstm_units", "lstm_layers"}),
    ]:
        hp = keras_tuner.HyperParameters()
        model = MemorySequenceHyperModel(9, 8, cell=cell, jit_compile=False).build(hp)
        assert names | {"learning_rate"} == set(hp.values)
        assert model.output.shape[-1] == 8
        assert model.name == ("ntm" if cell is None else cell) + "_sequence_model"
        assert isinstance(model.optimizer, keras.optimizers.Adam)  # the family's default
    # with a task, the recipe's optimiser and rate for it are the defaults (what tune passes)
    hp = keras_tuner.HyperParameters()
    model = MemorySequenceHyperModel(
        9, 8, cell="ntm", jit_compile=False, task="associative_recall"
    ).build(hp)
    assert isinstance(model.optimizer, keras.optimizers.RMSprop)
    assert hp.values["learning_rate"] == pytest.approx(1e-4)
    space = {entry["config"]["name"]: entry["config"] for entry in hp.get_config()["space"]}
    assert (space["learning_rate"]["min_value"], space["learning_rate"]["max_value"]) == (
        pytest.approx(1e-5),
        pytest.approx(1e-3),
    )  # around RMSProp's 1e-4, not Adam's range
    hypermodel = RECIPES["associative_recall"].hypermodel("dnc")
    assert hypermodel.task == "associative_recall"


def test_memory_hypermodel_keeps_the_recipes_unsearched_settings(monkeypatch):
    def cell_of(model):
        return next(layer.cell for layer in model.layers if hasattr(layer, "cell"))

    def build(task):
        return MemorySequenceHyperModel(9, 8, cell="dnc", jit_compile=False, task=task).build(
            keras_tuner.HyperParameters()
        )

    assert cell_of(build("copy")).num_read_heads == 1  # the DNC's preset on copy
    assert cell_of(build("associative_recall")).num_read_heads == 4
    # the DNC's settings changed: its defaults and its preset on associative recall
    dnc = dict(spec.DNC, sparse_links=4, stop_usage_gradient=False)
    monkeypatch.setitem(spec.MODEL_DEFAULTS, "dnc", dnc)
    monkeypatch.setitem(spec.ASSOCIATIVE_RECALL_PRESETS, "dnc", dnc)
    cell = cell_of(build("associative_recall"))
    assert (cell.sparse_links, cell.stop_usage_gradient) == (4, False)
    # the memory sizes searched hold the sparse link's K entries per row
    monkeypatch.setitem(spec.MODEL_DEFAULTS, "dnc", dict(dnc, sparse_links=32))
    hp = keras_tuner.HyperParameters()
    MemorySequenceHyperModel(9, 8, cell="dnc", jit_compile=False).build(hp)
    space = {entry["config"]["name"]: entry["config"] for entry in hp.get_config()["space"]}
    assert space["memory_size"]["values"] == [32, 64, 128]

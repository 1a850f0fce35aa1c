"""The sequences family's tasks: one preset per (task, model), and the models they build."""

import pytest

from keras_adl.recipes import recipe_for
from keras_adl.recipes.sequences import spec
from keras_adl.recipes.sequences.tasks import RECIPES, DatesTask, PairsTask, SortTask


def test_every_task_has_a_recipe_and_every_model_a_preset():
    assert set(RECIPES) == {task.name for task in spec.FAMILY.tasks}
    assert spec.FAMILY.evaluate_tasks == ("pairs",)
    for task in spec.FAMILY.tasks:
        assert recipe_for(task.name) is RECIPES[task.name]
        assert RECIPES[task.name].spec is task
        assert set(task.presets) == set(task.models)
        for model in task.models:
            assert "learning_rate" in task.preset(model)
    assert isinstance(RECIPES["dates"], DatesTask) and isinstance(RECIPES["sort"], SortTask)
    assert isinstance(RECIPES["pairs"], PairsTask)


def test_presets_are_the_builders_settings():
    assert spec.DATES.preset("attention_seq2seq") == dict(
        embedding_dim=32, units=64, learning_rate=3e-3
    )
    assert spec.DATES.preset("transformer_seq2seq") == dict(
        model_dim=64, num_heads=4, intermediate_dim=128, num_layers=2, learning_rate=1e-3
    )
    assert list(spec.PAIRS.preset("transformer_seq2seq")) == [
        "model_dim",
        "num_heads",
        "intermediate_dim",
        "num_layers",
        "dropout",
        "learning_rate",
    ]  # the order run.json records them in
    assert spec.PAIRS.preset("transformer_seq2seq")["dropout"] == 0.1
    assert spec.PAIRS.preset("encoder_decoder") == dict(
        embedding_dim=64, units=128, learning_rate=3e-3
    )
    assert spec.SORT.preset("pointer_network") == dict(units=128, learning_rate=2e-3)
    preset = spec.SORT.preset("pointer_network")
    preset["units"] = 1  # a copy
    assert spec.SORT.preset("pointer_network")["units"] == 128


def test_the_tasks_build_their_models_with_their_presets():
    dates = RECIPES["dates"].build_model("transformer_seq2seq", jit_compile=False)
    assert dates.name == "transformer_seq2seq"
    assert float(dates.optimizer.learning_rate) == pytest.approx(1e-3)
    pairs = RECIPES["pairs"].build_model("attention_seq2seq", 40, 30, units=16)
    assert pairs.output.shape[-1] == 30
    assert float(pairs.optimizer.learning_rate) == pytest.approx(3e-3)
    sort = RECIPES["sort"].build_model("pointer_network")
    assert sort.name == "pointer_network" and sort.jit_compile

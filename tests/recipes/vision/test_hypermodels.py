"""The vision family's HyperModels: plain top-level classes of its ``hypermodels.py``, each
building its search space with the family's presets as defaults."""

import keras_tuner
import pytest

from keras_adl.recipes.vision import hypermodels
from keras_adl.recipes.vision.hypermodels import (
    DeepRecurrentAttentionHyperModel,
    RecurrentAttentionHyperModel,
    ShowAttendTellHyperModel,
    WholeImageHyperModel,
)
from keras_adl.recipes.vision.tasks import RECIPES


def test_hypermodels_are_top_level_classes_of_the_familys_module():
    for cls in (
        RecurrentAttentionHyperModel,
        WholeImageHyperModel,
        DeepRecurrentAttentionHyperModel,
        ShowAttendTellHyperModel,
    ):
        assert issubclass(cls, keras_tuner.HyperModel)
        assert cls.__module__ == hypermodels.__name__ and "." not in cls.__qualname__
        assert getattr(hypermodels, cls.__name__) is cls


def test_visual_hypermodels_build_with_their_search_spaces():
    hp = keras_tuner.HyperParameters()
    hp.Fixed("num_scales", 2)
    model = RecurrentAttentionHyperModel(
        (32, 32, 1), 10, num_glimpses=3, policy="random", jit_compile=False
    ).build(hp)
    assert {"units", "patch_size", "num_scales", "location_std", "learning_rate"} == set(hp.values)
    layer = model.get_layer("recurrent_attention")
    assert (layer.num_scales, layer.num_glimpses, layer.policy) == (2, 3, "random")
    assert model.optimizer is not None
    hp = keras_tuner.HyperParameters()
    model = ShowAttendTellHyperModel(13, (16, 48, 1), regularization=0.5, jit_compile=False).build(
        hp
    )
    assert {"units", "embedding_dim", "learning_rate"} == set(hp.values)  # λ is not searched
    assert model.get_layer("doubly_stochastic").strength == 0.5
    assert model.get_layer("encoder").output.shape[1] == 12  # (8, 16, 32): a 2×6 grid


def test_dram_hypermodel_builds_its_search_space():
    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", 64)
    hp.Fixed("glimpses_per_symbol", 3)
    model = RECIPES["digit_strips_glimpses"].hypermodel("dram_random", 16).build(hp)
    assert {"units", "glimpses_per_symbol", "location_std", "learning_rate"} == set(hp.values)
    layer = model.get_layer("deep_recurrent_attention")
    assert (layer.units, layer.glimpse_output_units, layer.glimpse_units) == (64, 64, 32)
    assert (layer.num_symbols, layer.glimpses_per_symbol, layer.policy) == (4, 3, "random")
    assert layer.context_size == (4, 12) and model.input.shape == (None, 16, 48, 1)
    assert model.ignore_class == 0 and model.optimizer is not None
    assert layer.glimpse_filters == ()
    # 28-pixel items: the recipe's 16×16 patch and convolutional glimpse network
    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", 64)
    model = RECIPES["digit_strips_glimpses"].hypermodel("dram", 28).build(hp)
    layer = model.get_layer("deep_recurrent_attention")
    assert (layer.patch_size, layer.glimpse_filters) == (16, (16, 32))
    assert layer.context_size == (7, 21) and model.input.shape == (None, 28, 84, 1)


def test_whole_image_hypermodels_search_their_sizes():
    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", 128)
    hp.Fixed("num_layers", 3)
    model = WholeImageHyperModel("mlp", (32, 32, 1), jit_compile=False).build(hp)
    assert {"units", "num_layers", "learning_rate"} == set(hp.values)
    assert [model.get_layer(f"hidden_{i}").units for i in (1, 2, 3)] == [128, 128, 128]
    hp = keras_tuner.HyperParameters()
    model = RECIPES["cluttered_digits"].hypermodel("convnet", 28).build(hp)
    assert {"units", "filters", "learning_rate"} == set(hp.values)
    assert model.input.shape == (None, 60, 60, 1) and model.get_layer("conv").filters == 8
    assert model.optimizer is not None
    with pytest.raises(ValueError, match=r"`model_name` must be one of \['convnet', 'mlp'\]"):
        WholeImageHyperModel("resnet", (32, 32, 1))

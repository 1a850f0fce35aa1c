import keras_tuner
import numpy as np
import pytest

from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB, date_arrays
from keras_adl.data.sorting import sort_arrays
from keras_adl.recipes.sequences import (
    PointerNetworkHyperModel,
    Seq2SeqHyperModel,
    TransformerClassifierHyperModel,
    TransformerSeq2SeqHyperModel,
)


def _dates(num, seed):
    data = date_arrays(num, seed=seed)
    return {"source": data["source"], "decoder_input": data["decoder_input"]}, data["target"]


@pytest.mark.slow  # ~60 s; the slow CLI tests run `tune` end to end for every family
def test_random_search_two_short_trials(tmp_path):
    x, y = _dates(128, 0)
    validation = _dates(64, 1)
    tuner = keras_tuner.RandomSearch(
        Seq2SeqHyperModel(len(SOURCE_VOCAB), len(TARGET_VOCAB)),
        objective="val_loss",
        max_trials=2,
        seed=3,
        directory=str(tmp_path),
        project_name="dates",
    )
    tuner.search(x, y, validation_data=validation, epochs=1, batch_size=64, verbose=0)
    trials = tuner.oracle.get_best_trials(2)
    assert len(trials) == 2
    assert all(t.status == "COMPLETED" and np.isfinite(t.score) for t in trials)
    best = tuner.get_best_models(1)[0]
    assert best.output.shape[-1] == len(TARGET_VOCAB)


def test_conditional_scope_hides_attention_kind_without_attention():
    hypermodel = Seq2SeqHyperModel(len(SOURCE_VOCAB), len(TARGET_VOCAB))
    hp = keras_tuner.HyperParameters()
    hp.Fixed("model", "no_attention")
    model = hypermodel.build(hp)
    assert model.name == "encoder_decoder"
    assert not hp.is_active("attention")
    hp = keras_tuner.HyperParameters()
    hp.Fixed("model", "attention")
    hp.Fixed("attention", "luong")
    model = hypermodel.build(hp)
    assert model.name == "attention_seq2seq" and hp.is_active("attention")
    assert model.get_layer("decoder").attention == "luong"


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
@pytest.mark.parametrize(
    "hypermodel, data",
    [
        pytest.param(  # ~12 s of XLA compiling: run by make test-slow
            TransformerSeq2SeqHyperModel(len(SOURCE_VOCAB), len(TARGET_VOCAB)),
            _dates(64, 2),
            marks=pytest.mark.slow,
        ),
        (PointerNetworkHyperModel(), None),
        (
            TransformerClassifierHyperModel(20, 3),
            (np.random.RandomState(0).randint(1, 20, (32, 7)), np.arange(32) % 3),
        ),
    ],
)
def test_other_hypermodels_build_and_fit(hypermodel, data):
    hp = keras_tuner.HyperParameters()
    model = hypermodel.build(hp)
    if data is None:
        sorting = sort_arrays(64, length=5)
        data = (
            {"inputs": sorting["inputs"], "decoder_input": sorting["decoder_input"]},
            sorting["target"],
        )
    history = model.fit(*data, epochs=1, batch_size=32, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert len(hp.values) >= 2


def test_visual_hypermodels_build_with_their_search_spaces():
    from keras_adl.recipes.vision import RecurrentAttentionHyperModel, ShowAttendTellHyperModel

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
    from keras_adl.recipes.vision import RECIPE

    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", 64)
    hp.Fixed("glimpses_per_symbol", 3)
    model = RECIPE.hypermodel("digit_strips_glimpses", "dram_random", 16).build(hp)
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
    model = RECIPE.hypermodel("digit_strips_glimpses", "dram", 28).build(hp)
    layer = model.get_layer("deep_recurrent_attention")
    assert (layer.patch_size, layer.glimpse_filters) == (16, (16, 32))
    assert layer.context_size == (7, 21) and model.input.shape == (None, 28, 84, 1)


def test_whole_image_hypermodels_search_their_sizes():
    from keras_adl.recipes.vision import RECIPE, WholeImageHyperModel

    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", 128)
    hp.Fixed("num_layers", 3)
    model = WholeImageHyperModel("mlp", (32, 32, 1), jit_compile=False).build(hp)
    assert {"units", "num_layers", "learning_rate"} == set(hp.values)
    assert [model.get_layer(f"hidden_{i}").units for i in (1, 2, 3)] == [128, 128, 128]
    hp = keras_tuner.HyperParameters()
    model = RECIPE.hypermodel("cluttered_digits", "convnet", 28).build(hp)
    assert {"units", "filters", "learning_rate"} == set(hp.values)
    assert model.input.shape == (None, 60, 60, 1) and model.get_layer("conv").filters == 8
    assert model.optimizer is not None
    with pytest.raises(ValueError, match=r"`model_name` must be one of \['convnet', 'mlp'\]"):
        WholeImageHyperModel("resnet", (32, 32, 1))

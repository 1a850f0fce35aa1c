"""The sequences family's HyperModels: top-level classes of `hypermodels`, their search spaces,
and a short random search."""

import keras_tuner
import numpy as np
import pytest

from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB, date_arrays
from keras_adl.data.sorting import sort_arrays
from keras_adl.recipes.sequences import hypermodels
from keras_adl.recipes.sequences.hypermodels import (
    PointerNetworkHyperModel,
    Seq2SeqHyperModel,
    TransformerClassifierHyperModel,
    TransformerSeq2SeqHyperModel,
)
from keras_adl.recipes.sequences.tasks import RECIPES


def _dates(num, seed):
    data = date_arrays(num, seed=seed)
    return {"source": data["source"], "decoder_input": data["decoder_input"]}, data["target"]


def test_hypermodels_are_top_level_classes_of_the_hypermodels_module():
    for name in (
        "Seq2SeqHyperModel",
        "TransformerSeq2SeqHyperModel",
        "PointerNetworkHyperModel",
        "TransformerClassifierHyperModel",
    ):
        cls = getattr(hypermodels, name)
        assert issubclass(cls, keras_tuner.HyperModel)
        assert cls.__module__ == hypermodels.__name__ and cls.__qualname__ == name
        assert name in dir(hypermodels)


def test_each_task_and_model_tunes_its_hypermodel():
    assert isinstance(RECIPES["dates"].hypermodel("attention_seq2seq"), Seq2SeqHyperModel)
    assert isinstance(RECIPES["dates"].hypermodel("encoder_decoder"), Seq2SeqHyperModel)
    transformer = RECIPES["dates"].hypermodel("transformer_seq2seq")
    assert isinstance(transformer, TransformerSeq2SeqHyperModel)
    assert (transformer.source_vocab_size, transformer.target_vocab_size) == (
        len(SOURCE_VOCAB),
        len(TARGET_VOCAB),
    )
    assert isinstance(RECIPES["sort"].hypermodel("pointer_network"), PointerNetworkHyperModel)


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

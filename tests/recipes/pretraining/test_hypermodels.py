"""`PretrainingHyperModel`: the Transformer's size and schedule, or the schedule alone on a
pretrained start."""

import keras_tuner

from keras_adl.recipes.pretraining import hypermodels
from keras_adl.recipes.pretraining.hypermodels import PretrainingHyperModel


def test_the_hypermodel_is_a_top_level_class_of_hypermodels():
    assert issubclass(PretrainingHyperModel, keras_tuner.HyperModel)
    assert PretrainingHyperModel.__module__ == hypermodels.__name__
    assert PretrainingHyperModel.__qualname__ == "PretrainingHyperModel"


def test_pretraining_hypermodel_searches_sizes_and_schedule_or_only_the_schedule():
    from keras_adl.models.gpt import gpt_lm

    hp = keras_tuner.HyperParameters()
    hp.Fixed("model_dim", 64)
    hp.Fixed("num_layers", 1)
    hp.Fixed("warmup_fraction", 0.2)
    hp.Fixed("learning_rate", 2e-3)
    model = PretrainingHyperModel("pretrain_mlm", "bert", 50, total_steps=100).build(hp)
    assert {"model_dim", "num_layers", "num_heads", "dropout"} | {
        "learning_rate",
        "warmup_fraction",
    } == set(hp.values)
    assert model.get_layer("encoder_0").intermediate_dim == 256  # 4 × model_dim
    assert not any(layer.name == "encoder_1" for layer in model.layers)
    schedule = model.optimizer.get_config()["learning_rate"]["config"]
    assert (schedule["initial_learning_rate"], schedule["warmup_target"]) == (0.0, 2e-3)
    assert schedule["warmup_steps"] == 20 and schedule["decay_steps"] == 80
    # Fine-tuning a pretrained GPT: its sizes are fixed, the schedule and λ are searched.
    lm = gpt_lm(50, sequence_length=16, model_dim=32, num_heads=2, intermediate_dim=64)
    hp = keras_tuner.HyperParameters()
    model = PretrainingHyperModel(
        "finetune", "gpt", 50, total_steps=10, num_classes=4, pretrained=lambda: lm
    ).build(hp)
    assert set(hp.values) == {"learning_rate", "warmup_fraction", "lm_loss_weight"}
    assert model.output["classes"].shape[-1] == 4 and model.get_layer("embedding") is lm.get_layer(
        "embedding"
    )

"""The contextual family's HyperModel: a top-level class of ``hypermodels.py`` building the
task's classifier with searched sizes."""

import keras_tuner
import numpy as np

from keras_adl.recipes.contextual import hypermodels
from keras_adl.recipes.contextual.hypermodels import ContextualClassifierHyperModel


def test_the_hypermodel_is_a_top_level_class_of_hypermodels():
    cls = hypermodels.ContextualClassifierHyperModel
    assert issubclass(cls, keras_tuner.HyperModel)
    assert cls.__module__ == hypermodels.__name__
    assert cls.__qualname__ == "ContextualClassifierHyperModel"


def test_hypermodel_builds_the_recipes_classifier_with_searched_sizes():
    sources = {"words": ["a", "b"], "vectors": np.eye(6, 4, dtype="float32")}
    hypermodel = ContextualClassifierHyperModel("static", sources, 3)
    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", 32)
    model = hypermodel.build(hp)
    assert model.get_layer("encoder").forward_layer.units == 32
    assert model.output.shape[-1] == 3
    assert not model.get_layer("word_vectors").trainable
    assert len(model.trainable_weights) == 8  # two GRUs (3 each) and the logits

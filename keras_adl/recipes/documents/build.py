"""The one place the documents family's models are built and compiled."""

import keras

from keras_adl.models.han import han_classifier
from keras_adl.recipes._compile import compile_for_training, override


def build_model(preset, vocab_size, num_classes, shape, jit_compile=True, **overrides):
    """The compiled `han_classifier` of a (task, model) ``preset`` (`spec.PRESETS`), reading
    documents of ``shape`` ``(S, W)`` over ``vocab_size`` ids into ``num_classes`` classes;
    ``overrides`` replace preset values (only existing ones)."""
    settings = override(dict(preset), overrides)
    learning_rate = settings.pop("learning_rate")
    model = han_classifier(vocab_size, num_classes, *shape, **settings)
    return compile_han(model, learning_rate, jit_compile)


def compile_han(model, learning_rate, jit_compile=True):
    """Compiles a `han_classifier` with the library's recipe (Adam, global clip 5) on its
    logits."""
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return compile_for_training(model, loss, learning_rate, jit_compile)

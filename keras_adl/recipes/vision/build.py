"""The one place the vision family's models are built and compiled: the RAM and the DRAM
(trained by their own hybrid REINFORCE rule: Adam, no clipping), the whole-image baselines
(compiled as the RAM is) and Show, Attend and Tell (the library's recipe)."""

import keras

from keras_adl.conventions import PAD
from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE
from keras_adl.models.baselines import whole_image_convnet, whole_image_mlp
from keras_adl.models.captioning import show_attend_tell
from keras_adl.models.dram import deep_recurrent_attention_model
from keras_adl.models.ram import recurrent_attention_model
from keras_adl.recipes._compile import compile_for_training, cosine_decay
from keras_adl.recipes.vision.spec import CAPTION_LENGTH, NUM_CLASSES

# The builders of the whole-image baselines, by model name.
WHOLE_IMAGE_BUILDERS = {"mlp": whole_image_mlp, "convnet": whole_image_convnet}


def learning_rate(settings, total_steps):
    """Pops ``learning_rate`` and ``learning_rate_decay`` from ``settings``: the rate, or with
    ``learning_rate_decay="cosine"`` the rate decaying along a cosine over ``total_steps``
    optimizer steps.

    Raises:
        ValueError: a decay other than ``"cosine"`` or ``None``.
    """
    rate = settings.pop("learning_rate")
    decay = settings.pop("learning_rate_decay", None)
    if decay not in (None, "cosine"):
        raise ValueError(f"`learning_rate_decay` must be 'cosine' or None; received {decay!r}.")
    if decay == "cosine":
        rate = cosine_decay(rate, total_steps)
    return rate


def compile_reinforce(model, learning_rate, jit_compile=True):
    """Compiles a RAM or DRAM, whose own ``train_step`` brings its losses: Adam, no clipping."""
    model.compile(optimizer=keras.optimizers.Adam(learning_rate), jit_compile=jit_compile)
    return model


def build_ram(image_shape, learning_rate, jit_compile=True, num_classes=NUM_CLASSES, **settings):
    """The compiled `recurrent_attention_model` of ``settings`` classifying the digits."""
    model = recurrent_attention_model(tuple(image_shape), num_classes, **settings)
    return compile_reinforce(model, learning_rate, jit_compile)


def compile_baseline(model_name, image_shape, learning_rate, jit_compile=True, **settings):
    """A whole-image baseline (``"mlp"`` or ``"convnet"``, `keras_adl.models.baselines`) of
    10 classes, compiled as the RAM is (Adam, no clipping) with sparse cross-entropy and
    accuracy; ``settings`` are the builder's."""
    model = WHOLE_IMAGE_BUILDERS[model_name](tuple(image_shape), NUM_CLASSES, **settings)
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(),
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    return model


def build_dram(image_shape, learning_rate, jit_compile=True, **settings):
    """The compiled `deep_recurrent_attention_model` of ``settings`` reading strips of
    `CAPTION_LENGTH` digits and END (``PAD`` ignored)."""
    model = deep_recurrent_attention_model(
        tuple(image_shape),
        CAPTION_VOCAB_SIZE,
        num_symbols=CAPTION_LENGTH + 1,
        ignore_class=PAD,
        **settings,
    )
    return compile_reinforce(model, learning_rate, jit_compile)


def compile_captioner(model, learning_rate, jit_compile=True):
    """Compiles a `show_attend_tell` with the library's recipe on its logits, ``PAD``
    ignored."""
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=PAD)
    return compile_for_training(model, loss, learning_rate, jit_compile)


def build_captioner(image_shape, learning_rate, jit_compile=True, **settings):
    """The compiled `show_attend_tell` of ``settings`` captioning digit strips."""
    model = show_attend_tell(CAPTION_VOCAB_SIZE, image_shape=tuple(image_shape), **settings)
    return compile_captioner(model, learning_rate, jit_compile)

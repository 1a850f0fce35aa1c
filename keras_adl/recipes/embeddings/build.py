"""The one place the embeddings family's models are built and compiled."""

import keras

from keras_adl.models.word2vec import skipgram_negative_sampling, word2vec_optimizer
from keras_adl.recipes._compile import override
from keras_adl.recipes.embeddings.spec import (
    BATCH_SIZE,
    FINAL_LEARNING_RATE,
    STEPS_PER_EXECUTION,
)


def build_model(
    preset,
    vocab_size,
    cbow=False,
    jit_compile=True,
    batch_size=BATCH_SIZE,
    total_steps=None,
    **overrides,
):
    """The compiled word2vec model (`skipgram_negative_sampling`) of a (task, model) ``preset``
    (`spec.PRESETS`).

    Args:
        preset: the settings (``dim``, ``window``, ``negatives``, ``optimizer``,
            ``learning_rate``, …).
        vocab_size: `WordVocabulary.size`.
        cbow: the CBOW model instead of skip-gram (`spec.CBOW`).
        jit_compile: compile the step with XLA.
        batch_size: examples per batch (SGD's step is per example).
        total_steps: the steps of the whole run, over which SGD's learning rate decays
            linearly to `FINAL_LEARNING_RATE` of the first (``None``: constant).
        **overrides: settings replacing the preset's (only existing ones).
    """
    settings = override(dict(preset), overrides)
    model = skipgram_negative_sampling(
        vocab_size,
        dim=settings["dim"],
        negatives=settings["negatives"],
        window=settings["window"],
        cbow=cbow,
        max_row_updates=settings["max_row_updates"],
    )
    # No clipping or metrics: the loss is the figure while training.
    model.compile(
        optimizer=word2vec_optimizer(
            settings["optimizer"],
            settings["learning_rate"],
            examples_per_step=examples_per_step(settings, batch_size),
            total_steps=total_steps,
            final_fraction=FINAL_LEARNING_RATE,
        ),
        loss=keras.losses.BinaryCrossentropy(from_logits=True),
        jit_compile=jit_compile,
        steps_per_execution=STEPS_PER_EXECUTION,
    )
    return model


def examples_per_step(settings, batch_size):
    """The logits of a batch: ``batch_size`` times the positive and its ``negatives``."""
    return batch_size * (settings["negatives"] + 1)


def learning_rate_scale(settings, batch_size):
    """How many times the rate ``run.json`` records (and ``--learning-rate`` gives) the
    optimizer's rate is: SGD's rate is per example (word2vec.c's alpha; the step's rate is
    alpha times the logits of a batch), Adam's per batch."""
    if settings["optimizer"] != "sgd":
        return 1.0
    return examples_per_step(settings, batch_size)

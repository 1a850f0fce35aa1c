"""The one place the tagging family's models are built and compiled."""

import keras

from keras_adl.models.cross_view import cross_view_tagger
from keras_adl.recipes._compile import override
from keras_adl.text.characters import NUM_CHARACTERS


def build_model(
    preset, vocabulary_size, tasks, views, characters=False, jit_compile=True, **overrides
):
    """The compiled `cross_view_tagger` of a (task, model) ``preset`` (`spec.PRESETS`).

    Args:
        preset: the builder's keyword arguments and ``learning_rate``.
        vocabulary_size: word ids, the special tokens included.
        tasks: ``{task: number of tags}``.
        views: the auxiliary modules (``()``: the labels alone).
        characters: add the character CNN (byte ids, `keras_adl.text.characters`).
        jit_compile: compile the step with XLA.
        **overrides: settings replacing the preset's (only existing ones).
    """
    settings = override(dict(preset), overrides)
    learning_rate = settings.pop("learning_rate")
    model = cross_view_tagger(
        vocabulary_size,
        tasks,
        views=views,
        num_characters=NUM_CHARACTERS if characters else None,
        **settings,
    )
    # The loss and metrics are the model's own (CrossViewTagger.compute_loss / _metrics).
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate, global_clipnorm=5.0),
        jit_compile=jit_compile,
    )
    return model

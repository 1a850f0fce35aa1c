"""The compile recipe and learning-rate schedules that several families' ``build.py`` share."""

import keras


def compile_for_training(model, loss, learning_rate, jit_compile=True):
    """Compiles ``model`` with the library's recipe: Adam with a global-norm gradient clip of 5
    and an accuracy metric (the sequence, captioning and document families).

    Args:
        model: a ``keras.Model`` from one of the builders.
        loss: a Keras loss.
        learning_rate: Adam's learning rate (float or schedule).
        jit_compile: compile the train step with XLA (leave off under ``MirroredStrategy`` on
            logical CPUs, where XLA fails on this stack).

    Returns:
        ``model``, compiled.
    """
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate, global_clipnorm=5.0),
        loss=loss,
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    return model


def cosine_decay(learning_rate, total_steps, final_fraction=0.01):
    """``learning_rate`` decaying along a cosine to ``final_fraction`` of itself over
    ``total_steps`` optimizer steps (Keras' ``CosineDecay``, serializable); constant after."""
    return keras.optimizers.schedules.CosineDecay(
        learning_rate, max(int(total_steps), 1), alpha=final_fraction
    )


def override(settings, overrides):
    """``settings`` updated with ``overrides``, which may only name existing settings."""
    unknown = sorted(set(overrides) - set(settings))
    if unknown:
        raise ValueError(
            f"unknown setting(s) {unknown}; this model's settings are {sorted(settings)}"
        )
    settings.update(overrides)
    return settings

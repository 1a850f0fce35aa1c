"""The training recipe shared by the CLI and the HyperModels."""

import keras


def compile_for_training(model, loss, learning_rate, jit_compile=True):
    """Compiles ``model`` with the library's recipe: Adam with a global-norm gradient clip of 5
    and an accuracy metric.

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

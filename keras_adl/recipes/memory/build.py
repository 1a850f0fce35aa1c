"""The one place the memory family's models are built and compiled."""

import keras

from keras_adl.metrics import BitErrorsPerSequence, BitsPerSequence, SequenceBitCrossEntropy
from keras_adl.models.memory import memory_sequence_model
from keras_adl.recipes._compile import override
from keras_adl.recipes.memory.spec import (
    CLIPNORM,
    MEMORY_LEARNING_RATE,
    OPTIMIZERS,
    RMSPROP_CLIPVALUE,
)


def build_model(input_dim, output_dim, model_name, preset, jit_compile=True, **overrides):
    """The compiled `memory_sequence_model` of a (task, model) ``preset`` (`spec`) from
    ``input_dim`` to ``output_dim`` features, ``model_name`` its cell; ``overrides`` replace
    preset values (only existing ones)."""
    settings = override(dict(preset), overrides)
    learning_rate = settings.pop("learning_rate")
    optimizer = settings.pop("optimizer")
    model = memory_sequence_model(input_dim, output_dim, cell=model_name, **settings)
    return compile_memory_model(model, learning_rate, jit_compile=jit_compile, optimizer=optimizer)


def _optimizer(optimizer, learning_rate, clipnorm):
    """The Keras optimizer `compile_memory_model` names."""
    if optimizer == "adam":
        return keras.optimizers.Adam(learning_rate, global_clipnorm=clipnorm)
    if optimizer == "rmsprop":
        return keras.optimizers.RMSprop(
            learning_rate, rho=0.95, momentum=0.9, clipvalue=RMSPROP_CLIPVALUE
        )
    if isinstance(optimizer, str):
        raise ValueError(
            f"compile_memory_model: `optimizer` must be one of {list(OPTIMIZERS)} or a Keras "
            f"optimizer; received {optimizer!r}"
        )
    if not isinstance(optimizer, keras.optimizers.Optimizer):
        raise TypeError(
            f"compile_memory_model: `optimizer` must be one of {list(OPTIMIZERS)} or a Keras "
            f"optimizer instance; received {optimizer!r} of type {type(optimizer).__name__}"
        )
    return optimizer


def compile_memory_model(
    model,
    learning_rate=MEMORY_LEARNING_RATE,
    clipnorm=CLIPNORM,
    jit_compile=True,
    optimizer="adam",
):
    """Compiles with Adam (`spec.MEMORY_LEARNING_RATE`, global-norm clip `spec.CLIPNORM`) and
    the per-sequence bit loss.

    The loss is `keras_adl.metrics.SequenceBitCrossEntropy` (answer steps only, given the
    task's weights as ``sample_weight``); the weighted metrics are bit errors and cost in bits
    per sequence. The batch size is the dataset's (the recipe's: the task's
    ``batch_size_of(model)``).

    Args:
        model: from `keras_adl.models.memory_sequence_model`.
        learning_rate: the optimiser's learning rate or schedule (RMSProp:
            `spec.RMSPROP_LEARNING_RATE` is the NTM paper's).
        clipnorm: Adam's global gradient-norm clip.
        jit_compile: compile the train step with XLA (leave off under ``MirroredStrategy`` on
            logical CPUs).
        optimizer: ``"adam"`` (Adam with the global-norm clip ``clipnorm``), ``"rmsprop"``
            (the NTM paper's RMSProp as pytorch-ntm sets it: momentum 0.9, rho 0.95, each
            gradient element clipped to ±`spec.RMSPROP_CLIPVALUE`; ``clipnorm`` unused) or a
            Keras optimizer instance (``learning_rate`` and ``clipnorm`` unused).

    Returns:
        ``model``, compiled.

    Example:

    >>> from keras_adl.models import memory_sequence_model
    >>> model = compile_memory_model(memory_sequence_model(9, 8, memory_size=8, memory_width=4,
    ...                                                    controller_units=8))
    >>> model.loss.name
    'sequence_bit_cross_entropy'
    """
    model.compile(
        optimizer=_optimizer(optimizer, learning_rate, clipnorm),
        loss=SequenceBitCrossEntropy(),
        weighted_metrics=[BitErrorsPerSequence(), BitsPerSequence()],
        jit_compile=jit_compile,
    )
    return model

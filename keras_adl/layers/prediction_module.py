"""CVT's prediction module: one hidden ReLU layer, then the class logits."""

from typing import Any

import keras
from keras import ops  # noqa: F401  (the Example uses it)

from keras_adl.type_aliases import Initializer, Regularizer
from keras_adl.utils import check_positive_int, check_rank, check_rate, clone_initializer


@keras.saving.register_keras_serializable(package="keras_adl")
class PredictionModule(keras.layers.Layer):
    """The one-hidden-layer softmax module of cross-view training, returning logits.

        p(y_t | h_t) = softmax(W · ReLU(W' h_t + b') + b)

    (Clark et al. 2018, section 3.1: "a prediction module consisting of a one-hidden-layer
    neural network"; the same form serves the primary module, on the top layer, and each
    auxiliary module, on a restricted view.) The layer returns the logits ``W · ReLU(…) + b``;
    apply ``softmax`` for ``p``, or give the logits to a ``from_logits`` loss and to
    `keras_adl.ops.cross_view_kl`. Dropout (at rate ``dropout``, in training) acts on the
    hidden layer. The layer is applied per token, so masks pass through unchanged.

    Args:
        num_classes: number of labels ``C``.
        hidden_units: size of the hidden layer ``ReLU(W' h + b')``.
        dropout: dropout rate on the hidden layer.
        kernel_initializer: initializer of ``W'`` and ``W``.
        kernel_regularizer: optional regularizer of ``W'`` and ``W``.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, T, D]`` states (or any ``[..., D]``).
        mask: optional mask of the tokens, propagated unchanged.
        training: whether dropout is on.

    Returns:
        ``[B, T, C]`` logits, carrying the input's mask.

    Example:

    >>> module = PredictionModule(num_classes=5, hidden_units=8)
    >>> logits = module(ops.ones((2, 3, 4)))
    >>> tuple(logits.shape), len(module.trainable_weights)
    ((2, 3, 5), 4)

    References:
        Clark, Luong, Manning, Le (2018). Semi-Supervised Sequence Modeling with Cross-View
        Training, section 3.1. EMNLP.
    """

    def __init__(
        self,
        num_classes: int,
        hidden_units: int,
        dropout: float = 0.0,
        kernel_initializer: Initializer = "glorot_uniform",
        kernel_regularizer: Regularizer = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = "PredictionModule: "
        self.num_classes = check_positive_int("num_classes", num_classes, where=where)
        self.hidden_units = check_positive_int("hidden_units", hidden_units, where=where)
        self.dropout = check_rate("dropout", dropout, where=where)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.supports_masking = True

    def build(self, inputs_shape):
        inputs_shape = tuple(inputs_shape)
        check_rank("inputs", inputs_shape, (2, 3, 4), where="PredictionModule: ")
        if inputs_shape[-1] is None:
            raise ValueError(
                "PredictionModule: the feature size (last axis) of `inputs` must be known; "
                f"received shape {inputs_shape}."
            )
        self.hidden = keras.layers.Dense(
            self.hidden_units,
            activation="relu",
            kernel_initializer=clone_initializer(self.kernel_initializer),
            kernel_regularizer=self.kernel_regularizer,
            dtype=self.dtype_policy,
            name="hidden",
        )
        self.hidden.build(inputs_shape)
        self.hidden_dropout = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy, name="hidden_dropout"
        )
        self.output_projection = keras.layers.Dense(
            self.num_classes,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            kernel_regularizer=self.kernel_regularizer,
            dtype=self.dtype_policy,
            name="output_projection",
        )
        self.output_projection.build(inputs_shape[:-1] + (self.hidden_units,))

    def call(self, inputs, training=None):
        hidden = self.hidden(inputs)  # ReLU(W' h + b')
        hidden = self.hidden_dropout(hidden, training=training)
        return self.output_projection(hidden)  # W · hidden + b (the logits)

    def compute_output_shape(self, inputs_shape):
        return tuple(inputs_shape)[:-1] + (self.num_classes,)

    def compute_mask(self, inputs, mask=None):
        return mask

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_classes": self.num_classes,
                "hidden_units": self.hidden_units,
                "dropout": self.dropout,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
            }
        )
        return config

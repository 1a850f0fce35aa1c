"""BERT's masked-LM transform: gather the masked positions, dense → GELU → layer norm."""

from typing import Any

import keras
from keras import ops

from keras_adl.type_aliases import Activation, Initializer
from keras_adl.utils import check_rank


@keras.saving.register_keras_serializable(package="keras_adl")
class MaskedLMHead(keras.layers.Layer):
    """The masked-LM head of BERT (Devlin et al. 2019; ``cls/predictions/transform``), up to
    the tied output projection.

    ``h = LayerNorm(GELU(W · x[mask_positions] + b))``, computed only at the ``P`` masked
    positions of each row (not the whole sequence). The logits are then
    ``TokenAndPositionEmbedding(h, reverse=True)``: the token table transposed plus a bias,
    tied to the input embedding (calling the embedding layer a second time keeps the tie
    through ``.keras`` saving, which a layer holding a reference to another could not).

    Args:
        activation: of the transform (BERT: ``"gelu"``).
        layer_norm_epsilon: of the layer normalisation.
        kernel_initializer: of the dense transform (BERT's truncated normal, σ = 0.02).
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, L, D]`` encoder outputs.
        mask_positions: int ``[B, P]`` positions to predict (padded slots may hold any valid
            position; their loss weight is zero).

    Returns:
        ``[B, P, D]``.

    Example:

    >>> x = keras.Input((12, 16))
    >>> positions = keras.Input((3,), dtype="int32")
    >>> tuple(MaskedLMHead()(x, positions).shape)
    (None, 3, 16)
    """

    def __init__(
        self,
        activation: Activation = "gelu",
        layer_norm_epsilon: float = 1e-12,
        kernel_initializer: Initializer = "truncated_normal_002",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.activation = keras.activations.get(activation)
        self.layer_norm_epsilon = layer_norm_epsilon
        self.kernel_initializer = kernel_initializer

    def build(self, inputs_shape, mask_positions_shape=None):
        shape = check_rank("inputs", tuple(inputs_shape), 3, where="MaskedLMHead: ")
        dim = shape[-1]
        initializer = (
            keras.initializers.TruncatedNormal(stddev=0.02)
            if self.kernel_initializer == "truncated_normal_002"
            else keras.initializers.get(self.kernel_initializer)
        )
        self.dense = keras.layers.Dense(
            dim, kernel_initializer=initializer, dtype=self.dtype_policy, name="dense"
        )
        self.dense.build((None, None, dim))
        self.norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name="norm"
        )
        self.norm.build((None, None, dim))

    def call(self, inputs, mask_positions):
        where = "MaskedLMHead: "
        check_rank("inputs", inputs, 3, where=where)
        check_rank("mask_positions", mask_positions, 2, where=where)
        positions = ops.cast(mask_positions, "int32")
        gathered = ops.take_along_axis(inputs, ops.expand_dims(positions, -1), axis=1)
        return self.norm(self.activation(self.dense(gathered)))

    def compute_mask(self, inputs, mask_positions=None, mask=None):
        return None

    def compute_output_shape(self, inputs_shape, mask_positions_shape):
        return (inputs_shape[0], mask_positions_shape[1], inputs_shape[-1])

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "activation": keras.activations.serialize(self.activation),
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "kernel_initializer": self.kernel_initializer
                if isinstance(self.kernel_initializer, str)
                else keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config

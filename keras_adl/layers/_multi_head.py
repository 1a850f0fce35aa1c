"""Private base of the multi-head attention layers: head bookkeeping, config and the attend step."""

import math
from typing import Any

import keras
from keras import ops

from keras_adl.ops.attention import (
    causal_mask,
    dot_scores,
    masked_softmax,
    merge_heads,
    merge_masks,
    scaled_dot_product_attention,
    split_heads,
)
from keras_adl.type_aliases import Initializer, Regularizer
from keras_adl.utils import check_positive_int, check_rate, clone_initializer


class MultiHeadAttentionBase(keras.layers.Layer):
    """Shared state and math of `MultiHeadSelfAttention` and `MultiHeadCrossAttention`.

    Subclasses build their input projections and call `_attend` on per-head tensors.
    """

    def __init__(
        self,
        num_heads: int,
        key_dim: int | None = None,
        value_dim: int | None = None,
        output_dim: int | None = None,
        dropout: float = 0.0,
        use_bias: bool = True,
        kernel_initializer: Initializer = "glorot_uniform",
        bias_initializer: Initializer = "zeros",
        kernel_regularizer: Regularizer = None,
        bias_regularizer: Regularizer = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = f"{type(self).__name__}: "
        self.num_heads = check_positive_int("num_heads", num_heads, where=where)
        self.key_dim = check_positive_int("key_dim", key_dim, allow_none=True, where=where)
        self.value_dim = check_positive_int("value_dim", value_dim, allow_none=True, where=where)
        self.output_dim = check_positive_int("output_dim", output_dim, allow_none=True, where=where)
        self.dropout = check_rate("dropout", dropout, where=where)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.bias_regularizer = keras.regularizers.get(bias_regularizer)
        self.supports_masking = True

    # -- helpers for subclasses -------------------------------------------------------------

    def _resolve_dims(self, model_dim, arg_name):
        """Per-head key/value sizes and output size for a model of width ``model_dim``."""
        where = f"{type(self).__name__}: "
        if model_dim is None:
            raise ValueError(f"{where}the last dimension of `{arg_name}` must be known.")
        key_dim = self.key_dim
        if key_dim is None:
            if model_dim % self.num_heads:
                raise ValueError(
                    f"{where}the model dimension of `{arg_name}` ({model_dim}) is not divisible "
                    f"by `num_heads`={self.num_heads}; pass `key_dim` explicitly or change "
                    "`num_heads`."
                )
            key_dim = model_dim // self.num_heads
        value_dim = self.value_dim or key_dim
        output_dim = self.output_dim or model_dim
        return key_dim, value_dim, output_dim

    def _dense(self, units, name):
        return keras.layers.Dense(
            units,
            use_bias=self.use_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            kernel_regularizer=self.kernel_regularizer,
            bias_regularizer=self.bias_regularizer,
            dtype=self.dtype_policy,
            name=name,
        )

    def _build_output(self, key_dim, value_dim, output_dim):
        self._key_dim, self._value_dim, self._output_dim = key_dim, value_dim, output_dim
        self.output_dense = self._dense(output_dim, "output")
        self.output_dense.build((None, None, self.num_heads * value_dim))
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    def _attend(
        self,
        query,
        key,
        value,
        mask,
        training,
        return_weights=False,
        query_mask=None,
        causal=False,
    ):
        """Scaled dot-product attention over heads, then the output projection.

        The masks stay apart so that the attention op never needs an ``[S, T]`` mask it can
        do without: keys' padding ``[B, 1, T]`` broadcasts, the causal flag is an index
        comparison inside the op, and padded queries are zeroed afterwards.

        Args:
            query: ``[B, H, S, dk]``; key: ``[B, H, T, dk]``; value: ``[B, H, T, dv]``.
            mask: optional boolean, broadcastable to ``[B, S, T]`` (or ``[B, H, S, T]``).
            return_weights: also return the attention weights.
            query_mask: optional ``[B, S]`` mask of the real query steps; a padded step
                attends to nothing (zero context).
            causal: query step ``i`` sees only key steps ``j ≤ i``.

        Returns:
            ``output [B, S, output_dim]``, or ``(output, weights [B, H, S, T])``.
        """
        scale = 1.0 / math.sqrt(self._key_dim)
        if return_weights or (training and self.dropout > 0):
            # Composed ops: the weights are needed, or dropout acts on them.
            steps = causal_mask(ops.shape(query)[2], ops.shape(key)[2]) if causal else None
            mask = _heads(merge_masks(query_mask, None, mask, steps))
            weights = masked_softmax(dot_scores(query, key, scale=scale), mask)  # QKᵀ/sqrt(d)
            context = ops.matmul(self.dropout_layer(weights, training=training), value)
        else:
            context = scaled_dot_product_attention(
                query, key, value, _heads(mask), scale, causal=causal
            )
            if query_mask is not None:
                rows = ops.cast(query_mask, "bool")[:, None, :, None]
                context = ops.where(rows, context, ops.zeros_like(context))  # [B, H, S, dv]
        output = self.output_dense(merge_heads(context))
        return (output, weights) if return_weights else output

    def _split(self, x):
        return split_heads(x, self.num_heads)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "key_dim": self.key_dim,
                "value_dim": self.value_dim,
                "output_dim": self.output_dim,
                "dropout": self.dropout,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
                "bias_regularizer": keras.regularizers.serialize(self.bias_regularizer),
            }
        )
        return config


def _heads(mask):
    """A mask ``[B, S, T]`` (or ``[S, T]``, ``[T]``) as ``[B | 1, 1, S | 1, T]``, over heads."""
    if mask is None:
        return None
    if len(mask.shape) == 3:
        return ops.expand_dims(mask, 1)
    while len(mask.shape) < 4:
        mask = ops.expand_dims(mask, 0)
    return mask

"""Private base of the Transformer blocks: config, residual + LayerNorm wiring, the FFN."""

from typing import Any

import keras

from keras_adl.type_aliases import Activation, Initializer
from keras_adl.utils import check_positive_int, check_rate, clone_initializer


class TransformerBlockBase(keras.layers.Layer):
    """Shared arguments and sublayers of `TransformerEncoderBlock` / `TransformerDecoderBlock`."""

    def __init__(
        self,
        num_heads: int,
        intermediate_dim: int,
        dropout: float = 0.0,
        norm_first: bool = False,
        activation: Activation = "relu",
        layer_norm_epsilon: float = 1e-5,
        key_dim: int | None = None,
        kernel_initializer: Initializer = "glorot_uniform",
        bias_initializer: Initializer = "zeros",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = f"{type(self).__name__}: "
        self.num_heads = check_positive_int("num_heads", num_heads, where=where)
        self.intermediate_dim = check_positive_int(
            "intermediate_dim", intermediate_dim, where=where
        )
        self.dropout = check_rate("dropout", dropout, where=where)
        self.norm_first = bool(norm_first)
        self.activation = keras.activations.get(activation)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.key_dim = check_positive_int("key_dim", key_dim, allow_none=True, where=where)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.bias_initializer = keras.initializers.get(bias_initializer)
        self.supports_masking = True

    def _attention_kwargs(self):
        return dict(
            num_heads=self.num_heads,
            key_dim=self.key_dim,
            dropout=self.dropout,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            bias_initializer=clone_initializer(self.bias_initializer),
            dtype=self.dtype_policy,
        )

    def _check_model_dim(self, shape, name):
        if shape[-1] is None:
            raise ValueError(
                f"{type(self).__name__}: the last dimension of `{name}` must be known."
            )
        if self.key_dim is None and shape[-1] % self.num_heads:
            raise ValueError(
                f"{type(self).__name__}: the model dimension of `{name}` ({shape[-1]}) is not "
                f"divisible by `num_heads`={self.num_heads}; received shape {tuple(shape)}. "
                "Pass `key_dim` or change `num_heads`."
            )
        return shape[-1]

    def _norm(self, name, shape):
        norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy, name=name
        )
        norm.build(shape)
        return norm

    def _build_feed_forward(self, shape):
        """Builds FFN(x) = W_2 act(W_1 x + b_1) + b_2 with its norm and dropouts."""
        dim = shape[-1]

        def dense():
            return dict(
                kernel_initializer=clone_initializer(self.kernel_initializer),
                bias_initializer=clone_initializer(self.bias_initializer),
                dtype=self.dtype_policy,
            )

        self.ffn_intermediate = keras.layers.Dense(
            self.intermediate_dim, activation=self.activation, name="ffn_intermediate", **dense()
        )
        self.ffn_intermediate.build(shape)
        self.ffn_output = keras.layers.Dense(dim, name="ffn_output", **dense())
        self.ffn_output.build(tuple(shape[:-1]) + (self.intermediate_dim,))
        self.ffn_norm = self._norm("ffn_norm", shape)
        self.ffn_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)
        self.residual_dropout = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    def _sublayer(self, x, norm, fn, training):
        """Residual connection around ``fn`` with post-norm (paper) or pre-norm placement.

        post-norm: LayerNorm(x + Dropout(fn(x)));  pre-norm: x + Dropout(fn(LayerNorm(x))).
        Returns ``(output, extras)`` where ``extras`` is whatever ``fn`` returned beyond its
        main output.
        """
        y = fn(norm(x) if self.norm_first else x)
        y, extras = (y[0], y[1:]) if isinstance(y, tuple) else (y, ())
        y = x + self.residual_dropout(y, training=training)
        return (y if self.norm_first else norm(y)), extras

    def _feed_forward(self, x, training):
        def ffn(h):
            return self.ffn_output(self.ffn_dropout(self.ffn_intermediate(h), training=training))

        return self._sublayer(x, self.ffn_norm, ffn, training)[0]

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_heads": self.num_heads,
                "intermediate_dim": self.intermediate_dim,
                "dropout": self.dropout,
                "norm_first": self.norm_first,
                "activation": keras.activations.serialize(self.activation),
                "layer_norm_epsilon": self.layer_norm_epsilon,
                "key_dim": self.key_dim,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "bias_initializer": keras.initializers.serialize(self.bias_initializer),
            }
        )
        return config

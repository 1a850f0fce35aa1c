"""Highway network (Srivastava, Greff & Schmidhuber 2015), as in ELMo's character encoder."""

from typing import Any

import keras
from keras import ops

from keras_adl.type_aliases import Activation
from keras_adl.utils import check_positive_int


@keras.saving.register_keras_serializable(package="keras_adl")
class Highway(keras.layers.Layer):
    """A stack of highway layers: each mixes a transform of its input with the input itself.

    For each of the ``num_layers`` layers, on ``x`` ``[..., D]``:

        T = sigmoid(W_T x + b_T)          (the transform gate)
        H = activation(W_H x + b_H)
        y = T ⊙ H + (1 - T) ⊙ x

    and ``y`` is the next layer's ``x``. ``b_T`` starts at ``transform_bias``: negative, so
    each layer starts close to carrying its input through (the paper's advice for deep stacks).
    ELMo (Peters et al. 2018) puts two such layers between its character CNN and its
    projection.

    Weights: layer ``i`` holds ONE dense sublayer ``layer_i`` of ``D → 2D``, kernel
    ``[W_H | W_T]`` and bias ``[b_H | b_T]`` (one matmul for both), so the stack has
    ``2 · num_layers`` trainable weights.

    Args:
        num_layers: the number of highway layers.
        activation: of ``H`` (ELMo: ``"relu"``).
        transform_bias: initial value of every ``b_T`` (the paper suggests -1 to -3; ELMo
            uses -2).
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[..., D]`` float features (``D`` known).
        mask: the Keras mask of ``inputs``; passed through unchanged.

    Returns:
        ``[..., D]``, with the mask of ``inputs``.

    Example:

    >>> highway = Highway(num_layers=2)
    >>> y = highway(ops.ones((3, 5, 8)))
    >>> tuple(y.shape), len(highway.trainable_weights)
    ((3, 5, 8), 4)

    References:
        Srivastava, Greff, Schmidhuber (2015). Highway Networks. arXiv:1505.00387; and Training
        Very Deep Networks, NeurIPS 2015.
        Peters et al. (2018). Deep contextualized word representations, section 3.3 and
        appendix. NAACL-HLT.
    """

    def __init__(
        self,
        num_layers: int = 1,
        activation: Activation = "relu",
        transform_bias: float = -1.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = "Highway: "
        self.num_layers = check_positive_int("num_layers", num_layers, where=where)
        if isinstance(transform_bias, bool) or not isinstance(transform_bias, (int, float)):
            raise TypeError(
                f"{where}`transform_bias` must be a number; received {transform_bias!r}."
            )
        self.transform_bias = float(transform_bias)
        self.activation = keras.activations.get(activation)
        self.supports_masking = True

    def build(self, inputs_shape):
        inputs_shape = tuple(inputs_shape)
        if len(inputs_shape) < 2 or inputs_shape[-1] is None:
            raise ValueError(
                "Highway: `inputs` must have rank >= 2 and a known last (feature) axis; "
                f"received shape {inputs_shape}."
            )
        dim = inputs_shape[-1]
        transform_bias = self.transform_bias

        def bias_initializer(shape, dtype=None):
            # [b_H | b_T]: zeros for H, transform_bias for the gate.
            return ops.concatenate(
                [ops.zeros((dim,), dtype), ops.full((dim,), transform_bias, dtype)]
            )

        self.highway_layers = []
        for i in range(self.num_layers):
            dense = keras.layers.Dense(
                2 * dim,
                bias_initializer=bias_initializer,
                dtype=self.dtype_policy,
                name=f"layer_{i}",
            )
            dense.build((None, dim))
            self.highway_layers.append(dense)

    def call(self, inputs):
        x = inputs
        dim = x.shape[-1]
        for dense in self.highway_layers:
            projected = dense(x)
            h = self.activation(projected[..., :dim])
            t = ops.sigmoid(projected[..., dim:])
            x = t * h + (1.0 - t) * x
        return x

    def compute_output_shape(self, inputs_shape):
        return tuple(inputs_shape)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_layers": self.num_layers,
                "activation": keras.activations.serialize(self.activation),
                "transform_bias": self.transform_bias,
            }
        )
        return config

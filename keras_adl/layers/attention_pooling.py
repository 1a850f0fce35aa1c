"""Attention pooling with a learned context vector (the HAN word / sentence attention)."""

from typing import Any

import keras
from keras import ops  # noqa: F401  (the Example uses it)

from keras_adl.ops.attention import context_scores, masked_softmax, weighted_sum
from keras_adl.type_aliases import Initializer, Regularizer
from keras_adl.utils import check_positive_int, check_rank, clone_initializer


@keras.saving.register_keras_serializable(package="keras_adl")
class AttentionPooling(keras.layers.Layer):
    """Pools a sequence into one vector with attention against a learned context vector.

        u_t = tanh(W h_t + b)
        α_t = exp(u_tᵀ u_ctx) / Σ_{t' unmasked} exp(u_t'ᵀ u_ctx)     (α_t = 0 if t is masked)
        s   = Σ_t α_t h_t

    This is the word attention (and, one level up, the sentence attention) of the Hierarchical
    Attention Network (Yang et al. 2016, eq. 5–7 and 8–10): ``u_ctx`` asks "which steps are
    informative?" and is learned with the rest of the model. Masked steps get exactly zero
    weight; a sequence whose steps are all masked (an empty sentence, a padding sentence) pools
    to the zero vector with all-zero weights, not NaN.

    Args:
        units: size ``U`` of the projection ``u_t`` and of the context vector.
        use_bias: whether the projection has the bias ``b``.
        kernel_initializer: initializer of ``W``.
        context_initializer: initializer of ``u_ctx``.
        kernel_regularizer: optional regularizer of ``W``.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, T, D]`` hidden states ``h_t``.
        mask: optional ``[B, T]`` boolean mask of real steps (filled from the Keras mask).
        return_attention_scores: also return the weights ``α``.

    Returns:
        The pooled vector ``s`` ``[B, D]``; with ``return_attention_scores`` the tuple
        ``(s, α)`` with ``α`` ``[B, T]``. The outputs carry no mask.

    Example:

    >>> pool = AttentionPooling(8)
    >>> h = ops.ones((2, 5, 6))
    >>> s, alpha = pool(h, mask=ops.array([[True] * 3 + [False] * 2] * 2),
    ...                 return_attention_scores=True)
    >>> tuple(s.shape), [round(float(a), 3) for a in alpha[0]]
    ((2, 6), [0.333, 0.333, 0.333, 0.0, 0.0])

    References:
        Yang, Yang, Dyer, He, Smola, Hovy (2016). Hierarchical Attention Networks for Document
        Classification, section 2.2. NAACL-HLT.
    """

    def __init__(
        self,
        units: int,
        use_bias: bool = True,
        kernel_initializer: Initializer = "glorot_uniform",
        context_initializer: Initializer = "glorot_uniform",
        kernel_regularizer: Regularizer = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.units = check_positive_int("units", units, where="AttentionPooling: ")
        self.use_bias = bool(use_bias)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.context_initializer = keras.initializers.get(context_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)
        self.supports_masking = True

    def build(self, inputs_shape):
        inputs_shape = check_rank("inputs", tuple(inputs_shape), 3, where="AttentionPooling: ")
        if inputs_shape[-1] is None:
            raise ValueError(
                "AttentionPooling: the feature size (last axis) of `inputs` must be known; "
                f"received shape {inputs_shape}."
            )
        self.projection = keras.layers.Dense(
            self.units,
            activation="tanh",
            use_bias=self.use_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            kernel_regularizer=self.kernel_regularizer,
            dtype=self.dtype_policy,
            name="projection",
        )
        self.projection.build(inputs_shape)
        self.context_vector = self.add_weight(
            name="context_vector",
            shape=(self.units,),
            initializer=clone_initializer(self.context_initializer),
        )

    def call(self, inputs, mask=None, return_attention_scores=False):
        u = self.projection(inputs)  # u_t = tanh(W h_t + b), [B, T, U]
        scores = context_scores(u, self.context_vector)  # u_tᵀ u_ctx, [B, T]
        alpha = masked_softmax(scores, mask)  # α_t, exactly 0 where masked
        pooled = weighted_sum(alpha, inputs)  # s = Σ_t α_t h_t, [B, D]
        if return_attention_scores:
            return pooled, alpha
        return pooled

    def compute_mask(self, inputs, mask=None):
        return None  # the outputs have no step axis left to mask

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "use_bias": self.use_bias,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "context_initializer": keras.initializers.serialize(self.context_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
            }
        )
        return config

"""Luong (multiplicative) attention."""

import math
from typing import Any

import keras

from keras_adl.layers._sequence_attention import SequenceAttentionBase
from keras_adl.ops.attention import dot_scores
from keras_adl.type_aliases import Initializer, Regularizer
from keras_adl.utils import check_choice


@keras.saving.register_keras_serializable(package="keras_adl")
class LuongAttention(SequenceAttentionBase):
    """Multiplicative attention of Luong et al. (2015).

        score(s, h) = sᵀ h             ("dot")
                    = sᵀ W_a h         ("general")
                    = sᵀ h / sqrt(d)   ("scaled_dot")
        α_ij = softmax_j(score(s_i, h_j)),   c_i = Σ_j α_ij h_j

    For ``"general"`` the memory side ``W_a h_j`` is what `precompute_keys` computes once per
    source. ``"dot"`` and ``"scaled_dot"`` need query and key of the same size.

    Args:
        score: ``"dot"``, ``"general"`` or ``"scaled_dot"``.
        dropout: dropout rate on the attention weights.
        kernel_initializer: initializer of ``W_a`` (``"general"``).
        kernel_regularizer: regularizer of ``W_a`` (``"general"``).
        **kwargs: standard layer arguments.

    Call arguments:
        query: decoder state(s), ``[B, Dq]`` for one step or ``[B, S, Dq]`` for all steps.
        value: memory (encoder states) ``[B, T, Dv]``.
        key: optional keys ``[B, T, Dk]``; defaults to ``value``.
        value_mask: optional ``[B, T]`` padding mask of the memory (filled from the Keras mask
            of ``value``); masked steps get exactly zero weight.
        processed_keys: optional result of `precompute_keys`.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.

    Returns:
        ``context`` ``[B, Dv]`` or ``[B, S, Dv]``, and ``weights`` ``[B, T]`` or ``[B, S, T]``
        if requested.

    Example:

    >>> encoder = keras.Input((None, 32))
    >>> state = keras.Input((24,))
    >>> context = LuongAttention(score="general")(state, encoder)
    >>> tuple(context.shape)
    (None, 32)

    References:
        Luong, Pham, Manning (2015). Effective Approaches to Attention-based Neural Machine
        Translation, section 3.1. arXiv:1508.04025.
    """

    def __init__(
        self,
        score: str = "dot",
        dropout: float = 0.0,
        kernel_initializer: Initializer = "glorot_uniform",
        kernel_regularizer: Regularizer = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(dropout=dropout, **kwargs)
        self.score = check_choice(
            "score", score, ("dot", "general", "scaled_dot"), where="LuongAttention: "
        )
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)

    def _build_scoring(self, query_shape, key_shape):
        self._scale = None
        if self.score == "general":
            self.key_dense = keras.layers.Dense(
                query_shape[-1],
                use_bias=False,
                kernel_initializer=self.kernel_initializer,
                kernel_regularizer=self.kernel_regularizer,
                dtype=self.dtype_policy,
                name="key_projection",
            )  # W_a
            self.key_dense.build(key_shape)
            return
        if query_shape[-1] != key_shape[-1]:
            raise ValueError(
                f"LuongAttention: score={self.score!r} needs `query` and `key` of the same last "
                f"dimension; received query shape {query_shape} and key shape {key_shape}. "
                "Use score='general' to learn a projection between them."
            )
        if self.score == "scaled_dot":
            self._scale = 1.0 / math.sqrt(query_shape[-1])

    def _process_keys(self, key):
        return self.key_dense(key) if self.score == "general" else key

    def _score(self, query, processed_keys):
        return dot_scores(query, processed_keys, scale=self._scale)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "score": self.score,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
            }
        )
        return config

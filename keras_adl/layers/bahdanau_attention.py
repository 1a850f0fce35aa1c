"""Bahdanau (additive) attention."""

import math
from typing import Any

import keras
from keras import ops

from keras_adl.layers._sequence_attention import SequenceAttentionBase
from keras_adl.ops.attention import additive_scores
from keras_adl.type_aliases import Initializer, Regularizer
from keras_adl.utils import check_positive_int, clone_initializer


@keras.saving.register_keras_serializable(package="keras_adl")
class BahdanauAttention(SequenceAttentionBase):
    """Additive attention of Bahdanau et al. (2014).

        e_ij = v_aᵀ tanh(W_a s_i + U_a h_j),   α_ij = softmax_j(e_ij),   c_i = Σ_j α_ij h_j

    ``U_a h_j`` does not depend on the decoder step; `precompute_keys` computes it once per
    source and the result is passed back as ``processed_keys``. With ``normalize=True`` the
    scoring vector is weight-normalised, ``v_a ← g · v_a / ‖v_a‖`` with a learned scalar ``g``
    (initialised to ``sqrt(1/units)``), and a bias ``b`` is added inside the tanh (Salimans &
    Kingma 2016, as in tensorflow-addons' ``normalize=True``).

    Unlike ``keras.layers.AdditiveAttention`` (which scores ``vᵀ tanh(q + k)`` with no
    projections), this layer has the learned projections ``W_a``, ``U_a`` of size ``units``.

    Args:
        units: size ``U`` of the alignment model's hidden layer.
        normalize: use the weight-normalised score.
        dropout: dropout rate on the attention weights.
        kernel_initializer: initializer of ``W_a``, ``U_a`` and ``v_a``.
        kernel_regularizer: regularizer of ``W_a`` and ``U_a``.
        **kwargs: standard layer arguments.

    Call arguments:
        query: decoder state(s), ``[B, Dq]`` for one step or ``[B, S, Dq]`` for all steps.
        value: memory (encoder states) ``[B, T, Dv]``.
        key: optional keys ``[B, T, Dk]``; defaults to ``value``.
        value_mask: optional ``[B, T]`` padding mask of the memory (filled from the Keras mask
            of ``value``); masked steps get exactly zero weight.
        processed_keys: optional result of `precompute_keys`; skips the memory projection.
        return_attention_scores: also return the attention weights.
        training: whether dropout is active.

    Returns:
        ``context`` ``[B, Dv]`` or ``[B, S, Dv]``, and ``weights`` ``[B, T]`` or ``[B, S, T]``
        if requested.

    Example:

    >>> encoder = keras.Input((None, 32))
    >>> decoder = keras.Input((None, 24))
    >>> context, weights = BahdanauAttention(16)(
    ...     decoder, encoder, return_attention_scores=True)
    >>> tuple(context.shape), tuple(weights.shape)
    ((None, None, 32), (None, None, None))

    References:
        Bahdanau, Cho, Bengio (2014). Neural Machine Translation by Jointly Learning to Align
        and Translate, appendix A.1.2. arXiv:1409.0473.
    """

    def __init__(
        self,
        units: int,
        normalize: bool = False,
        dropout: float = 0.0,
        kernel_initializer: Initializer = "glorot_uniform",
        kernel_regularizer: Regularizer = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(dropout=dropout, **kwargs)
        self.units = check_positive_int("units", units, where="BahdanauAttention: ")
        self.normalize = bool(normalize)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.kernel_regularizer = keras.regularizers.get(kernel_regularizer)

    def _projection(self, name):
        return keras.layers.Dense(
            self.units,
            use_bias=False,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            kernel_regularizer=self.kernel_regularizer,
            dtype=self.dtype_policy,
            name=name,
        )

    def _build_scoring(self, query_shape, key_shape):
        self.query_dense = self._projection("query_projection")  # W_a
        self.query_dense.build(query_shape)
        self.key_dense = self._projection("key_projection")  # U_a
        self.key_dense.build(key_shape)
        self.attention_v = self.add_weight(
            name="attention_v",
            shape=(self.units,),
            initializer=clone_initializer(self.kernel_initializer),
        )
        if self.normalize:
            self.attention_g = self.add_weight(
                name="attention_g",
                shape=(),
                initializer=keras.initializers.Constant(math.sqrt(1.0 / self.units)),
            )
            self.attention_b = self.add_weight(
                name="attention_b", shape=(self.units,), initializer="zeros"
            )

    def _process_keys(self, key):
        return self.key_dense(key)  # U_a h_j

    def _score(self, query, processed_keys):
        v, bias = self.attention_v, None
        if self.normalize:
            norm = ops.sqrt(ops.sum(ops.square(v)) + 1e-12)
            v, bias = self.attention_g * v / norm, self.attention_b  # v ← g v/‖v‖
        return additive_scores(self.query_dense(query), processed_keys, v, bias)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "normalize": self.normalize,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "kernel_regularizer": keras.regularizers.serialize(self.kernel_regularizer),
            }
        )
        return config

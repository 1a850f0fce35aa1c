"""Doubly stochastic attention regularisation of Show, Attend and Tell (Xu et al. 2015)."""

from typing import Any

import keras
from keras import ops

from keras_adl.ops.attention import doubly_stochastic_penalty
from keras_adl.utils import check_rank


@keras.saving.register_keras_serializable(package="keras_adl")
class DoublyStochasticRegularization(keras.layers.Layer):
    """Adds ``λ · mean_B Σ_i (1 − Σ_t α_ti)²`` to the model's losses; returns the attention.

        loss += λ · (1/B) Σ_b Σ_i (1 − Σ_t m_bt α_bti)²

    The attention weights ``α_t`` of every decoder step sum to 1 over the ``L`` image locations
    by the softmax; this penalty asks that the weights of every location, summed over the
    caption, be close to 1 too, so the decoder looks at every part of the image once over the
    caption (Xu et al. 2015, eq. 14; ``λ = 1`` in the authors' script). Only real decoder steps
    count (``m_t = 1``; e.g. the mask of non-padding caption tokens).

    The layer is the identity on its input: it only calls ``self.add_loss``, so the penalty of
    the last call shows in ``model.losses`` and Keras adds it to the compiled loss in ``fit``
    and ``evaluate``. The penalty is added in ``float32`` (also under ``mixed_float16``).
    ``strength=0`` adds no loss at all.

    Args:
        strength: ``λ``, a non-negative float.
        **kwargs: standard layer arguments.

    Call arguments:
        attention: ``[B, S, L]`` attention weights of ``S`` decoder steps over ``L`` locations.
        mask: optional ``[B, S]`` mask of real decoder steps (filled from the Keras mask of
            ``attention``); propagated unchanged.

    Returns:
        ``attention``, unchanged.

    Example:

    >>> layer = DoublyStochasticRegularization(strength=0.5)
    >>> alpha = ops.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])
    >>> tuple(layer(alpha).shape), float(layer.losses[0])  # 0.5 · ((1-1)² + (1-1)² + 1²)
    ((1, 2, 3), 0.5)

    References:
        Xu et al. (2015). Show, Attend and Tell: Neural Image Caption Generation with Visual
        Attention, section 4.2.1, eq. 14. arXiv:1502.03044.
    """

    def __init__(self, strength: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if (
            isinstance(strength, bool)
            or not isinstance(strength, (int, float))
            or not strength >= 0  # also rejects NaN
        ):
            raise ValueError(
                "DoublyStochasticRegularization: `strength` must be a non-negative float; "
                f"received {strength!r}."
            )
        self.strength = float(strength)
        self.supports_masking = True

    def build(self, attention_shape):
        check_rank("attention", tuple(attention_shape), 3, where="DoublyStochasticRegularization: ")

    def call(self, attention, mask=None):
        if self.strength > 0:
            penalty = doubly_stochastic_penalty(attention, mask)  # [B], float32
            self.add_loss(self.strength * ops.mean(penalty))  # λ · mean_B(penalty)
        return attention

    def compute_output_shape(self, attention_shape):
        return attention_shape

    def compute_mask(self, attention, mask=None):
        return mask

    def get_config(self):
        config = super().get_config()
        config.update({"strength": self.strength})
        return config

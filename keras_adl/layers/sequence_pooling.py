"""One vector per sequence from its real (unmasked) steps: their mean, as Sentence-BERT pools,
the first one, as BERT's pooler reads ``[CLS]``, or the last one, as GPT's classifier reads its
extract token."""

from typing import Any

import keras
from keras import ops

from keras_adl.utils import check_choice

_WHERE = "SequencePooling: "
MODES = ("mean", "first", "last")


@keras.saving.register_keras_serializable(package="keras_adl")
class SequencePooling(keras.layers.Layer):
    """Pools ``[B, T, D]`` states over the steps their Keras mask keeps.

    With ``m_t`` the mask (1 for a real step, 0 for padding):

        mean:   y = Σ_t m_t · x_t / max(Σ_t m_t, 1)
        first:  y = Σ_t m_t · [Σ_{s<t} m_s = 0] · x_t
        last:   y = Σ_t m_t · [Σ_{s>t} m_s = 0] · x_t

    ``"first"`` takes the first real step (of a right-padded row: step 0, e.g. ``[CLS]``) and
    ``"last"`` the last one (of a right-padded row: the step before the padding, or the end),
    whatever the mask holds after or before it. Padded steps change nothing, and a row
    with every step masked gives zeros (not the NaN of ``0 / 0``). Without a mask every step
    is real. Under a float16 or bfloat16 compute dtype the sums are taken in float32 (a
    float16 sum over many steps can overflow); the output has the input's dtype.

    Unlike ``keras.layers.GlobalAveragePooling1D``, an all-masked row gives zeros; and as a
    named layer (rather than ``keras.ops`` calls on symbolic tensors) it can be added on top
    of a reloaded model without clashing with the automatic names its operations were saved
    with ("not_equal_1", ...).

    No weights.

    Args:
        mode: ``"mean"``, ``"first"`` or ``"last"``.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, T, D]`` float states.
        mask: optional ``[B, T]`` boolean Keras mask of ``inputs`` (Keras fills it from the
            tensor's mask, e.g. ``Embedding(mask_zero=True)`` upstream).

    Returns:
        ``[B, D]``, without a mask.

    Example:

    >>> x = ops.convert_to_tensor([[[1.0], [3.0], [100.0]]])
    >>> mask = ops.convert_to_tensor([[True, True, False]])
    >>> ops.convert_to_numpy(SequencePooling("mean")(x, mask=mask)).tolist()
    [[2.0]]
    >>> ops.convert_to_numpy(SequencePooling("first")(x, mask=mask)).tolist()
    [[1.0]]
    >>> ops.convert_to_numpy(SequencePooling("last")(x, mask=mask)).tolist()
    [[3.0]]

    References:
        Devlin, Chang, Lee, Toutanova (2019). BERT: Pre-training of Deep Bidirectional
        Transformers for Language Understanding, section 3. NAACL.
        Reimers, Gurevych (2019). Sentence-BERT: Sentence Embeddings using Siamese
        BERT-Networks, section 3. EMNLP-IJCNLP.
        Radford, Narasimhan, Salimans, Sutskever (2018). Improving Language Understanding by
        Generative Pre-Training, section 3.3.
    """

    def __init__(self, mode: str = "mean", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mode = check_choice("mode", mode, MODES, where=_WHERE)
        self.supports_masking = True

    def build(self, inputs_shape):
        inputs_shape = tuple(inputs_shape)
        if len(inputs_shape) != 3:
            raise ValueError(
                f"{_WHERE}`inputs` must have rank 3 ([batch, steps, features]); received shape "
                f"{inputs_shape}."
            )

    def call(self, inputs, mask=None):
        dtype = "float32" if inputs.dtype in ("float16", "bfloat16") else inputs.dtype
        x = ops.cast(inputs, dtype)
        if mask is None:
            weights = ops.ones(ops.shape(x)[:2], dtype)
        else:
            weights = ops.cast(mask, dtype)
        if self.mode == "first":
            # Real steps before t: the cumulative sum up to t, less step t itself.
            earlier = ops.cumsum(weights, axis=1) - weights
            weights = weights * ops.cast(ops.equal(earlier, 0.0), dtype)
        elif self.mode == "last":
            # Real steps after t: the reversed cumulative sum from t on, less step t itself.
            later = ops.flip(ops.cumsum(ops.flip(weights, axis=1), axis=1), axis=1) - weights
            weights = weights * ops.cast(ops.equal(later, 0.0), dtype)
        # Unselected steps are zeroed, not only weighted by 0: a non-finite padded state
        # (0 · inf = NaN) changes nothing either.
        x = ops.where(ops.expand_dims(weights, -1) > 0, x, ops.zeros_like(x))
        total = ops.einsum("bt,btd->bd", weights, x)
        if self.mode == "mean":
            total = total / ops.maximum(ops.sum(weights, axis=1, keepdims=True), 1.0)
        return ops.cast(total, inputs.dtype)

    def compute_mask(self, inputs, mask=None):
        return None

    def compute_output_shape(self, inputs_shape):
        return (inputs_shape[0], inputs_shape[2])

    def get_config(self):
        config = super().get_config()
        config.update({"mode": self.mode})
        return config

"""Reverses each sequence's real steps in place, padding left at the end (a backward RNN)."""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="keras_adl")
class ReverseSequence(keras.layers.Layer):
    """``y[b, t] = x[b, L_b - 1 - t]`` for ``t < L_b`` and ``y[b, t] = x[b, t]`` after, where
    ``L_b`` is the number of unmasked steps of row ``b`` (right padding).

    Unlike ``go_backwards=True``, which reverses the padding too (putting it first), this keeps
    the padding at the end, so the same mask holds before and after and a backward LSTM over
    the reversed sequence starts from the last real step. Applying it twice is the identity.
    Without a mask every step is real.

    Call arguments:
        inputs: ``[B, T, ...]``.
        mask: ``[B, T]`` (right padding: real steps first).

    Returns:
        ``[B, T, ...]``, with the input's mask.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        steps = ops.shape(inputs)[1]
        positions = ops.expand_dims(ops.arange(steps, dtype="int32"), 0)
        if mask is None:
            lengths = ops.full((ops.shape(inputs)[0], 1), steps, dtype="int32")
        else:
            lengths = ops.sum(ops.cast(mask, "int32"), axis=1, keepdims=True)
        index = ops.where(positions < lengths, lengths - 1 - positions, positions)
        for _ in range(len(inputs.shape) - 2):
            index = ops.expand_dims(index, -1)
        return ops.take_along_axis(inputs, ops.broadcast_to(index, ops.shape(inputs)), axis=1)

    def compute_mask(self, inputs, mask=None):
        return mask

"""The four restricted views of cross-view training (CVT) as a layer."""

from typing import Any

import keras
from keras import ops  # noqa: F401  (the Example uses it)

from keras_adl.ops.cross_view import VIEW_NAMES, restricted_views
from keras_adl.utils import check_rank


@keras.saving.register_keras_serializable(package="keras_adl")
class RestrictedViews(keras.layers.Layer):
    """Splits a bidirectional RNN's first layer into the four views of CVT's auxiliaries.

        forward_t = h→_t,   backward_t = h←_t,   future_t = h→_{t-1},   past_t = h←_{t+1}

    with zeros where ``t-1`` or ``t+1`` is not a real token (Clark et al. 2018, section 3.1;
    see `keras_adl.ops.restricted_views`). The auxiliary prediction modules read these views so
    that each sees less of the sentence than the primary module does. Padding is assumed on
    the right; with a mask, ``past`` is zero at the last real token and every view is zero at
    padding steps.

    Args:
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: either the list ``[forward, backward]`` of ``[B, T, D]`` states (e.g. the two
            outputs of ``Bidirectional(..., merge_mode=None)``), or one ``[B, T, 2D]`` tensor,
            the forward states then the backward states on the last axis (the output of
            ``Bidirectional(..., merge_mode="concat")``).
        mask: optional ``[B, T]`` boolean mask of real tokens (filled from the Keras mask; for
            a list, the first mask that is not ``None``).

    Returns:
        The dict ``{"forward", "backward", "future", "past"}`` of ``[B, T, D]`` views, each
        carrying the input's mask.

    Example:

    >>> states = ops.reshape(ops.arange(1.0, 9.0), (1, 4, 2))  # h→ = 1 3 5 7, h← = 2 4 6 8
    >>> views = RestrictedViews()(states, mask=ops.array([[True, True, True, False]]))
    >>> [float(v) for v in ops.convert_to_numpy(views["future"])[0, :, 0]]
    [0.0, 1.0, 3.0, 0.0]
    >>> [float(v) for v in ops.convert_to_numpy(views["past"])[0, :, 0]]
    [4.0, 6.0, 0.0, 0.0]

    References:
        Clark, Luong, Manning, Le (2018). Semi-Supervised Sequence Modeling with Cross-View
        Training, section 3.1. EMNLP.
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.supports_masking = True

    @staticmethod
    def _split(inputs):
        if isinstance(inputs, (list, tuple)):
            if len(inputs) != 2:
                raise ValueError(
                    "RestrictedViews: `inputs` must be the list [forward, backward] or one "
                    f"concatenated tensor; received a list of {len(inputs)} tensors."
                )
            return inputs[0], inputs[1]
        shape = check_rank("inputs", inputs, 3, where="RestrictedViews: ")
        if shape[-1] is None or shape[-1] % 2:
            raise ValueError(
                "RestrictedViews: the last axis of a concatenated `inputs` must be static and "
                f"even (forward then backward states); received shape {shape}."
            )
        half = shape[-1] // 2
        return inputs[..., :half], inputs[..., half:]

    @staticmethod
    def _mask(mask):
        if isinstance(mask, (list, tuple)):
            return next((m for m in mask if m is not None), None)
        return mask

    def build(self, inputs_shape):
        if isinstance(inputs_shape, (list, tuple)) and isinstance(inputs_shape[0], (list, tuple)):
            for name, shape in zip(("forward", "backward"), inputs_shape):
                check_rank(name, tuple(shape), 3, where="RestrictedViews: ")
        self.built = True

    def call(self, inputs, mask=None):
        forward, backward = self._split(inputs)
        return restricted_views(forward, backward, mask=self._mask(mask))

    def compute_output_shape(self, inputs_shape):
        if isinstance(inputs_shape, (list, tuple)) and isinstance(inputs_shape[0], (list, tuple)):
            shape = tuple(inputs_shape[0])
        else:
            shape = tuple(inputs_shape)
            shape = shape[:-1] + (None if shape[-1] is None else shape[-1] // 2,)
        return {name: shape for name in VIEW_NAMES}

    def compute_mask(self, inputs, mask=None):
        mask = self._mask(mask)
        return {name: mask for name in VIEW_NAMES}

    def get_config(self):
        return super().get_config()  # no arguments of its own

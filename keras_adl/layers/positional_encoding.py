"""Sinusoidal positional encoding (Vaswani et al. 2017)."""

from typing import Any

import keras
from keras import ops

from keras_adl.utils import check_choice, check_rank


@keras.saving.register_keras_serializable(package="keras_adl")
class PositionalEncoding(keras.layers.Layer):
    """Fixed sinusoidal position encoding, interleaved sine/cosine.

    For position ``t`` and feature index ``i`` of a ``D``-dimensional model, with ``k = ⌊i/2⌋``:

        p_{2k}(t)   = sin(t / max_wavelength^{2k/D})
        p_{2k+1}(t) = cos(t / max_wavelength^{2k/D})

    i.e. even features are sines and odd features cosines of the same frequency (interleaved,
    not the concatenated ``[sin…, cos…]`` layout some libraries use). The encoding is computed
    in float32 for any sequence length given at call time and cast to the compute dtype.

    Args:
        max_wavelength: the base of the geometric progression of wavelengths (10000 in the
            paper).
        mode: ``"add"`` returns ``inputs + encoding``; ``"encoding"`` returns the encoding alone,
            broadcast to the shape of ``inputs``.
        **kwargs: standard layer arguments (``name``, ``dtype``, …).

    Call arguments:
        inputs: ``[B, T, D]`` embeddings.
        start_index: absolute position of the first step (int or scalar tensor), for
            incremental decoding: a call on ``x[:, s:s+n]`` with ``start_index=s`` equals the
            slice ``[s:s+n]`` of the call on the whole sequence.
        mask: the Keras mask of ``inputs``; passed through unchanged.

    Returns:
        ``[B, T, D]`` tensor in the compute dtype.

    Example:

    >>> tokens = keras.Input((None,), dtype="int32")
    >>> x = keras.layers.Embedding(100, 16, mask_zero=True)(tokens)
    >>> x = PositionalEncoding()(x)
    >>> tuple(x.shape)
    (None, None, 16)

    References:
        Vaswani et al. (2017). Attention Is All You Need, section 3.5. arXiv:1706.03762.
    """

    def __init__(self, max_wavelength: float = 10000, mode: str = "add", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if (
            isinstance(max_wavelength, bool)
            or not isinstance(max_wavelength, (int, float))
            or (max_wavelength <= 1)
        ):
            raise ValueError(
                "PositionalEncoding: `max_wavelength` must be a number > 1; "
                f"received {max_wavelength!r}."
            )
        self.max_wavelength = max_wavelength
        self.mode = check_choice("mode", mode, ("add", "encoding"), where="PositionalEncoding: ")
        self.supports_masking = True

    def build(self, input_shape):
        shape = check_rank("inputs", tuple(input_shape), 3, where="PositionalEncoding: ")
        if shape[-1] is None:
            raise ValueError(
                "PositionalEncoding: the last dimension of `inputs` must be known; "
                f"received shape {shape}."
            )

    def call(self, inputs, start_index=0, mask=None):
        dim = inputs.shape[-1]
        length = ops.shape(inputs)[1]
        positions = ops.cast(ops.arange(length), "float32") + ops.cast(start_index, "float32")
        feature = ops.arange(dim)
        pair = ops.cast(feature // 2 * 2, "float32")  # 2k for features 2k and 2k+1
        inverse_freq = ops.power(
            ops.cast(self.max_wavelength, "float32"), -pair / float(dim)
        )  # 1 / max_wavelength^{2k/D}
        angles = ops.expand_dims(positions, 1) * ops.expand_dims(inverse_freq, 0)  # [T, D]
        is_even = ops.expand_dims(feature % 2 == 0, 0)
        encoding = ops.where(is_even, ops.sin(angles), ops.cos(angles))
        encoding = ops.cast(encoding, self.compute_dtype)
        if self.mode == "add":
            return inputs + encoding
        return ops.broadcast_to(ops.expand_dims(encoding, 0), ops.shape(inputs))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"max_wavelength": self.max_wavelength, "mode": self.mode})
        return config

"""The glimpse sensor of the Recurrent Attention Model (Mnih et al. 2014)."""

from typing import Any

import keras
from keras import ops

from keras_adl.ops.glimpse import extract_glimpses
from keras_adl.utils import check_glimpse_sizes


@keras.saving.register_keras_serializable(package="keras_adl")
class GlimpseSensor(keras.layers.Layer):
    """A retina-like sensor: ``k`` patches around a location, each wider and coarser.

        ρ(x, l) = [patch_0, …, patch_{k−1}],   patch_s = area-average of the
                  (g · scale_factor^s)-wide square at l, reduced to g×g

    A thin layer over `keras_adl.ops.extract_glimpses` (no weights). Locations are ``(y, x)`` in
    ``[-1, 1]``, ``(-1, -1)`` being the image's top-left corner and ``(0, 0)`` its centre; parts
    of a patch outside the image are zeros. The gradient flows to the images; the Recurrent
    Attention Model stops it on the locations, which it trains by REINFORCE.

    Args:
        patch_size: ``g``, the output size of every patch.
        num_scales: ``k``, the number of patches.
        scale_factor: width ratio of successive patches (``>= 1``).
        flatten: return ``[B, k·g·g·C]`` instead of ``[B, k, g, g, C]``.
        **kwargs: standard layer arguments.

    Call arguments:
        images: ``[B, H, W, C]`` (``H`` and ``W`` may be dynamic; ``C`` must be known for
            ``flatten=True`` in a functional model).
        locations: ``[B, 2]`` glimpse centres ``(y, x)``.

    Returns:
        ``[B, k, g, g, C]`` glimpses, or ``[B, k·g·g·C]`` with ``flatten=True``.

    Example:

    >>> images = keras.Input((28, 28, 1))
    >>> locations = keras.Input((2,))
    >>> tuple(GlimpseSensor(8, num_scales=3)(images, locations).shape)
    (None, 3, 8, 8, 1)
    >>> tuple(GlimpseSensor(8, 3, flatten=True)(images, locations).shape)
    (None, 192)

    References:
        Mnih, Heess, Graves, Kavukcuoglu (2014). Recurrent Models of Visual Attention, §3.1.
        arXiv:1406.6247.
    """

    def __init__(
        self,
        patch_size: int,
        num_scales: int = 1,
        scale_factor: float = 2.0,
        flatten: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        check_glimpse_sizes(patch_size, num_scales, scale_factor, where="GlimpseSensor: ")
        if not isinstance(flatten, bool):
            raise TypeError(f"GlimpseSensor: `flatten` must be a bool; received {flatten!r}.")
        self.patch_size = patch_size
        self.num_scales = num_scales
        self.scale_factor = float(scale_factor)
        self.flatten = flatten

    def call(self, images, locations):
        glimpses = extract_glimpses(
            images, locations, self.patch_size, self.num_scales, self.scale_factor
        )
        if self.flatten:
            return ops.reshape(glimpses, (ops.shape(glimpses)[0], -1))
        return glimpses

    def compute_output_shape(self, images_shape, locations_shape):
        g, k, channels = self.patch_size, self.num_scales, images_shape[-1]
        if self.flatten:
            return (images_shape[0], None if channels is None else k * g * g * channels)
        return (images_shape[0], k, g, g, channels)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "patch_size": self.patch_size,
                "num_scales": self.num_scales,
                "scale_factor": self.scale_factor,
                "flatten": self.flatten,
            }
        )
        return config

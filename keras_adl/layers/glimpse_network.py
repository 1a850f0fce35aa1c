"""The glimpse network of the Recurrent Attention Model (Mnih et al. 2014)."""

from typing import Any

import keras
from keras import ops

from keras_adl.layers.glimpse_sensor import GlimpseSensor
from keras_adl.type_aliases import Initializer
from keras_adl.utils import check_choice, check_positive_int, check_rank, clone_initializer


def check_conv_filters(name, conv_filters, patch_size, *, where=""):
    """Checks the "what" path's filters (the argument ``name``): a sequence of positive
    integers, at most ``(patch_size − 1) // 2`` of them (each 3×3 valid convolution takes 2
    pixels off the patch); returns a tuple."""
    if isinstance(conv_filters, (str, bytes)) or not hasattr(conv_filters, "__iter__"):
        raise TypeError(
            f"{where}`{name}` must be a sequence of positive integers; received {conv_filters!r}."
        )
    filters = tuple(conv_filters)
    if any(isinstance(f, bool) or not isinstance(f, int) or f <= 0 for f in filters):
        raise ValueError(f"{where}`{name}` must be positive integers; received {conv_filters!r}.")
    if isinstance(patch_size, int) and 2 * len(filters) >= patch_size:
        raise ValueError(
            f"{where}{len(filters)} 3×3 valid convolutions need `patch_size` > "
            f"{2 * len(filters)}; received `patch_size`={patch_size}."
        )
    return filters


@keras.saving.register_keras_serializable(package="keras_adl")
class GlimpseNetwork(keras.layers.Layer):
    """Encodes what a glimpse sees and where it was taken into one feature vector.

        h_g = ReLU(Linear(ρ(x, l)))          (what)
        h_l = ReLU(Linear(l))                (where)
        g   = ReLU(Linear(h_g) + Linear(h_l))

    as in Mnih et al. (2014), §4 (sizes 128, 128 and 256 there). ``ρ`` is a `GlimpseSensor`.
    With ``combine="multiply"`` the two paths meet by an elementwise product instead, as in the
    Deep Recurrent Attention Model (Ba et al. 2015):

        g   = ReLU(Linear(h_g)) ⊙ ReLU(Linear(h_l))

    With ``conv_filters`` the "what" path is convolutional, as the DRAM's ``G_image``: the
    glimpse's scales are stacked as channels (``[B, g, g, k·C]``), then one 3×3 convolution
    per entry of ``conv_filters`` (ReLU, valid padding, so each shrinks the patch by 2) before
    the linear map ``h_g``.

    Args:
        patch_size: the glimpse sensor's patch size.
        num_scales: the glimpse sensor's number of scales.
        scale_factor: the glimpse sensor's factor between scales.
        glimpse_units: size of ``h_g``.
        location_units: size of ``h_l``.
        units: size of the output ``g``.
        kernel_initializer: initializer of the four linear maps.
        combine: ``"add"`` (RAM) or ``"multiply"`` (DRAM).
        conv_filters: filters of the 3×3 convolutions of the "what" path (default ``()``:
            none, the paper's linear map on the flattened glimpse); needs
            ``patch_size > 2·len(conv_filters)``.
        **kwargs: standard layer arguments.

    Call arguments:
        images: ``[B, H, W, C]``.
        locations: ``[B, 2]`` glimpse centres ``(y, x)`` in ``[-1, 1]``.

    Returns:
        ``g``: ``[B, units]``.

    Example:

    >>> images = keras.Input((32, 32, 1))
    >>> locations = keras.Input((2,))
    >>> tuple(GlimpseNetwork(8, num_scales=2, units=64)(images, locations).shape)
    (None, 64)

    References:
        Mnih, Heess, Graves, Kavukcuoglu (2014). Recurrent Models of Visual Attention.
        arXiv:1406.6247.
        Ba, Mnih, Kavukcuoglu (2015). Multiple Object Recognition with Visual Attention.
        arXiv:1412.7755.
    """

    def __init__(
        self,
        patch_size: int,
        num_scales: int = 1,
        scale_factor: float = 2.0,
        glimpse_units: int = 128,
        location_units: int = 128,
        units: int = 256,
        kernel_initializer: Initializer = "glorot_uniform",
        combine: str = "add",
        conv_filters: tuple[int, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = "GlimpseNetwork: "
        self.combine = check_choice("combine", combine, ("add", "multiply"), where=where)
        GlimpseSensor(patch_size, num_scales, scale_factor)  # validates the sensor arguments
        self.conv_filters = check_conv_filters(
            "conv_filters", conv_filters, patch_size, where=where
        )
        self.patch_size = patch_size
        self.num_scales = num_scales
        self.scale_factor = float(scale_factor)
        self.glimpse_units = check_positive_int("glimpse_units", glimpse_units, where=where)
        self.location_units = check_positive_int("location_units", location_units, where=where)
        self.units = check_positive_int("units", units, where=where)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def _dense(self, units, name, use_bias=True):
        return keras.layers.Dense(
            units,
            use_bias=use_bias,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name=name,
        )

    def build(self, images_shape, locations_shape):
        where = "GlimpseNetwork: "
        images_shape = check_rank("images", tuple(images_shape), 4, where=where)
        check_rank("locations", tuple(locations_shape), 2, where=where)
        if images_shape[-1] is None:
            raise ValueError(
                f"{where}the channel dimension of `images` must be known; received "
                f"shape {images_shape}."
            )
        self.sensor = GlimpseSensor(
            self.patch_size,
            self.num_scales,
            self.scale_factor,
            flatten=not self.conv_filters,
            dtype=self.dtype_policy,
            name="sensor",
        )
        features = self.num_scales * self.patch_size**2 * images_shape[-1]
        self.convs = []
        if self.conv_filters:  # the scales as channels, then 3×3 valid convolutions
            size, channels = self.patch_size, self.num_scales * images_shape[-1]
            for index, filters in enumerate(self.conv_filters):
                conv = keras.layers.Conv2D(
                    filters,
                    3,
                    activation="relu",
                    kernel_initializer=clone_initializer(self.kernel_initializer),
                    dtype=self.dtype_policy,
                    name=f"what_conv_{index + 1}",
                )
                conv.build((None, size, size, channels))
                self.convs.append(conv)
                size, channels = size - 2, filters
            features = size * size * channels
        self.what = self._dense(self.glimpse_units, "what")  # θ_g^0
        self.what.build((None, features))
        self.where = self._dense(self.location_units, "where")  # θ_g^1
        self.where.build((None, 2))
        self.what_out = self._dense(self.units, "what_out")  # θ_g^2
        self.what_out.build((None, self.glimpse_units))
        # θ_g^3; a sum needs one bias, a product one per factor.
        self.where_out = self._dense(self.units, "where_out", use_bias=self.combine == "multiply")
        self.where_out.build((None, self.location_units))

    def call(self, images, locations):
        glimpse = self.sensor(images, locations)  # ρ(x, l): flattened, or [B, k, g, g, C]
        if self.convs:
            batch, size = ops.shape(glimpse)[0], self.patch_size
            glimpse = ops.reshape(ops.transpose(glimpse, (0, 2, 3, 1, 4)), (batch, size, size, -1))
            for conv in self.convs:
                glimpse = conv(glimpse)
            glimpse = ops.reshape(glimpse, (batch, -1))
        h_g = ops.relu(self.what(glimpse))
        h_l = ops.relu(self.where(ops.cast(locations, self.compute_dtype)))
        if self.combine == "multiply":
            return ops.relu(self.what_out(h_g)) * ops.relu(self.where_out(h_l))
        return ops.relu(self.what_out(h_g) + self.where_out(h_l))

    def compute_output_shape(self, images_shape, locations_shape):
        return (images_shape[0], self.units)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "patch_size": self.patch_size,
                "num_scales": self.num_scales,
                "scale_factor": self.scale_factor,
                "glimpse_units": self.glimpse_units,
                "location_units": self.location_units,
                "units": self.units,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "combine": self.combine,
                "conv_filters": list(self.conv_filters),
            }
        )
        return config

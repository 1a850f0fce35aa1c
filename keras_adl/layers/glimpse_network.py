"""The glimpse network of the Recurrent Attention Model (Mnih et al. 2014)."""

from typing import Any

import keras
from keras import ops

from keras_adl._typing import Initializer
from keras_adl.layers.glimpse_sensor import GlimpseSensor
from keras_adl.utils import check_choice, check_positive_int, check_rank, clone_initializer


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

    Args:
        patch_size, num_scales, scale_factor: of the glimpse sensor.
        glimpse_units: size of ``h_g``.
        location_units: size of ``h_l``.
        units: size of the output ``g``.
        kernel_initializer: initializer of the four linear maps.
        combine: ``"add"`` (RAM) or ``"multiply"`` (DRAM).
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
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = "GlimpseNetwork: "
        self.combine = check_choice("combine", combine, ("add", "multiply"), where)
        GlimpseSensor(patch_size, num_scales, scale_factor)  # validates the sensor arguments
        self.patch_size = patch_size
        self.num_scales = num_scales
        self.scale_factor = float(scale_factor)
        self.glimpse_units = check_positive_int("glimpse_units", glimpse_units, where)
        self.location_units = check_positive_int("location_units", location_units, where)
        self.units = check_positive_int("units", units, where)
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
        images_shape = check_rank("images", tuple(images_shape), 4, where)
        check_rank("locations", tuple(locations_shape), 2, where)
        if images_shape[-1] is None:
            raise ValueError(
                f"{where}the channel dimension of `images` must be known; received "
                f"shape {images_shape}."
            )
        self.sensor = GlimpseSensor(
            self.patch_size,
            self.num_scales,
            self.scale_factor,
            flatten=True,
            dtype=self.dtype_policy,
            name="sensor",
        )
        features = self.num_scales * self.patch_size**2 * images_shape[-1]
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
        glimpse = self.sensor(images, locations)  # ρ(x, l), flattened
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
            }
        )
        return config

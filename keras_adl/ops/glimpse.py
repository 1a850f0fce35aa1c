"""The retina-like glimpse sensor of the Recurrent Attention Model (Mnih et al. 2014).

A glimpse at location ``l`` is ``k`` square patches centred at ``l``: the first ``g×g`` pixels
wide, each next one ``scale_factor`` times wider, every patch reduced to ``g×g`` by area
averaging. The ops here compute it as two small matrix products per scale,

    ρ(x, l)_s = R_s(l_y) · x · R_s(l_x)ᵀ,

where row ``i`` of ``R_s`` holds the fraction of each image row (column) covered by the ``i``-th
output cell of patch ``s``, divided by the cell's width. That is exact area averaging for any
real location and patch width, zero outside the image, linear in the image (its gradient flows)
and made of ``keras.ops`` only, so it is vectorised over the batch and compiles with XLA — unlike
``tf.image.extract_glimpse``, which quantises offsets to pixels, fills with noise by default and
has neither a gradient nor an XLA kernel.

Location convention: ``l = (y, x)`` (row first, as ``tf.image.extract_glimpse``), each in
``[-1, 1]`` across the image: ``(-1, -1)`` is the top-left corner of the image, ``(1, 1)`` the
bottom-right corner and ``(0, 0)`` its centre. In pixels (pixel ``i`` spans ``[i, i + 1)``) the
centre of the glimpse is ``((y + 1) H / 2, (x + 1) W / 2)``.

References:
    Mnih, Heess, Graves, Kavukcuoglu (2014). Recurrent Models of Visual Attention. NIPS.
    arXiv:1406.6247.
"""

from collections.abc import Sequence

import keras
import numpy as np
from keras import ops

from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_glimpse_sizes, check_rank, check_same_dim


def glimpse_widths(patch_size: int, num_scales: int, scale_factor: float = 2.0) -> list[float]:
    """Widths in pixels of the ``num_scales`` patches of a glimpse: ``g · scale_factor^s``.

    Args:
        patch_size: ``g``, the width of the finest patch.
        num_scales: the number of patches.
        scale_factor: the factor between the widths of successive patches.

    Returns:
        A list of ``num_scales`` floats.

    Example:

    >>> glimpse_widths(8, 3)
    [8.0, 16.0, 32.0]
    """
    check_glimpse_sizes(patch_size, num_scales, scale_factor, where="glimpse_widths: ")
    return [float(patch_size) * float(scale_factor) ** s for s in range(num_scales)]


def area_weights(
    centres: Tensor, widths: Sequence[float] | np.ndarray, cells: int, length: int | Tensor
) -> Tensor:
    """Area-averaging matrices of patches along one image axis.

    For patch ``s`` of width ``w_s`` centred at ``c`` (in pixels), output cell ``i`` covers
    ``[a_i, a_i + d)`` with ``d = w_s / cells`` and ``a_i = c − w_s/2 + i·d``; its weight on pixel
    ``p`` (covering ``[p, p + 1)``) is the overlap ``max(0, min(a_i + d, p + 1) − max(a_i, p))``
    divided by ``d``. Pixels outside ``[0, length)`` have no column, so they count as zeros.

    Args:
        centres: ``[B]`` float patch centres in pixels.
        widths: list of ``S`` patch widths in pixels (Python floats).
        cells: ``g``, the number of output cells per patch.
        length: the image's size along this axis (int or scalar tensor).

    Returns:
        ``[B, S, g, length]`` weights; a row sums to 1 when its cell lies inside the image.

    Example:

    >>> w = area_weights(ops.array([2.0]), [2.0, 4.0], 2, 4)
    >>> ops.convert_to_numpy(w)[0].tolist()
    [[[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]], [[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.5]]]
    """
    widths = np.asarray(widths, "float32")  # [S]
    steps = widths / cells  # d_s
    offsets = (
        np.arange(cells, dtype="float32")[None, :] * steps[:, None] - widths[:, None] / 2.0
    )  # a_i − c, [S, g]
    offsets, steps = ops.convert_to_tensor(offsets), ops.convert_to_tensor(steps)
    starts = ops.cast(centres, "float32")[:, None, None] + offsets[None]  # a_i, [B, S, g]
    starts = ops.expand_dims(starts, -1)  # [B, S, g, 1]
    ends = starts + steps[None, :, None, None]  # a_i + d
    pixels = ops.arange(length, dtype="float32")  # p
    overlap = ops.minimum(ends, pixels + 1.0) - ops.maximum(starts, pixels)
    return ops.maximum(overlap, 0.0) / steps[None, :, None, None]


def extract_glimpses(
    images: Tensor,
    locations: Tensor,
    patch_size: int,
    num_scales: int = 1,
    scale_factor: float = 2.0,
) -> Tensor:
    """Multi-resolution glimpses ``ρ(x, l)`` of images at locations (the RAM glimpse sensor).

    Patch ``s`` (``s = 0 … num_scales − 1``) is ``g · scale_factor^s`` pixels wide, centred at the
    location, and reduced to ``g×g`` by area averaging; parts outside the image are zeros. The
    result is linear in ``images``, so gradients reach the image (and any encoder before it).
    It is also piecewise linear in ``locations``, but the Recurrent Attention Model does not
    use that gradient: its locations are samples of a stochastic policy, trained by REINFORCE,
    and it stops their gradient (see `keras_adl.layers.RecurrentAttention`).

    Args:
        images: ``[B, H, W, C]`` float images (``H`` and ``W`` may vary between calls).
        locations: ``[B, 2]`` glimpse centres ``(y, x)`` in ``[-1, 1]``: ``(-1, -1)`` is the
            top-left corner of the image, ``(0, 0)`` its centre (see the module docstring).
            Values outside ``[-1, 1]`` are allowed (the patch moves further off the image).
        patch_size: ``g``, the output size of every patch.
        num_scales: ``k``, the number of patches.
        scale_factor: width ratio of successive patches (``>= 1``; the paper uses 2).

    Returns:
        ``[B, num_scales, g, g, C]`` glimpses in the dtype of ``images`` (float32 for integer
        images).

    Example:

    >>> image = ops.reshape(ops.arange(16, dtype="float32"), (1, 4, 4, 1))
    >>> glimpse = extract_glimpses(image, ops.zeros((1, 2)), patch_size=2, num_scales=2)
    >>> ops.convert_to_numpy(glimpse)[0, :, :, :, 0].tolist()  # centre 2×2, then 4×4 averaged
    [[[5.0, 6.0], [9.0, 10.0]], [[2.5, 4.5], [10.5, 12.5]]]
    """
    where = "extract_glimpses: "
    check_glimpse_sizes(patch_size, num_scales, scale_factor, where=where)
    image_shape = check_rank("images", images, 4, where=where)
    location_shape = check_rank("locations", locations, 2, where=where)
    if location_shape[-1] not in (None, 2):
        raise ValueError(
            f"{where}`locations` must have shape [B, 2] (y, x); received shape {location_shape}."
        )
    check_same_dim(
        "images", image_shape, 0, "locations", location_shape, 0, "The batch sizes", where=where
    )
    height, width = ops.shape(images)[1], ops.shape(images)[2]  # static or dynamic
    widths = glimpse_widths(patch_size, num_scales, scale_factor)
    if not keras.backend.is_float_dtype(keras.backend.standardize_dtype(images.dtype)):
        images = ops.cast(images, "float32")  # e.g. uint8 IDX pixels: area weights are fractions
    locations = ops.cast(locations, "float32")
    centre_y = (locations[:, 0] + 1.0) * (ops.cast(height, "float32") / 2.0)  # pixels
    centre_x = (locations[:, 1] + 1.0) * (ops.cast(width, "float32") / 2.0)
    rows = ops.cast(area_weights(centre_y, widths, patch_size, height), images.dtype)
    cols = ops.cast(area_weights(centre_x, widths, patch_size, width), images.dtype)
    # ρ_s = R_s(y) · x · R_s(x)ᵀ, per channel.
    partial = ops.einsum("bsih,bhwc->bsiwc", rows, images)  # [B, S, g, W, C]
    return ops.einsum("bsjw,bsiwc->bsijc", cols, partial)  # [B, S, g, g, C]

"""Argument checks shared by ops and layers.

Convention: a check takes ``(name, value, ...)`` (the value alone when the argument's name is
fixed, e.g. `check_seed`) and ``where=""``, keyword-only and last, the prefix of its messages.

Each check raises a ``ValueError`` (or ``TypeError``) that names the argument, what was expected
and what was received, so bad input fails at the call site instead of deep inside TensorFlow.
"""

import keras
import numpy as np

# TensorFlow only where it is the backend: importing this module on JAX or PyTorch loads none.
if keras.backend.backend() == "tensorflow":
    import tensorflow as tf

from keras_adl.conventions import PAD


def shape_of(x):
    """Returns the static shape of a tensor-like as a tuple (``None`` for unknown dims)."""
    shape = getattr(x, "shape", None)
    if shape is None:
        raise TypeError(f"Expected a tensor, received {type(x).__name__}: {x!r}")
    # A dimension that is not a plain integer is unknown: ``None``, or on JAX a symbolic
    # dimension of a functional model's unknown batch or time.
    return tuple(int(d) if isinstance(d, (int, np.integer)) else None for d in shape)


def check_rank(name, x, ranks, *, where=""):
    """Checks that ``x`` has one of the ranks in ``ranks``.

    Args:
        name: argument name used in the error message.
        x: tensor-like or a shape tuple.
        ranks: an int or a tuple of allowed ranks.
        where: optional prefix naming the layer or op.

    Returns:
        The static shape as a tuple.
    """
    shape = tuple(x) if isinstance(x, (tuple, list)) else shape_of(x)
    ranks = (ranks,) if isinstance(ranks, int) else tuple(ranks)
    if len(shape) not in ranks:
        expected = " or ".join(str(r) for r in ranks)
        raise ValueError(
            f"{where}`{name}` must have rank {expected}; received shape {shape} "
            f"(rank {len(shape)})."
        )
    return shape


def check_same_dim(name_a, shape_a, axis_a, name_b, shape_b, axis_b, what, *, where=""):
    """Checks that two static dimensions agree when both are known."""
    da, db = shape_a[axis_a], shape_b[axis_b]
    if da is not None and db is not None and da != db:
        raise ValueError(
            f"{where}{what} of `{name_a}` and `{name_b}` must match; received "
            f"`{name_a}` shape {tuple(shape_a)} and `{name_b}` shape {tuple(shape_b)}."
        )


def check_positive_int(name, value, *, allow_none=False, where=""):
    """Checks that ``value`` is a positive integer (or ``None`` when allowed)."""
    if value is None and allow_none:
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{where}`{name}` must be a positive integer; received {value!r}.")
    return value


def check_positive_ints(*, where="", **values):
    """`check_positive_int` on each keyword argument (a builder's sizes), in order."""
    for name, value in values.items():
        check_positive_int(name, value, where=where)


def check_image_shape(image_shape, *, where=""):
    """Checks that ``image_shape`` is three positive integers ``(H, W, C)``; returns a tuple."""
    image_shape = tuple(image_shape)
    check_rank("image_shape", image_shape, 3, where=where)
    if any(not isinstance(d, int) or isinstance(d, bool) or d <= 0 for d in image_shape):
        raise ValueError(
            f"{where}`image_shape` must be three positive integers (H, W, C); "
            f"received {image_shape!r}."
        )
    return image_shape


def check_glimpse_sizes(patch_size, num_scales, scale_factor, *, where=""):
    """Checks a glimpse's sizes: ``patch_size`` and ``num_scales`` positive integers,
    ``scale_factor`` a number >= 1 (`keras_adl.ops.extract_glimpses` and the glimpse layers)."""
    check_positive_int("patch_size", patch_size, where=where)
    check_positive_int("num_scales", num_scales, where=where)
    if (
        isinstance(scale_factor, bool)
        or not isinstance(scale_factor, (int, float))
        or not (scale_factor >= 1.0)
    ):
        raise ValueError(f"{where}`scale_factor` must be a number >= 1; received {scale_factor!r}.")


def check_rate(name, value, *, where=""):
    """Checks that ``value`` is a float in [0, 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < 1:
        raise ValueError(f"{where}`{name}` must be a float in [0, 1); received {value!r}.")
    return float(value)


def check_seed(seed, *, where=""):
    """Checks that ``seed`` is a non-negative integer; returns it as an ``int``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{where}`seed` must be a non-negative integer; received {seed!r}.")
    return int(seed)


def check_choice(name, value, choices, *, where=""):
    """Checks that ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{where}`{name}` must be one of {sorted(choices)}; received {value!r}.")
    return value


def keras_mask_of(x):
    """The Keras mask attached to ``x`` (e.g. by ``Embedding(mask_zero=True)``), or ``None``.

    Keras only fills a layer's ``mask`` argument when the call has a single tensor argument;
    layers that also take tensor keyword arguments read the mask from the tensor with this.
    """
    return getattr(x, "_keras_mask", None)


def clone_initializer(initializer):
    """A fresh copy of a Keras initializer.

    Keras 3 initializers without an explicit seed are deterministic per instance, so passing one
    instance to several sublayers gives every same-shaped weight the same initial values (e.g.
    ``W_a == U_a``). Each sublayer or weight gets its own clone instead.
    """
    return initializer.__class__.from_config(initializer.get_config())


def require_built(layer, method):
    """Raises a clear error when ``method`` of an unbuilt layer needs its weights."""
    if not layer.built:
        raise ValueError(
            f"{type(layer).__name__}: the layer must be built (called once, or `build()` with "
            f"its input shapes) before `{method}`."
        )


def replica_position():
    """``(replica id, replica count)`` inside a ``tf.distribute`` replica context, else
    ``(0, 1)``. The id may be a scalar tensor.

    A layer drawing random numbers from a ``keras.random.SeedGenerator`` under
    ``MirroredStrategy`` gets the same numbers on every replica (the generator's state is a
    mirrored variable); drawing ``count`` sets and keeping set ``id`` decorrelates them.
    """
    if keras.backend.backend() != "tensorflow":
        return 0, 1
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return 0, 1
    return context.replica_id_in_sync_group, context.num_replicas_in_sync


def replica_sum(x):
    """``x`` summed over the replicas of a ``tf.distribute`` step (``x`` itself outside one,
    and on JAX and PyTorch): the global count of a masked mean's tokens, so that each replica's
    ``local sum / global count`` adds up to the mean over the whole global batch."""
    if keras.backend.backend() != "tensorflow":
        return x
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync == 1:
        return x
    return context.all_reduce(tf.distribute.ReduceOp.SUM, x)


def check_captions(name, captions, *, where=""):
    """``(captions, real)``: integer ``[B, T]`` tokens padded with ``PAD`` at the end only,
    and the boolean ``[B, T]`` mask of their non-padding tokens."""
    captions = np.asarray(captions)
    if captions.ndim != 2:
        raise ValueError(
            f"{where}`{name}` must have shape [B, T]; received shape {captions.shape}."
        )
    if not np.issubdtype(captions.dtype, np.integer):
        raise TypeError(f"{where}`{name}` must be integer tokens; received dtype {captions.dtype}.")
    real = captions != PAD
    if (real[:, 1:] & ~real[:, :-1]).any():
        raise ValueError(
            f"{where}`{name}` must be padded at the end only (a token after a PAD={PAD})."
        )
    return captions, real

"""Dropout (Srivastava et al. 2014) whose masks do not depend on how the batch is distributed."""

from typing import Any

import keras
from keras import ops

from keras_adl.utils import check_rate, check_seed, replica_position

_WHERE = "GlobalBatchDropout: "


@keras.saving.register_keras_serializable(package="keras_adl")
class GlobalBatchDropout(keras.layers.Layer):
    """Inverted dropout that draws the mask of the whole global batch on every replica.

    In training, each element of ``x`` is kept with probability ``1 - rate`` and scaled:

        u ~ U[0, 1),   y = x / (1 - rate)  where u >= rate,   y = 0 elsewhere

    Outside training, or with ``rate = 0``, the layer is the identity.

    Why not ``keras.layers.Dropout``: under ``tf.distribute`` (``MirroredStrategy``,
    ``MultiWorkerMirroredStrategy``) replica ``r`` of ``n`` gets rows ``r·b … (r+1)·b - 1`` of
    the global batch (``b`` rows per replica), and Keras's layer draws a mask for those ``b``
    rows only, so a run on several replicas drops other units than a run on one device. This
    layer draws ``u`` for the whole global batch, ``[n·b, …]``, from its
    ``keras.random.SeedGenerator`` and keeps this replica's rows: the replicas together draw
    exactly the masks one device draws for the whole batch (as `RecurrentAttention` does for
    its sampled locations). With one replica, or outside a replica context, it is plain
    inverted dropout with a mask of the input's shape. ``u`` is drawn in float32 whatever the
    compute dtype, so ``mixed_float16`` drops the same units; the output has the input's
    dtype.

    No weights (only the seed generator's state).

    Args:
        rate: the fraction of the units dropped, a float in [0, 1).
        seed: optional non-negative integer seed of the masks.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, ...]`` float tensor (rank >= 1; axis 0 is the batch).
        training: apply dropout (``True``) or return ``inputs`` unchanged.
        mask: the Keras mask of ``inputs``; passed through unchanged.

    Returns:
        A tensor of the shape and dtype of ``inputs``, with the mask of ``inputs``.

    Example:

    >>> dropout = GlobalBatchDropout(0.5, seed=1)
    >>> x = ops.ones((4, 8))
    >>> bool(ops.all(dropout(x) == x))  # not training: the identity
    True
    >>> y = ops.convert_to_numpy(dropout(x, training=True))
    >>> sorted(set(y.ravel().tolist()))  # dropped, or kept and scaled by 1 / (1 - 0.5)
    [0.0, 2.0]

    References:
        Srivastava, Hinton, Krizhevsky, Sutskever, Salakhutdinov (2014). Dropout: A Simple Way
        to Prevent Neural Networks from Overfitting. JMLR 15(56), 1929-1958.
    """

    def __init__(self, rate: float, seed: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.rate = check_rate("rate", rate, where=_WHERE)
        self.seed = None if seed is None else check_seed(seed, where=_WHERE)
        self.seed_generator = keras.random.SeedGenerator(self.seed)
        self.supports_masking = True

    def build(self, inputs_shape):
        inputs_shape = tuple(inputs_shape)
        if len(inputs_shape) < 1:
            raise ValueError(
                f"{_WHERE}`inputs` must have rank >= 1 (axis 0 is the batch); received shape "
                f"{inputs_shape}."
            )

    def call(self, inputs, training=False):
        if not training or self.rate == 0:
            return inputs
        shape = ops.shape(inputs)
        batch = shape[0]
        replica, count = replica_position()
        # The global batch's draw, as one device would make it; this replica keeps its rows.
        values = keras.random.uniform(
            (count * batch, *shape[1:]), dtype="float32", seed=self.seed_generator
        )
        if count > 1:
            values = ops.take(values, ops.arange(batch) + replica * batch, axis=0)
        scale = ops.cast(1.0 / (1.0 - self.rate), inputs.dtype)
        return ops.where(
            ops.greater_equal(values, self.rate), inputs * scale, ops.zeros_like(inputs)
        )

    def compute_output_shape(self, inputs_shape):
        return tuple(inputs_shape)

    def get_config(self):
        config = super().get_config()
        config.update({"rate": self.rate, "seed": self.seed})
        return config

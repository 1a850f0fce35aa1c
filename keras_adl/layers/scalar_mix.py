"""ELMo's scalar mix: a learned, softmax-weighted and scaled sum of a biLM's layers."""

from collections.abc import Sequence
from typing import Any

import keras
import numpy as np
from keras import ops

from keras_adl.utils import check_positive_int, check_rank, keras_mask_of, require_built

_WHERE = "ScalarMix: "
_EPSILON = 1e-12  # AllenNLP's (older) layer-norm epsilon


@keras.saving.register_keras_serializable(package="keras_adl")
class ScalarMix(keras.layers.Layer):
    """``γ · Σ_j softmax(s)_j · h_j``: ELMo's task-specific combination of the biLM's layers.

    Peters et al. (2018, eq. 1) mix the ``L`` layers ``h_0 … h_{L-1}`` of the biLM (the token
    layer and each LSTM layer) with softmax-normalised scalar weights ``s`` and scale the sum
    by ``γ``; both are learned with the downstream task. The semantics are exactly those of
    AllenNLP's ``ScalarMix`` (``allennlp/modules/scalar_mix.py``): ``s`` starts at
    ``initial_scalar_parameters`` (zeros: equal weights) and ``γ`` at 1.

    With ``layer_norm=True`` each layer is first normalised as AllenNLP's ``_do_layer_norm``
    does, with ONE mean and ONE variance per layer over all its unmasked elements (every
    unmasked ``(b, t)`` position × all ``D`` features):

        μ_j = Σ_{unmasked} h_j / n,   σ²_j = Σ_{unmasked} (h_j - μ_j)² / n,
        h_j ← (h_j - μ_j) / sqrt(σ²_j + 1e-12)

    Masked positions do not enter the statistics (their values, even non-finite ones, do not
    change the unmasked outputs); without a mask every position counts. The statistics are
    computed in float32 whatever the compute dtype. A batch with no unmasked position has no
    statistics: it is mixed without normalisation (AllenNLP would divide by zero). As in
    AllenNLP, masked positions of the output are not zeroed: the Keras mask marks them.

    Weights: ``scalar_parameters`` ``[num_layers]`` and the scalar ``gamma``: 2 trainable
    weights.

    Args:
        num_layers: ``L``, the number of layers mixed.
        layer_norm: normalise each layer before mixing (AllenNLP's ``do_layer_norm``).
        initial_scalar_parameters: ``L`` floats, the initial ``s`` (default zeros).
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: a ``[B, L, T, D]`` tensor (layer axis 1), or a list of ``L`` tensors
            ``[B, T, D]``.
        mask: optional ``[B, T]`` bool (or 0/1) mask of real positions; for the list form,
            the Keras mask of the first tensor when not given.

    Returns:
        ``[B, T, D]`` in the compute dtype, with the mask as its Keras mask.

    Example:

    >>> mix = ScalarMix(3, initial_scalar_parameters=[0.0, 1.0, 2.0])
    >>> layers = ops.stack([ops.full((2, 4, 8), float(j)) for j in range(3)], axis=1)
    >>> out = mix(layers)
    >>> tuple(out.shape), [round(float(w), 3) for w in mix.mixing_weights()]
    ((2, 4, 8), [0.09, 0.245, 0.665])
    >>> round(float(out[0, 0, 0]), 3)  # γ · Σ_j w_j · j with γ = 1
    1.575

    References:
        Peters et al. (2018). Deep contextualized word representations, section 3.2, eq. 1.
        NAACL-HLT. arXiv:1802.05365.
        Gardner et al. (2018). AllenNLP: A Deep Semantic Natural Language Processing Platform
        (``allennlp.modules.scalar_mix.ScalarMix``).
    """

    def __init__(
        self,
        num_layers: int,
        layer_norm: bool = False,
        initial_scalar_parameters: Sequence[float] | np.ndarray | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_layers = check_positive_int("num_layers", num_layers, where=_WHERE)
        if not isinstance(layer_norm, bool):
            raise TypeError(f"{_WHERE}`layer_norm` must be a bool; received {layer_norm!r}.")
        self.layer_norm = layer_norm
        if initial_scalar_parameters is not None:
            values = initial_scalar_parameters
            if (
                isinstance(values, (str, bytes))
                or not isinstance(values, (list, tuple, np.ndarray))
                or len(values) != num_layers
                or any(
                    isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer))
                    for v in values
                )
            ):
                raise ValueError(
                    f"{_WHERE}`initial_scalar_parameters` must be None or a list of num_layers = "
                    f"{num_layers} numbers; received {initial_scalar_parameters!r}."
                )
            initial_scalar_parameters = [float(v) for v in values]
        self.initial_scalar_parameters = initial_scalar_parameters
        self.supports_masking = True

    def _check_layer_count(self, count, shape):
        if count is not None and count != self.num_layers:
            raise ValueError(
                f"{_WHERE}`inputs` holds {count} layers (shape {shape}) but num_layers = "
                f"{self.num_layers}."
            )

    def build(self, inputs_shape):
        if (
            isinstance(inputs_shape, (list, tuple))
            and inputs_shape
            and isinstance(inputs_shape[0], (list, tuple))
        ):  # the list form
            self._check_layer_count(len(inputs_shape), [tuple(s) for s in inputs_shape])
            for shape in inputs_shape:
                check_rank("inputs", tuple(shape), 3, where=_WHERE)
        else:
            shape = check_rank("inputs", tuple(inputs_shape), 4, where=_WHERE)
            self._check_layer_count(shape[1], shape)
        initial = self.initial_scalar_parameters or [0.0] * self.num_layers

        def scalar_initializer(shape, dtype=None):
            return ops.convert_to_tensor(np.asarray(initial, "float32"), dtype=dtype)

        self.scalar_parameters = self.add_weight(
            shape=(self.num_layers,), initializer=scalar_initializer, name="scalar_parameters"
        )
        self.gamma = self.add_weight(shape=(), initializer="ones", name="gamma")

    def _stacked(self, inputs):
        """``inputs`` as one ``[B, L, T, D]`` tensor."""
        if isinstance(inputs, (list, tuple)):
            self._check_layer_count(len(inputs), [tuple(x.shape) for x in inputs])
            for x in inputs:
                check_rank("inputs", x, 3, where=_WHERE)
            return ops.stack(list(inputs), axis=1)
        shape = check_rank("inputs", inputs, 4, where=_WHERE)
        self._check_layer_count(shape[1], shape)
        return inputs

    @staticmethod
    def _first_mask(inputs, mask):
        if isinstance(mask, (list, tuple)):  # Keras fills one mask per tensor of the list form
            mask = mask[0] if mask else None
        if mask is None and isinstance(inputs, (list, tuple)) and inputs:
            mask = keras_mask_of(inputs[0])
        return mask

    def _normalised(self, x, mask):
        """Each layer of ``x`` ``[B, L, T, D]`` (float32) normalised by its own statistics."""
        axes = (0, 2, 3)
        if mask is None:
            mean = ops.mean(x, axis=axes, keepdims=True)
            variance = ops.mean(ops.square(x - mean), axis=axes, keepdims=True)
            return (x - mean) / ops.sqrt(variance + _EPSILON)
        keep = ops.expand_dims(ops.expand_dims(mask, 1), -1)  # [B, 1, T, 1]
        features = ops.cast(ops.shape(x)[-1], "float32")
        count = ops.sum(ops.cast(mask, "float32")) * features  # unmasked (b, t) × D
        divisor = ops.maximum(count, 1.0)
        zero = ops.zeros((), "float32")
        mean = ops.sum(ops.where(keep, x, zero), axis=axes, keepdims=True) / divisor
        centred = ops.where(keep, x - mean, zero)
        variance = ops.sum(ops.square(centred), axis=axes, keepdims=True) / divisor
        # A batch with nothing unmasked: mean 0, variance 1 (no normalisation), not 0 / 0.
        variance = ops.where(ops.greater(count, 0.0), variance, ops.ones_like(variance))
        return (x - mean) / ops.sqrt(variance + _EPSILON)

    def call(self, inputs, mask=None):
        mask = self._first_mask(inputs, mask)
        x = self._stacked(inputs)
        if mask is not None:
            check_rank("mask", mask, 2, where=_WHERE)
            mask = ops.cast(mask, "bool")
        scalars = ops.cast(self.scalar_parameters, "float32")
        exp = ops.exp(scalars - ops.max(scalars))
        weights = exp / ops.sum(exp)  # softmax(s), [L]
        gamma = ops.cast(self.gamma, "float32")
        if self.layer_norm:
            x = self._normalised(ops.cast(x, "float32"), mask)
            return ops.cast(gamma * self._weighted_sum(weights, x), self.compute_dtype)
        dtype = self.compute_dtype
        mixed = self._weighted_sum(ops.cast(weights, dtype), ops.cast(x, dtype))
        return ops.cast(gamma, dtype) * mixed

    def _weighted_sum(self, weights, x):
        """``Σ_l weights[l] · x[:, l]``, ``[B, T, D]``, as a sum over the (few) layers: with an
        unknown layer dimension in a functional model (JAX traces it symbolically), a
        ``[1, L, 1, 1]`` weight tensor cannot broadcast against ``x``."""
        return sum(weights[i] * x[:, i] for i in range(self.num_layers))

    def compute_output_shape(self, inputs_shape):
        # Declared rather than traced: PyTorch traces unknown dimensions with a placeholder
        # size, which the layer-count check would reject.
        if inputs_shape and isinstance(inputs_shape[0], (list, tuple)):  # the list form
            return tuple(inputs_shape[0])
        shape = tuple(inputs_shape)
        return (shape[0],) + shape[2:]

    def compute_mask(self, inputs, mask=None):
        mask = self._first_mask(inputs, mask)
        return None if mask is None else ops.cast(mask, "bool")

    def mixing_weights(self):
        """The current ``softmax(s)`` as a numpy array ``[num_layers]`` (e.g. for plotting)."""
        require_built(self, "mixing_weights()")
        s = np.asarray(ops.convert_to_numpy(self.scalar_parameters), "float64")
        e = np.exp(s - s.max())
        return (e / e.sum()).astype("float32")

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_layers": self.num_layers,
                "layer_norm": self.layer_norm,
                "initial_scalar_parameters": self.initial_scalar_parameters,
            }
        )
        return config

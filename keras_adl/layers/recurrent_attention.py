"""The recurrent core of the Recurrent Attention Model (Mnih et al. 2014): glimpses and a policy."""

import math
from typing import Any

import keras
from keras import ops

from keras_adl.layers.glimpse_network import GlimpseNetwork, check_conv_filters
from keras_adl.type_aliases import Initializer
from keras_adl.utils import (
    check_choice,
    check_glimpse_sizes,
    check_positive_int,
    check_rank,
    clone_initializer,
    replica_position,
)


@keras.saving.register_keras_serializable(package="keras_adl")
class RecurrentAttention(keras.layers.Layer):
    """Looks at an image through ``n`` glimpses, choosing where to look next from what it saw.

    For ``t = 1 … n``, with ``l_0 = (0, 0)`` (the image centre):

        g_t = f_g(x, l_{t−1})                         glimpse network (`GlimpseNetwork`)
        h_t = f_h(h_{t−1}, g_t)                       core network (LSTM, GRU or ReLU RNN)
        μ_t = tanh(Linear(stop_gradient(h_t))),
        l_t ~ N(μ_t, σ² I)                            location network (for t < n)
        b_t = Linear(stop_gradient(h_t))              baseline (for t < n)

    as in Mnih et al. (2014). While training, ``l_t`` is a sample of the Gaussian policy with a
    fixed ``σ = location_std``; its log-density ``log π(l_t | h_t)`` is returned for REINFORCE,
    with the gradient flowing to ``μ_t`` and so to the location network, but not through the
    sample itself (stopping the gradient at ``μ_t`` instead, a bug found in public code, leaves
    the location network untrained). The location network reads ``stop_gradient(h_t)``, so the
    policy gradient trains only the location network and the classification loss trains the
    core and glimpse networks. This is a deliberate deviation: the paper's REINFORCE gradient
    is with respect to all parameters (``policy_gradient_to_core=True``), but letting it into
    the core learned worse here (3 seeds, 150 epochs: median test error 0.73 against 0.12 on
    60×60 cluttered digits, 0.075 against 0.061 on 32×32 translated ones; see
    benchmarks/RESULTS.md). The glimpse is taken at the sample
    clipped to ``[-1, 1]``; the clipping belongs to the environment, so the log-density is that
    of the unclipped sample. The locations fed to the glimpse network carry no gradient. At
    inference (``training=False``) the learned policy is deterministic: ``l_t = μ_t``.

    With ``policy="random"`` the same network looks at ``l_1 … l_{n−1}`` drawn uniformly from
    ``[-1, 1]²`` (training and inference); it has no location network or baseline. It is the
    random-glimpse baseline of the paper, differing from the learned model only in the policy.

    Args:
        num_glimpses: ``n``.
        patch_size: the glimpse sensor's patch size.
        num_scales: the glimpse sensor's number of scales.
        scale_factor: the glimpse sensor's factor between scales.
        glimpse_units: size of ``h_g`` in the glimpse network (128 in the paper).
        location_units: size of ``h_l`` in the glimpse network (128 in the paper).
        glimpse_output_units: size of ``g`` in the glimpse network (256 in the paper).
        units: size of the core state ``h`` (256 in the paper).
        core: ``"lstm"``, ``"gru"`` or ``"rnn"`` (a ReLU RNN, as the paper's MNIST models).
        glimpse_filters: filters of 3×3 convolutions on the glimpse before ``h_g``
            (`GlimpseNetwork`'s ``conv_filters``; default ``()``, the paper's linear map).
        location_std: ``σ`` of the Gaussian policy (the paper: a fixed variance; 0.05–0.2 work).
        policy: ``"learned"`` or ``"random"``.
        policy_gradient_to_core: let REINFORCE's gradient through ``h_t`` into the core and
            glimpse networks, as in the paper (default ``False``: the location network reads
            ``stop_gradient(h_t)``, the deviation above; the baseline always does).
        seed: seed of the sampling (under ``tf.distribute`` each replica draws its own numbers).
        kernel_initializer: of the linear maps.
        **kwargs: standard layer arguments.

    Call arguments:
        images: ``[B, H, W, C]``.
        training: sample locations (``True``) or use the means.

    Returns:
        A dict: ``hidden`` ``[B, units]`` (the final core output ``h_n``); ``locations``
        ``[B, n, 2]`` (float32, the glimpse centres ``l_0 … l_{n−1}``, ``(y, x)``);
        ``log_probs`` ``[B, n−1]`` (float32, ``log π(l_t | h_t)``; zeros for the random policy);
        ``baselines`` ``[B, n−1]`` (float32, ``b_t``; zeros for the random policy).

    Example:

    >>> layer = RecurrentAttention(num_glimpses=3, patch_size=4, units=32,
    ...                            glimpse_output_units=32)
    >>> out = layer(keras.Input((16, 16, 1)))
    >>> {k: tuple(v.shape) for k, v in sorted(out.items())}
    {'baselines': (None, 2), 'hidden': (None, 32), 'locations': (None, 3, 2), 'log_probs': (None, 2)}

    References:
        Mnih, Heess, Graves, Kavukcuoglu (2014). Recurrent Models of Visual Attention.
        arXiv:1406.6247.
        Williams (1992). Simple statistical gradient-following algorithms for connectionist
        reinforcement learning. Machine Learning 8.
    """

    # How the glimpse network joins "what" and "where" (`GlimpseNetwork`'s ``combine``).
    _glimpse_combine = "add"

    def __init__(
        self,
        num_glimpses: int = 4,
        patch_size: int = 8,
        num_scales: int = 1,
        scale_factor: float = 2.0,
        glimpse_units: int = 128,
        location_units: int = 128,
        glimpse_output_units: int = 256,
        units: int = 256,
        core: str = "lstm",
        glimpse_filters: tuple[int, ...] = (),
        location_std: float = 0.1,
        policy: str = "learned",
        policy_gradient_to_core: bool = False,
        seed: int | None = None,
        kernel_initializer: Initializer = "glorot_uniform",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = "RecurrentAttention: "
        self.num_glimpses = check_positive_int("num_glimpses", num_glimpses, where=where)
        self.units = check_positive_int("units", units, where=where)
        self.core = check_choice("core", core, ("lstm", "gru", "rnn"), where=where)
        self.policy = check_choice("policy", policy, ("learned", "random"), where=where)
        if (
            isinstance(location_std, bool)
            or not isinstance(location_std, (int, float))
            or not (location_std > 0)
        ):
            raise ValueError(
                f"{where}`location_std` must be a positive number; received {location_std!r}."
            )
        self.location_std = float(location_std)
        if not isinstance(policy_gradient_to_core, bool):
            raise TypeError(
                f"{where}`policy_gradient_to_core` must be True or False; received "
                f"{policy_gradient_to_core!r}."
            )
        self.policy_gradient_to_core = policy_gradient_to_core
        self.patch_size = patch_size
        self.num_scales = num_scales
        self.scale_factor = float(scale_factor)
        self.glimpse_units = glimpse_units
        self.location_units = location_units
        self.glimpse_output_units = glimpse_output_units
        self.glimpse_filters = check_conv_filters(
            "glimpse_filters", glimpse_filters, patch_size, where=where
        )
        self.seed = seed
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.seed_generator = keras.random.SeedGenerator(seed)
        check_glimpse_sizes(patch_size, num_scales, scale_factor, where=where)
        for name, value in (
            ("glimpse_units", glimpse_units),
            ("location_units", location_units),
            ("glimpse_output_units", glimpse_output_units),
        ):
            check_positive_int(name, value, where=where)

    def build(self, images_shape):
        images_shape = check_rank("images", tuple(images_shape), 4, where="RecurrentAttention: ")
        self.glimpse_network = GlimpseNetwork(
            self.patch_size,
            self.num_scales,
            self.scale_factor,
            self.glimpse_units,
            self.location_units,
            self.glimpse_output_units,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            combine=self._glimpse_combine,
            conv_filters=self.glimpse_filters,
            dtype=self.dtype_policy,
            name="glimpse_network",
        )
        self.glimpse_network.build(images_shape, (None, 2))
        self.core_cell = self._make_core("core", self.glimpse_output_units)
        if self._chooses_locations():
            self.location_network = keras.layers.Dense(
                2,
                kernel_initializer=clone_initializer(self.kernel_initializer),
                dtype=self.dtype_policy,
                name="location_network",
            )
            self.location_network.build((None, self.units))
            self.baseline = keras.layers.Dense(1, dtype=self.dtype_policy, name="baseline")
            self.baseline.build((None, self.units))

    def _make_core(self, name, input_units):
        """A built recurrent cell of ``units`` (the ``core`` kind) reading ``input_units``."""
        cell_kwargs = dict(
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name=name,
        )
        if self.core == "lstm":
            cell = keras.layers.LSTMCell(self.units, **cell_kwargs)
        elif self.core == "gru":
            cell = keras.layers.GRUCell(self.units, **cell_kwargs)
        else:
            cell = keras.layers.SimpleRNNCell(self.units, activation="relu", **cell_kwargs)
        cell.build((None, input_units))
        return cell

    def _chooses_locations(self):
        """Whether the layer has a location network and baseline: a learned policy with a
        location to choose (the first glimpse is at the centre, so one glimpse chooses none)."""
        return self.policy == "learned" and self.num_glimpses > 1

    def _draw(self, sample, batch):
        """``[batch, 2]`` random numbers, different on each ``tf.distribute`` replica.

        Every replica draws the numbers of the global batch (``count × batch`` rows, as one
        device would for the whole batch) and keeps its own contiguous rows, the slice of the
        global batch that ``tf.distribute`` gave it: training on several replicas samples the
        same locations as on one device."""
        replica, count = replica_position()
        values = sample((count * batch, 2), seed=self.seed_generator)
        if count == 1:
            return values
        return ops.take(values, ops.arange(batch) + replica * batch, axis=0)

    def _policy_input(self, hidden):
        """What the location network reads: ``stop_gradient(h_t)`` (REINFORCE stays out of the
        core), or ``h_t`` itself with ``policy_gradient_to_core`` (the paper)."""
        return hidden if self.policy_gradient_to_core else ops.stop_gradient(hidden)

    def _next_location(self, hidden, batch, training):
        """``(l_t clipped, log π(l_t | h_t), b_t)`` for the next glimpse."""
        if self.policy == "random":
            location = self._draw(
                lambda shape, seed: keras.random.uniform(shape, -1.0, 1.0, seed=seed), batch
            )
            zeros = ops.zeros((batch,), "float32")
            return location, zeros, zeros
        # μ_t = f_l(h_t); by default the policy reads h_t without sending gradients into it.
        mean = ops.tanh(ops.cast(self.location_network(self._policy_input(hidden)), "float32"))
        sigma = self.location_std
        if training:
            noise = self._draw(keras.random.normal, batch)
            sample = ops.stop_gradient(mean + sigma * noise)  # l_t ~ N(μ_t, σ²I), no path back
        else:
            sample = mean
        # log N(l_t; μ_t, σ²I) = −‖l_t − μ_t‖² / (2σ²) − 2 log(σ √(2π)); the gradient reaches μ_t.
        log_prob = -ops.sum(ops.square(sample - mean), axis=-1) / (2.0 * sigma**2) - 2.0 * math.log(
            sigma * math.sqrt(2.0 * math.pi)
        )
        baseline = ops.cast(self.baseline(ops.stop_gradient(hidden)), "float32")[:, 0]  # b_t
        return ops.clip(sample, -1.0, 1.0), log_prob, baseline

    def call(self, images, training=None):
        batch = ops.shape(images)[0]
        states = self.core_cell.get_initial_state(batch_size=batch)
        location = ops.zeros((batch, 2), "float32")  # l_0: the centre
        locations, log_probs, baselines = [location], [], []
        for t in range(self.num_glimpses):
            glimpse = self.glimpse_network(images, ops.stop_gradient(location))  # g_t
            hidden, states = self.core_cell(glimpse, states, training=training)  # h_t
            if t == self.num_glimpses - 1:
                break
            location, log_prob, baseline = self._next_location(hidden, batch, training)
            locations.append(location)
            log_probs.append(log_prob)
            baselines.append(baseline)
        if log_probs:
            log_probs, baselines = ops.stack(log_probs, axis=1), ops.stack(baselines, axis=1)
        else:
            log_probs = baselines = ops.zeros((batch, 0), "float32")
        return {
            "hidden": hidden,
            "locations": ops.stack(locations, axis=1),
            "log_probs": log_probs,
            "baselines": baselines,
        }

    def compute_output_spec(self, images, training=None):
        batch, steps = images.shape[0], self.num_glimpses
        return {
            "hidden": keras.KerasTensor((batch, self.units), self.compute_dtype),
            "locations": keras.KerasTensor((batch, steps, 2), "float32"),
            "log_probs": keras.KerasTensor((batch, steps - 1), "float32"),
            "baselines": keras.KerasTensor((batch, steps - 1), "float32"),
        }

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_glimpses": self.num_glimpses,
                "patch_size": self.patch_size,
                "num_scales": self.num_scales,
                "scale_factor": self.scale_factor,
                "glimpse_units": self.glimpse_units,
                "location_units": self.location_units,
                "glimpse_output_units": self.glimpse_output_units,
                "units": self.units,
                "core": self.core,
                "glimpse_filters": list(self.glimpse_filters),
                "location_std": self.location_std,
                "policy": self.policy,
                "policy_gradient_to_core": self.policy_gradient_to_core,
                "seed": self.seed,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config

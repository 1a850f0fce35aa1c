"""The recurrent core of the Deep Recurrent Attention Model (Ba, Mnih & Kavukcuoglu 2015):
a context network, two stacked RNNs and a glimpse policy that reads several objects in turn."""

from typing import Any

import keras
from keras import ops

from keras_adl.layers.recurrent_attention import RecurrentAttention
from keras_adl.utils import check_positive_int, check_rank, clone_initializer


@keras.saving.register_keras_serializable(package="keras_adl")
class DeepRecurrentAttention(RecurrentAttention):
    """Reads ``S`` objects from an image, ``N`` glimpses each, choosing where to look next.

    With ``x̃`` a coarse ``context_size`` view of the image, and ``k = 1 … S·N``:

        r²_0 = f_c(x̃)                                   context network (initial top state)
        l_k ~ N(tanh(E(stop_gradient(r²_{k−1}))), σ² I)   emission network (the policy)
        b_k = B(stop_gradient(r²_{k−1}))                  baseline
        g_k = f_g(x, l_k)                               glimpse network, "what" ⊙ "where"
        r¹_k = R¹(g_k, r¹_{k−1})                         bottom RNN
        r²_k = R²(r¹_k, r²_{k−1})                        top RNN

    and symbol ``s`` is read from ``r²_{s·N}``, the top state after its ``N`` glimpses
    (``read_from="top"``), or from the bottom state ``r¹_{s·N}`` (``read_from="bottom"``). The
    bottom RNN accumulates what the glimpses saw; the top RNN, started from a coarse view of
    the whole image, decides where to look, so the first glimpse is already a choice.

    One deviation from Ba et al. (2015), whose classifier reads ``r¹`` while ``r²`` and the
    context network serve only the policy and learn from REINFORCE alone: by default
    (``read_from="top"``) the classifier reads ``r²`` and the policy reads
    ``stop_gradient(r²)``, as our RAM's policy reads
    ``stop_gradient(h)`` (see `RecurrentAttention`). With the policy gradient flowing into
    the top RNN and the context network, Adam's per-weight normalisation turned its noise into
    a drift of the mean location towards the image's edges, where ``tanh`` saturates: with
    rewards drawn at random (no signal at all) the mean glimpse moved from the centre to
    ``|μ| ≈ 0.6`` in 30 steps, and on digit strips every glimpse ended on the right edge
    (benchmarks/RESULTS.md). So REINFORCE trains the emission network only, and the
    cross-entropy the context, glimpse and recurrent networks and the classifier.

    ``f_c`` is three 3×3 convolutions (``context_filters``, ReLU, same padding) on ``x̃``, then
    a linear map to ``units`` with ``tanh``; its output is the top RNN's initial output (an
    LSTM's cell state starts at zero). ``x̃`` is the image averaged over ``d × d`` blocks,
    ``d = min(H // h, W // w)`` (an antialiased downsampling that XLA compiles), then resized
    bilinearly to exactly ``context_size = (h, w)`` (a no-op when ``d`` divides the image;
    for an image size known only at run time, the resize alone). The glimpse network
    multiplies its "what" and "where" features (`GlimpseNetwork` with ``combine="multiply"``),
    as the paper's ``G_image ⊙ G_loc``; the paper's ``G_image`` is convolutional, here a
    linear layer unless ``glimpse_filters`` gives it 3×3 convolutions. The policy's sampling,
    clipping and log-density are those of `RecurrentAttention`. At inference the policy is deterministic (``l_k = μ_k``). With
    ``policy="random"`` every location is uniform in ``[-1, 1]²``.

    Args:
        num_symbols: ``S``, the objects read (include an end symbol if the sequences vary in
            length).
        glimpses_per_symbol: ``N``.
        context_size: ``(h, w)`` of the coarse image the context network sees.
        context_filters: filters of the context network's three convolutions.
        read_from: ``"top"`` (``r²``, which starts from the context network, so the coarse
            view can carry the classification) or ``"bottom"`` (``r¹``, as the paper: the
            symbols are read from what the glimpses saw alone; the context network and the
            top RNN then only place the glimpses, and since the policy reads
            ``stop_gradient(r²)`` nothing trains them: they are non-trainable, fixed random
            features of the coarse view and of ``r¹`` that the emission network reads).
        **kwargs: the arguments of `RecurrentAttention` but ``num_glimpses``, and the
            standard layer arguments. ``patch_size``, ``num_scales``, ``scale_factor``,
            ``glimpse_units``, ``location_units``, ``glimpse_output_units``, ``units``,
            ``core``, ``glimpse_filters``, ``location_std``, ``policy``, ``seed`` and
            ``kernel_initializer`` are as in `RecurrentAttention` (``units`` for both RNNs).
            ``policy_gradient_to_core``: as in `RecurrentAttention`: REINFORCE's gradient
            reaches the top RNN (and through it the context network and the bottom RNN), as in
            the paper; with ``read_from="bottom"`` the context network and the top RNN then
            stay trainable.

    Call arguments:
        images: ``[B, H, W, C]``.
        training: sample locations (``True``) or use the means.

    Returns:
        A dict: ``hidden`` ``[B, S, units]`` (``r²`` after each symbol's glimpses);
        ``locations`` ``[B, S·N, 2]`` (float32, the glimpse centres ``l_1 … l_{S·N}``,
        ``(y, x)``); ``log_probs`` and ``baselines`` ``[B, S·N]`` (float32,
        ``log π(l_k | r²_{k−1})`` and ``b_k``; zeros for the random policy).

    Example:

    >>> layer = DeepRecurrentAttention(num_symbols=3, glimpses_per_symbol=2, patch_size=4,
    ...                                units=16, glimpse_output_units=16)
    >>> out = layer(keras.Input((16, 48, 1)))
    >>> {k: tuple(v.shape) for k, v in sorted(out.items())}
    {'baselines': (None, 6), 'hidden': (None, 3, 16), 'locations': (None, 6, 2), 'log_probs': (None, 6)}

    References:
        Ba, Mnih, Kavukcuoglu (2015). Multiple Object Recognition with Visual Attention.
        arXiv:1412.7755.
        Mnih, Heess, Graves, Kavukcuoglu (2014). Recurrent Models of Visual Attention.
        arXiv:1406.6247.
    """

    _glimpse_combine = "multiply"

    def __init__(
        self,
        num_symbols: int = 2,
        glimpses_per_symbol: int = 3,
        context_size: tuple[int, int] = (8, 8),
        context_filters: tuple[int, int, int] = (16, 16, 32),
        read_from: str = "top",
        **kwargs: Any,
    ) -> None:
        where = "DeepRecurrentAttention: "
        if read_from not in ("top", "bottom"):
            raise ValueError(
                f"{where}`read_from` must be 'top' or 'bottom'; received {read_from!r}."
            )
        self.read_from = read_from
        if "num_glimpses" in kwargs:
            raise TypeError(
                f"{where}the number of glimpses is `num_symbols` × `glimpses_per_symbol`; "
                f"received `num_glimpses`={kwargs['num_glimpses']!r}."
            )
        self.num_symbols = check_positive_int("num_symbols", num_symbols, where=where)
        self.glimpses_per_symbol = check_positive_int(
            "glimpses_per_symbol", glimpses_per_symbol, where=where
        )
        size = tuple(context_size) if isinstance(context_size, (tuple, list)) else ()
        if len(size) != 2 or any(
            isinstance(d, bool) or not isinstance(d, int) or d <= 0 for d in size
        ):
            raise ValueError(
                f"{where}`context_size` must be two positive integers (h, w); received "
                f"{context_size!r}."
            )
        self.context_size = size
        context_filters = tuple(context_filters)
        if len(context_filters) != 3 or any(
            isinstance(f, bool) or not isinstance(f, int) or f <= 0 for f in context_filters
        ):
            raise ValueError(
                f"{where}`context_filters` must be three positive integers; received "
                f"{context_filters!r}."
            )
        self.context_filters = context_filters
        super().__init__(num_glimpses=num_symbols * glimpses_per_symbol, **kwargs)

    def _chooses_locations(self):
        return self.policy == "learned"  # the first location is chosen too, from the context

    def build(self, images_shape):
        images_shape = check_rank(
            "images", tuple(images_shape), 4, where="DeepRecurrentAttention: "
        )
        super().build(images_shape)  # glimpse network, bottom RNN ("core"), policy, baseline
        self.emission_cell = self._make_core("emission_core", self.units)  # R², the top RNN
        channels = images_shape[-1]
        if channels is None:
            raise ValueError(
                "DeepRecurrentAttention: the channel dimension of `images` must be known; "
                f"received shape {images_shape}."
            )
        shape = (None, *self.context_size, channels)
        self.context_convs = []
        for index, filters in enumerate(self.context_filters):
            conv = keras.layers.Conv2D(
                filters,
                3,
                padding="same",
                activation="relu",
                kernel_initializer=clone_initializer(self.kernel_initializer),
                dtype=self.dtype_policy,
                name=f"context_conv_{index + 1}",
            )
            conv.build(shape)
            shape = (None, *self.context_size, filters)
            self.context_convs.append(conv)
        self.context_output = keras.layers.Dense(
            self.units,
            activation="tanh",
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="context_output",
        )
        self.context_output.build((None, self.context_size[0] * self.context_size[1] * shape[-1]))
        if self.read_from == "bottom" and not self.policy_gradient_to_core:
            # Nothing trains the context network and the top RNN (the policy reads r² through
            # stop_gradient): they are fixed random features of the coarse view and of r¹.
            for sublayer in (self.emission_cell, *self.context_convs, self.context_output):
                sublayer.trainable = False

    def coarse_view(self, images):
        """``x̃``: the ``[B, h, w, C]`` view the context network reads (see the class)."""
        images = ops.cast(images, self.compute_dtype)
        height, width = images.shape[1], images.shape[2]
        (h, w), d = self.context_size, 1
        if isinstance(height, int) and isinstance(width, int):
            d = max(1, min(height // h, width // w))
        if d > 1:  # the mean of each d×d block (XLA has no antialiased resize)
            images = ops.average_pool(images, d, d, padding="valid")
        if (images.shape[1], images.shape[2]) != (h, w):
            images = ops.image.resize(images, (h, w), interpolation="bilinear")
        return images

    def _context(self, images):
        """``f_c(x̃)``: ``[B, units]``."""
        coarse = self.coarse_view(images)
        for conv in self.context_convs:
            coarse = conv(coarse)
        return self.context_output(ops.reshape(coarse, (ops.shape(coarse)[0], -1)))

    def call(self, images, training=None):
        batch = ops.shape(images)[0]
        context = self._context(images)
        top_states = self.emission_cell.get_initial_state(batch_size=batch)
        top_states = [context] + list(top_states[1:])  # r²_0 = f_c(x̃); an LSTM's c_0 = 0
        bottom_states = self.core_cell.get_initial_state(batch_size=batch)
        top = context
        locations, log_probs, baselines, hidden = [], [], [], []
        for k in range(self.num_glimpses):
            location, log_prob, baseline = self._next_location(top, batch, training)  # l_k
            locations.append(location)
            log_probs.append(log_prob)
            baselines.append(baseline)
            glimpse = self.glimpse_network(images, ops.stop_gradient(location))  # g_k
            bottom, bottom_states = self.core_cell(glimpse, bottom_states, training=training)
            top, top_states = self.emission_cell(bottom, top_states, training=training)
            if (k + 1) % self.glimpses_per_symbol == 0:  # after the symbol's N glimpses
                hidden.append(top if self.read_from == "top" else bottom)  # r² or r¹
        return {
            "hidden": ops.stack(hidden, axis=1),
            "locations": ops.stack(locations, axis=1),
            "log_probs": ops.stack(log_probs, axis=1),
            "baselines": ops.stack(baselines, axis=1),
        }

    def compute_output_spec(self, images, training=None):
        batch, steps = images.shape[0], self.num_glimpses
        return {
            "hidden": keras.KerasTensor((batch, self.num_symbols, self.units), self.compute_dtype),
            "locations": keras.KerasTensor((batch, steps, 2), "float32"),
            "log_probs": keras.KerasTensor((batch, steps), "float32"),
            "baselines": keras.KerasTensor((batch, steps), "float32"),
        }

    def get_config(self):
        config = super().get_config()
        del config["num_glimpses"]
        config.update(
            {
                "num_symbols": self.num_symbols,
                "glimpses_per_symbol": self.glimpses_per_symbol,
                "context_size": list(self.context_size),
                "context_filters": list(self.context_filters),
                "read_from": self.read_from,
            }
        )
        return config

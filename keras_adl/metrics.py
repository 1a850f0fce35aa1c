"""Losses, metrics and evaluation figures of the library's tasks.

Keras losses and metrics of the memory papers: per-sequence bit costs over the answer phase.
The NTM and DNC papers report, per sequence, the number of wrong output bits ("bit errors per
sequence") and the binary cross-entropy in bits ("cost per sequence"). Both count only the
steps where an answer is expected: pass the task's ``weights`` ``[B, T]`` as ``sample_weight``
and list the metrics under ``weighted_metrics`` (Keras gives ``metrics`` no sample weights). A
``[B]`` sample weight (one per sequence) is accepted too.
Predictions are logits.

Evaluation figures, plain numpy functions of a model's outputs (attention weights, glimpse
locations, decoded tokens) and the task's ground truth, each returning a float in ``[0, 1]``:

- `glimpses_on_digit`: how often a Recurrent Attention Model's glimpses land on the digit
  (`keras_adl.data.translated_digits`);
- `alignment_hit_rate`: how often each caption step attends to the digit it names, and
  `exact_match`: the fraction of captions predicted exactly (`keras_adl.data.digit_strips`).
"""

import math
import numbers

import keras
import numpy as np
from keras import ops

from keras_adl.conventions import PAD
from keras_adl.utils import check_captions, check_positive_int


def _per_step_cross_entropy(y_true, y_pred):
    """Σ over bits of the sigmoid cross-entropy (nats) of logits ``y_pred``: ``[B, T]``."""
    y_pred = ops.cast(y_pred, "float32")
    y_true = ops.cast(y_true, "float32")
    # max(x, 0) − x z + log(1 + exp(−|x|)): the stable form for logits.
    ce = ops.relu(y_pred) - y_pred * y_true + ops.log1p(ops.exp(-ops.abs(y_pred)))
    return ops.sum(ce, axis=-1)


@keras.saving.register_keras_serializable(package="keras_adl")
class SequenceBitCrossEntropy(keras.losses.Loss):
    """Sigmoid cross-entropy of logits, summed over bits and answer steps, per sequence.

    With ``sample_weight [B, T]`` (1 on answer steps), the loss is
    ``(1/B) Σ_b Σ_t w_bt Σ_k CE(y_btk, ŷ_btk)`` in nats: the "cost per sequence" the papers
    plot (divide by ``ln 2`` for bits), as in Collier & Beel's recipe (a sum over the sequence
    divided by the batch size).

    Args:
        name: loss name.
        **kwargs: standard loss arguments (``reduction`` is fixed).

    Example:

    >>> loss = SequenceBitCrossEntropy()
    >>> y = ops.ones((2, 3, 4))
    >>> round(float(loss(y, ops.zeros((2, 3, 4)), sample_weight=ops.ones((2, 3)))), 4)
    8.3178
    """

    def __init__(self, name="sequence_bit_cross_entropy", dtype=None, **kwargs):
        kwargs.pop("reduction", None)
        super().__init__(name=name, reduction="sum_over_batch_size", dtype=dtype, **kwargs)

    def call(self, y_true, y_pred):
        per_step = _per_step_cross_entropy(y_true, y_pred)  # [B, T]
        # Keras divides the weighted sum by B·T; scaling by T makes it a per-sequence sum.
        return per_step * ops.cast(ops.shape(per_step)[1], per_step.dtype)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}


class _PerSequenceSum(keras.metrics.Metric):
    """A per-step quantity summed over weighted steps and averaged over sequences."""

    def __init__(self, name, **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.sequences = self.add_variable(shape=(), initializer="zeros", name="sequences")

    def _per_step(self, y_true, y_pred):
        raise NotImplementedError

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = self._per_step(y_true, y_pred)  # [B, T]
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, values.dtype)
            if len(sample_weight.shape) == 1:  # one weight per sequence
                sample_weight = ops.expand_dims(sample_weight, -1)
            values = values * sample_weight
        self.total.assign_add(ops.cast(ops.sum(values), self.total.dtype))
        self.sequences.assign_add(ops.cast(ops.shape(values)[0], self.sequences.dtype))

    def result(self):
        return ops.divide_no_nan(self.total, self.sequences)

    def reset_state(self):
        self.total.assign(0.0)
        self.sequences.assign(0.0)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}


@keras.saving.register_keras_serializable(package="keras_adl")
class Perplexity(keras.metrics.Metric):
    """``exp`` of the mean next-token cross-entropy (nats) over the tokens counted: the
    language-model figure. Tokens whose target is ``ignore_id`` (padding, by default) and
    tokens of zero sample weight are not counted; predictions are logits.

    Example:

    >>> metric = Perplexity()
    >>> metric.update_state(ops.array([[1, 0]]), ops.zeros((1, 2, 4)))  # uniform over 4
    >>> round(float(metric.result()), 4)
    4.0
    """

    def __init__(self, name="perplexity", ignore_id=PAD, **kwargs):
        super().__init__(name=name, **kwargs)
        self.ignore_id = ignore_id
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        losses = keras.losses.sparse_categorical_crossentropy(
            y_true, ops.cast(y_pred, "float32"), from_logits=True
        )
        weights = ops.ones_like(losses)
        if self.ignore_id is not None:
            weights = ops.cast(ops.not_equal(y_true, self.ignore_id), "float32")
        if sample_weight is not None:
            weights = weights * ops.cast(sample_weight, "float32")
        self.total.assign_add(ops.sum(losses * weights))
        self.count.assign_add(ops.sum(weights))

    def result(self):
        return ops.exp(ops.divide_no_nan(self.total, self.count))

    def reset_state(self):
        self.total.assign(0.0)
        self.count.assign(0.0)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "ignore_id": self.ignore_id}


@keras.saving.register_keras_serializable(package="keras_adl")
class BitErrorsPerSequence(_PerSequenceSum):
    """Mean number of wrong output bits per sequence (logit > 0 read as 1), on weighted steps.

    Example:

    >>> m = BitErrorsPerSequence()
    >>> m.update_state(ops.ones((2, 3, 4)), -ops.ones((2, 3, 4)), ops.ones((2, 3)))
    >>> float(m.result())
    12.0
    """

    def __init__(self, name="bit_errors", **kwargs):
        super().__init__(name=name, **kwargs)

    def _per_step(self, y_true, y_pred):
        predicted = ops.cast(ops.cast(y_pred, "float32") > 0, "float32")
        return ops.sum(ops.abs(predicted - ops.cast(y_true, "float32")), axis=-1)


@keras.saving.register_keras_serializable(package="keras_adl")
class BitsPerSequence(_PerSequenceSum):
    """Mean cross-entropy per sequence in bits (nats / ln 2), on weighted steps: the papers' cost.

    Example:

    >>> m = BitsPerSequence()
    >>> m.update_state(ops.ones((1, 1, 2)), ops.zeros((1, 1, 2)), ops.ones((1, 1)))
    >>> float(m.result())  # two bits at p = 1/2
    2.0
    """

    def __init__(self, name="bits_per_sequence", **kwargs):
        super().__init__(name=name, **kwargs)

    def _per_step(self, y_true, y_pred):
        return _per_step_cross_entropy(y_true, y_pred) / math.log(2.0)


# ---------------------------------------------------------------------- evaluation figures


def alignment_hit_rate(attention, spans, captions, grid_width, strip_width):
    """How often each caption step attends to the digit it names.

    ``attention`` weighs an annotation grid of ``L = grid_height · grid_width`` regions laid
    out row-major (region ``l`` is in grid column ``l % grid_width``). Step ``t`` of a caption
    with ``n`` digits (``t < n``) is a hit when the column centre of its most-attended region,
    ``(col + 0.5) · strip_width / grid_width`` pixels, lies in digit ``t``'s span
    ``[start, end)``. The END step and padding steps are ignored.

    Args:
        attention: ``[B, S, L]`` attention weights, ``S ≥ T`` (e.g. the ``T + 1`` steps of a
            teacher-forced decoder).
        spans: int ``[B, T, 2]`` from `keras_adl.data.digit_strips.digit_strips`.
        captions: int ``[B, T]`` ``PAD``-padded captions from the same call.
        grid_width: columns of the annotation grid.
        strip_width: width of the strips in pixels.

    Returns:
        The hit rate over all real digit steps, a float in ``[0, 1]``.

    Example:

    >>> spans = np.array([[[0, 4], [4, 8]]])
    >>> attention = np.zeros((1, 3, 2))
    >>> attention[0, 0, 0] = attention[0, 1, 1] = 1.0  # step 0 on the left, step 1 on the right
    >>> round(alignment_hit_rate(attention, spans, np.array([[5, 6]]), 2, 8), 2)
    1.0
    >>> round(alignment_hit_rate(attention[..., ::-1], spans, np.array([[5, 6]]), 2, 8), 2)
    0.0
    """
    where = "alignment_hit_rate: "
    captions, real = check_captions("captions", captions, where=where)
    attention, spans = np.asarray(attention), np.asarray(spans)
    batch, steps = captions.shape
    if attention.ndim != 3 or attention.shape[0] != batch or attention.shape[1] < steps:
        raise ValueError(
            f"{where}`attention` must have shape [B, S, L] with B = {batch} and S ≥ {steps} "
            f"(the captions' shape is {captions.shape}); received shape {attention.shape}."
        )
    if spans.shape != (batch, steps, 2):
        raise ValueError(
            f"{where}`spans` must have shape {(batch, steps, 2)}; received shape {spans.shape}."
        )
    check_positive_int("grid_width", grid_width, where=where)
    if attention.shape[2] % grid_width:
        raise ValueError(
            f"{where}the {attention.shape[2]} attention regions must be a whole number of rows "
            f"of `grid_width`={grid_width}."
        )
    if (
        isinstance(strip_width, bool)
        or not isinstance(strip_width, numbers.Real)
        or not (strip_width > 0)
    ):
        raise ValueError(
            f"{where}`strip_width` must be a positive number; received {strip_width!r}."
        )
    if not real.any():
        raise ValueError(f"{where}`captions` holds no digit (all PAD); there is nothing to score.")
    column = attention[:, :steps].argmax(axis=-1) % grid_width
    centre = (column + 0.5) * strip_width / grid_width
    hit = (centre >= spans[..., 0]) & (centre < spans[..., 1])
    return float(hit[real].mean())


def glimpses_on_digit(locations, offsets, digit_size, canvas_size):
    """Fraction of a Recurrent Attention Model's chosen glimpses centred on the digit.

    Args:
        locations: ``[B, n, 2]`` glimpse centres ``(y, x)`` in ``[-1, 1]`` (the first, fixed
            glimpse is left out: only ``l_1 … l_{n−1}`` are chosen by the policy).
        offsets: ``[B, 2]`` ``(top, left)`` of each digit, from
            `keras_adl.data.translated_digits.translate_digits`.
        digit_size: side of the digits in pixels.
        canvas_size: side of the canvas in pixels.

    Returns:
        A float in ``[0, 1]``; uniformly random locations give about
        ``(digit_size / canvas_size)²``.

    Example:

    >>> glimpses_on_digit(np.array([[[0.0, 0.0], [-0.5, -0.5]]]), np.array([[0, 0]]), 16, 32)
    1.0
    """
    locations = np.asarray(locations, "float32")
    centres = (np.asarray(offsets, "float32") + digit_size / 2.0) / (canvas_size / 2.0) - 1.0
    distance = np.abs(locations[:, 1:] - centres[:, None])  # in units of half the canvas
    return float(np.mean(np.all(distance < digit_size / canvas_size, axis=-1)))


def glimpse_coverage(locations, image_shape, patch_size, num_scales=1, scale_factor=2.0):
    """Fraction of an image's pixels inside at least one glimpse (its widest patch).

    Each glimpse covers the ``patch_size · scale_factor^(num_scales−1)`` square centred at its
    location (the convention of `keras_adl.ops.extract_glimpses`: ``(y, x)`` in ``[-1, 1]``,
    ``(-1, -1)`` the top-left corner), cut at the image's edges. The union over the glimpses
    of each image is counted once.

    Args:
        locations: ``[B, n, 2]`` glimpse centres.
        image_shape: ``(H, W)`` (or ``(H, W, C)``).
        patch_size, num_scales, scale_factor: of the glimpse sensor.

    Returns:
        The mean over the batch, a float in ``[0, 1]``.

    Example:

    >>> glimpse_coverage(np.zeros((1, 2, 2)), (16, 32), patch_size=8)  # 64 of 512 pixels
    0.125
    """
    locations = np.asarray(locations, "float32")
    if locations.ndim != 3 or locations.shape[-1] != 2:
        raise ValueError(
            f"glimpse_coverage: `locations` must have shape [B, n, 2]; received shape "
            f"{locations.shape}."
        )
    height, width = (int(d) for d in tuple(image_shape)[:2])
    side = patch_size * scale_factor ** (num_scales - 1)
    rows = np.arange(height) + 0.5  # pixel centres
    cols = np.arange(width) + 0.5
    centre_rows = (locations[..., 0] + 1.0) * height / 2.0  # [B, n]
    centre_cols = (locations[..., 1] + 1.0) * width / 2.0
    in_rows = np.abs(rows[None, None, :] - centre_rows[..., None]) < side / 2.0  # [B, n, H]
    in_cols = np.abs(cols[None, None, :] - centre_cols[..., None]) < side / 2.0  # [B, n, W]
    covered = np.any(in_rows[..., :, None] & in_cols[..., None, :], axis=1)  # [B, H, W]
    return float(covered.mean())


def reading_order(locations, glimpses_per_symbol, num_symbols=None):
    """Fraction of consecutive symbols whose glimpses lie further right than the previous
    symbol's: how much a multi-object model reads left to right.

    Args:
        locations: ``[B, S·N, 2]`` glimpse centres ``(y, x)``, ``N = glimpses_per_symbol``
            per symbol, in order.
        glimpses_per_symbol: ``N``.
        num_symbols: compare only the first this many symbols (e.g. the digits, not the end
            symbol); default all.

    Returns:
        A float in ``[0, 1]``: over the batch and the pairs ``(s, s+1)``, how often the mean
        horizontal position of symbol ``s+1``'s glimpses exceeds symbol ``s``'s.

    Example:

    >>> xs = np.array([[-0.6, -0.5, 0.0, 0.1, 0.5, 0.4]])
    >>> reading_order(np.stack([np.zeros_like(xs), xs], -1), glimpses_per_symbol=2)
    1.0
    """
    locations = np.asarray(locations, "float32")
    batch, steps = locations.shape[:2]
    if steps % glimpses_per_symbol:
        raise ValueError(
            f"reading_order: the {steps} glimpses are not a whole number of symbols of "
            f"`glimpses_per_symbol`={glimpses_per_symbol}."
        )
    x = locations[..., 1].reshape(batch, steps // glimpses_per_symbol, glimpses_per_symbol)
    x = x.mean(axis=-1)[:, :num_symbols]
    if x.shape[1] < 2:
        raise ValueError("reading_order: needs at least two symbols to compare.")
    return float(np.mean(np.diff(x, axis=1) > 0))


def exact_match(tokens, targets):
    """Fraction of captions predicted exactly, up to and including ``END``.

    Args:
        tokens: int ``[B, S]`` predicted tokens (or ``[B, S, V]`` scores, argmax-ed). Steps past
            ``T`` are ignored; missing steps count as ``PAD`` (a mismatch where a target is
            expected).
        targets: int ``[B, T]`` targets, e.g. from `caption_arrays`; positions where
            ``targets == PAD`` are ignored.

    Returns:
        A float in ``[0, 1]``.

    Example:

    >>> targets = np.array([[5, 6, 2, 0], [4, 2, 0, 0]])
    >>> round(exact_match(np.array([[5, 6, 2, 9], [4, 7, 0, 0]]), targets), 2)
    0.5
    """
    where = "exact_match: "
    targets, _ = check_captions("targets", targets, where=where)
    tokens = np.asarray(tokens)
    if tokens.ndim == 3:
        tokens = tokens.argmax(axis=-1)
    if tokens.ndim != 2 or tokens.shape[0] != targets.shape[0]:
        raise ValueError(
            f"{where}`tokens` must have shape [B, S] (or [B, S, V] scores) with "
            f"B = {targets.shape[0]}; received shape {np.shape(tokens)}."
        )
    if len(targets) == 0:
        raise ValueError(f"{where}`targets` is empty.")
    steps = targets.shape[1]
    if tokens.shape[1] < steps:
        tokens = np.pad(tokens, ((0, 0), (0, steps - tokens.shape[1])), constant_values=PAD)
    correct = (tokens[:, :steps] == targets) | (targets == PAD)
    return float(correct.all(axis=1).mean())

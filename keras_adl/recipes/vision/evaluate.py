"""The vision family's figures: held-out error and where the RAM's glimpses land, the
captions' exact match, token accuracy and attention alignment, the DRAM's pixels seen and
reading order; and its NumPy scorers, plain functions of a model's outputs (attention weights,
glimpse locations, decoded tokens) and the task's ground truth, each a float in ``[0, 1]``:

- `glimpses_on_digit`: how often a Recurrent Attention Model's glimpses land on the digit
  (`keras_adl.data.translated_digits`);
- `glimpse_coverage`, `reading_order`: the share of an image the glimpses saw, and how much a
  multi-object model reads left to right;
- `alignment_hit_rate`: how often each caption step attends to the digit it names, and
  `exact_match`: the fraction of captions predicted exactly (`keras_adl.data.digit_strips`).
"""

import numbers
import os

import keras
import numpy as np

from keras_adl.conventions import PAD
from keras_adl.data.digit_strips import DIGIT_OFFSET, caption_arrays
from keras_adl.models.captioning import (
    caption_attention,
    caption_greedy_decode,
    caption_grid_shape,
)
from keras_adl.recipes._pictures import draw
from keras_adl.recipes.vision.data import held_out_canvases, held_out_strips
from keras_adl.recipes.vision.plots import plot_caption_attention, plot_glimpse_path
from keras_adl.recipes.vision.spec import CAPTION_LENGTH
from keras_adl.utils import check_captions, check_positive_int


def evaluate_ram(model, task, model_name, test, layout, out):
    """Held-out error on a fixed placement of the test digits, where the glimpses land, and a
    picture of one glimpse path (``glimpses.png`` in ``out``).

    Args:
        model: a trained `recurrent_attention_model`.
        task, model_name: the names in the picture's title.
        test: ``(test_x, test_y)``.
        layout: the task's `keras_adl.recipes.vision.spec.RamLayout.of` the digits' size.
        out: the run directory.
    """
    canvases, labels, offsets = held_out_canvases(test, layout)
    outputs = model.predict(canvases, verbose=0)
    predictions = outputs["probabilities"].argmax(-1)
    on_digit = glimpses_on_digit(
        outputs["locations"], offsets, test[0].shape[1], layout["canvas_size"]
    )
    draw(
        plot_glimpse_path,
        canvases[0],
        outputs["locations"][0],
        layout["patch_size"],
        layout["num_scales"],
        os.path.join(out, "glimpses.png"),
        title=f"{model_name} on {task}: predicted {predictions[0]}, true {labels[0]}",
    )
    return {
        "held_out_error": float(np.mean(predictions != labels)),
        "held_out_glimpses_on_digit": float(on_digit),
    }


def evaluate_whole_image(model, test, layout):
    """Held-out error of a whole-image classifier (probabilities only) on the fixed placement
    of the test digits that `evaluate_ram` scores."""
    canvases, labels, _ = held_out_canvases(test, layout)
    outputs = model.predict(canvases, verbose=0)
    return {"held_out_error": float(np.mean(outputs.argmax(-1) != labels))}


def evaluate_dram(model, model_name, test, out):
    """Held-out exact match and token accuracy on the strips `evaluate_captioning` uses, the
    fraction of each strip's pixels the glimpses saw, how often the glimpses of digit ``t+1``
    lie right of digit ``t``'s, and a picture of one glimpse path (``glimpses.png``)."""
    strips, captions, _ = held_out_strips(test)
    _, targets = caption_arrays(captions)
    outputs = model.predict(strips, verbose=0)
    tokens = outputs["probabilities"].argmax(-1)
    layer = model.get_layer("deep_recurrent_attention")
    locations = outputs["locations"]
    words = " ".join(str(t - DIGIT_OFFSET) for t in tokens[0] if t >= DIGIT_OFFSET)
    draw(
        plot_glimpse_path,
        strips[0],
        locations[0],
        layer.patch_size,
        layer.num_scales,
        os.path.join(out, "glimpses.png"),
        scale_factor=layer.scale_factor,
        title=f"{model_name}: read {words}",
    )
    return {
        "held_out_exact_match": float(exact_match(tokens, targets)),
        "held_out_token_accuracy": token_accuracy(tokens, targets),
        "held_out_pixels_seen": glimpse_coverage(
            locations, strips.shape[1:3], layer.patch_size, layer.num_scales, layer.scale_factor
        ),
        "held_out_reading_order": reading_order(
            locations, layer.glimpses_per_symbol, CAPTION_LENGTH
        ),
    }


def evaluate_captioning(model, test, out):
    """Held-out exact match, token accuracy and attention alignment on fresh strips of the
    test digits, and a picture of one caption's attention (``attention.png``)."""
    strips, captions, spans = held_out_strips(test)
    decoder_input, targets = caption_arrays(captions)
    tokens, attention, _ = caption_greedy_decode(model, strips, CAPTION_LENGTH + 1)
    tokens = keras.ops.convert_to_numpy(tokens)
    teacher = keras.ops.convert_to_numpy(
        caption_attention(model, {"image": strips, "decoder_input": decoder_input})
    )
    grid = caption_grid_shape(model)
    metrics = {
        "held_out_exact_match": float(exact_match(tokens, targets)),
        "held_out_token_accuracy": token_accuracy(tokens, targets),
        # The grid covers the pixels its poolings saw: 80 of an 84-pixel strip, say.
        "held_out_alignment_hit_rate": float(
            alignment_hit_rate(
                teacher, spans, captions, grid[1], grid[1] * (strips.shape[2] // grid[1])
            )
        ),
    }
    words = [str(t - DIGIT_OFFSET) if t >= DIGIT_OFFSET else "</s>" for t in tokens[0]]
    draw(
        plot_caption_attention,
        strips[0],
        keras.ops.convert_to_numpy(attention)[0],
        words,
        grid,
        os.path.join(out, "attention.png"),
        title="show_attend_tell: attention per output digit",
    )
    return metrics


def token_accuracy(tokens, targets):
    """The share of the caption's digits (END left out) predicted right."""
    return float(np.mean(tokens[:, :CAPTION_LENGTH] == targets[:, :CAPTION_LENGTH]))


# -- the scorers ------------------------------------------------------------------------------


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

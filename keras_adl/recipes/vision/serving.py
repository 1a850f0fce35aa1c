"""The vision family's serving: image batches in, classes, captions and glimpse paths out, the
image files ``keras-adl predict`` reads and how it prints each task's answers."""

import os

import numpy as np
import tensorflow as tf

from keras_adl.conventions import END, PAD, START
from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE, DIGIT_OFFSET
from keras_adl.models.captioning import caption_beam_search, caption_greedy_decode
from keras_adl.recipes._recipe import Answers
from keras_adl.training.export import export_serving_fn
from keras_adl.training.rundir import RecipeError
from keras_adl.training.serving_inputs import check_example_shape, read_values, run_on_one_more
from keras_adl.utils import check_positive_int

# What every image export does with its input: a batch of the model's image size (another size
# or channel count is refused by the signature's spec), pixel values in [0, 1]; NaN and
# infinite values become 0 and the rest is clipped to [0, 1], flagged ``invalid_values``; an
# empty batch gets empty outputs.
IMAGES = "[B, H, W, C] float32 in [0, 1]"


def _caption_token_strings(vocab_size, token_strings):
    """The string of every token id: specials are ``""``; by default ids 3..12 are the digits
    ``"0".."9"`` (the digit-strip task's ``token = digit + 3``)."""
    if token_strings is None:
        if vocab_size != CAPTION_VOCAB_SIZE:
            raise ValueError(
                "make_captioning_serving_fn: the default `token_strings` are the digit-strip "
                f"task's {CAPTION_VOCAB_SIZE} tokens; this model has vocab_size {vocab_size}: pass "
                "`token_strings`, one string per token id."
            )
        token_strings = [""] * DIGIT_OFFSET + [str(digit) for digit in range(10)]
    token_strings = [str(s) for s in token_strings]
    if len(token_strings) != vocab_size:
        raise ValueError(
            "make_captioning_serving_fn: `token_strings` must hold one string per token id "
            f"({vocab_size} for this model); received {len(token_strings)}."
        )
    for special in (PAD, START, END):
        token_strings[special] = ""
    return token_strings


def make_captioning_serving_fn(model, max_length, beam_width=1, token_strings=None):
    """A ``tf.function`` from a batch of images to captions, for a `show_attend_tell` model.

    Args:
        model: a model from `keras_adl.models.show_attend_tell` (image or feature mode).
        max_length: number of caption steps to decode (including ``END``).
        beam_width: 1 for greedy decoding, more for beam search.
        token_strings: optional list of strings indexed by token id, used to render the
            caption; ``PAD``, ``START`` and ``END`` always render as ``""`` and are skipped.
            The default suits the digit-strip task: ids 3..12 are ``"0".."9"``.

    Returns:
        A ``tf.function`` with input signature ``[tf.TensorSpec([None, H, W, C], tf.float32,
        name="images")]`` (``[None, L, D]`` named ``"features"`` for a feature-mode model)
        returning a dict with ``caption`` (the tokens' strings joined by spaces, ``[B]``),
        ``tokens`` ``[B, max_length]`` int32, ``attention`` ``[B, max_length, L]`` float32,
        ``log_likelihood`` ``[B]`` and ``invalid_values`` ``bool [B]`` (see `IMAGES`).

    Example:

    >>> import tensorflow as tf
    >>> from keras_adl.models import show_attend_tell
    >>> model = show_attend_tell(13, image_shape=(8, 8, 1), embedding_dim=4, units=8,
    ...                          encoder_filters=(4,))
    >>> serve = make_captioning_serving_fn(model, max_length=3)
    >>> out = serve(tf.zeros((2, 8, 8, 1)))
    >>> sorted(out), tuple(out["attention"].shape)
    (['attention', 'caption', 'invalid_values', 'log_likelihood', 'tokens'], (2, 3, 16))
    """
    where = "make_captioning_serving_fn: "
    check_positive_int("max_length", max_length, where=where)
    check_positive_int("beam_width", beam_width, where=where)
    strings = tf.constant(_caption_token_strings(model.get_layer("logits").units, token_strings))
    encoder_input = model.get_layer("encoder").input
    name = "images" if encoder_input.name == "image" else encoder_input.name
    spec = tf.TensorSpec((None,) + tuple(encoder_input.shape[1:]), tf.float32, name=name)

    bounds = (0.0, 1.0) if name == "images" else (None, None)

    def caption(images):
        if beam_width > 1:
            tokens, attention, score = caption_beam_search(model, images, max_length, beam_width)
        else:
            tokens, attention, score = caption_greedy_decode(model, images, max_length)
        tokens = tf.convert_to_tensor(tokens)
        words = tf.gather(strings, tokens)  # [B, max_length]; specials are ""
        words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
        return {
            "caption": tf.strings.reduce_join(words, axis=-1, separator=" "),
            "tokens": tokens,
            "attention": tf.convert_to_tensor(attention),
            "log_likelihood": tf.convert_to_tensor(score),
        }

    @tf.function(input_signature=[spec])
    def serve(images):
        images = check_example_shape(images, spec.shape[1:], name)
        images, invalid = read_values(images, *bounds)
        return {**run_on_one_more(caption, images), "invalid_values": invalid}

    return serve


def export_captioning(model, export_dir, max_length, beam_width=1, token_strings=None):
    """Writes a SavedModel whose ``serving_default`` captions a batch of images.

    Args:
        model: a model from `keras_adl.models.show_attend_tell`.
        export_dir: where to write; must not exist (nothing is left behind on failure).
        max_length, beam_width, token_strings: as in `make_captioning_serving_fn`.
    """
    serving_fn = make_captioning_serving_fn(model, max_length, beam_width, token_strings)
    return export_serving_fn(model, export_dir, serving_fn)


def make_ram_serving_fn(model):
    """A ``tf.function`` from an image batch to a Recurrent Attention Model's answer.

    Args:
        model: a model from `keras_adl.models.recurrent_attention_model`.

    Returns:
        A ``tf.function`` with input signature ``images`` ``[None, H, W, C]`` float32 returning
        a dict with ``classes`` ``[B]`` int32, ``probabilities`` ``[B, K]``, ``locations``
        ``[B, n, 2]`` (the glimpse centres ``(y, x)`` in ``[-1, 1]``; a learned policy's mean,
        so the answer is deterministic; the random-glimpse baseline stays random) and
        ``invalid_values`` ``bool [B]`` (see `IMAGES`).
    """
    shape = [None, *model.inputs[0].shape[1:]]

    def classify(images):
        outputs = model(images, training=False)
        probabilities = tf.cast(outputs["probabilities"], tf.float32)
        return {
            "classes": tf.argmax(probabilities, axis=-1, output_type=tf.int32),
            "probabilities": probabilities,
            "locations": tf.cast(outputs["locations"], tf.float32),
        }

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32, name="images")])
    def serve(images):
        images = check_example_shape(images, shape[1:], "images")
        images, invalid = read_values(images, 0.0, 1.0)
        return {**run_on_one_more(classify, images), "invalid_values": invalid}

    return serve


def make_classifier_serving_fn(model):
    """A ``tf.function`` from an image batch to a whole-image baseline's answer
    (`keras_adl.models.baselines`): ``images`` ``[None, H, W, C]`` float32 in, a dict with
    ``classes`` ``[B]`` int32, ``probabilities`` ``[B, K]`` float32 and ``invalid_values``
    ``bool [B]`` (see `IMAGES`) out."""
    shape = [None, *model.inputs[0].shape[1:]]

    def classify(images):
        probabilities = tf.cast(model(images, training=False), tf.float32)
        return {
            "classes": tf.argmax(probabilities, axis=-1, output_type=tf.int32),
            "probabilities": probabilities,
        }

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32, name="images")])
    def serve(images):
        images = check_example_shape(images, shape[1:], "images")
        images, invalid = read_values(images, 0.0, 1.0)
        return {**run_on_one_more(classify, images), "invalid_values": invalid}

    return serve


def dram_captions(tokens, token_strings=None):
    """``[B]`` strings: the symbols of each row of ``tokens`` ``[B, S]`` before its first
    ``END``, joined by spaces (specials render as nothing; ``token_strings`` as in
    `make_captioning_serving_fn`, by default the digit-strip task's). TensorFlow ops, for
    serving functions."""
    if token_strings is None:
        token_strings = _caption_token_strings(CAPTION_VOCAB_SIZE, None)
    tokens = tf.convert_to_tensor(tokens, tf.int32)
    ended = tf.cumsum(tf.cast(tf.equal(tokens, END), tf.int32), axis=1) > 0
    words = tf.where(ended, "", tf.gather(tf.constant(token_strings), tokens))
    words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
    return tf.strings.reduce_join(words, axis=-1, separator=" ")


def make_dram_serving_fn(model, token_strings=None):
    """A ``tf.function`` from an image batch to a Deep Recurrent Attention Model's reading.

    Args:
        model: a model from `keras_adl.models.deep_recurrent_attention_model`.
        token_strings: one string per class id for the caption, as in
            `make_captioning_serving_fn` (default: the digit-strip task's tokens).

    Returns:
        A ``tf.function`` with input signature ``images`` ``[None, H, W, C]`` float32 returning
        a dict with ``caption`` ``[B]`` (the symbols before the first ``END``, joined by
        spaces; specials render as nothing), ``tokens`` ``[B, S]`` int32 (the class of every
        symbol), ``probabilities`` ``[B, S, K]``, ``locations`` ``[B, S·N, 2]`` (the
        glimpse centres ``(y, x)`` in ``[-1, 1]``; deterministic for a learned policy) and
        ``invalid_values`` ``bool [B]`` (see `IMAGES`).
    """
    num_classes = model.output["probabilities"].shape[-1]
    strings = _caption_token_strings(num_classes, token_strings)
    shape = [None, *model.inputs[0].shape[1:]]

    def read(images):
        outputs = model(images, training=False)
        probabilities = tf.cast(outputs["probabilities"], tf.float32)
        tokens = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        return {
            "caption": dram_captions(tokens, strings),
            "tokens": tokens,
            "probabilities": probabilities,
            "locations": tf.cast(outputs["locations"], tf.float32),
        }

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32, name="images")])
    def serve(images):
        images = check_example_shape(images, shape[1:], "images")
        images, invalid = read_values(images, 0.0, 1.0)
        return {**run_on_one_more(read, images), "invalid_values": invalid}

    return serve


# -- keras-adl predict: image files in, one line each out --------------------------------------


def read_image(path, image_shape):
    """A grayscale image ``[H, W, 1]`` in [0, 1] from a PNG/JPEG/GIF/BMP file or a ``.npy``
    array of the model's size.

    Raises:
        RecipeError: a file that is missing, not an image or of another size (naming it).
    """
    if not os.path.isfile(path):
        raise RecipeError(f"image file {path!r} not found")
    image = read_npy_image(path) if path.endswith(".npy") else _decode_image(path)
    if image.ndim == 2:
        image = image[..., None]
    if list(image.shape) != list(image_shape):
        raise RecipeError(
            f"{path!r} has shape {list(image.shape)}; this model reads "
            f"{image_shape[0]}×{image_shape[1]} grayscale images"
        )
    return image


def read_images(paths, image_shape):
    """Grayscale images ``[B, H, W, 1]`` in [0, 1] from PNG/JPEG/GIF/BMP files or ``.npy``
    arrays of the model's size (`read_image`).

    Raises:
        RecipeError: a file that is missing, not an image or of another size (naming it).
    """
    return np.stack([read_image(path, image_shape) for path in paths])


def _decode_image(path):
    """A PNG, JPEG, GIF or BMP file as float32 ``[H, W, 1]`` in [0, 1]."""
    try:
        decoded = tf.io.decode_image(tf.io.read_file(path), channels=1, expand_animations=False)
    except tf.errors.InvalidArgumentError:
        raise RecipeError(f"{path!r} is not a PNG, JPEG, GIF or BMP image") from None
    return decoded.numpy().astype("float32") / 255.0


def read_npy_image(path):
    """A ``.npy`` image as float32 in [0, 1] (values in [0, 255] are scaled).

    Raises:
        RecipeError: not a numeric array, a NaN or infinite value, or values outside [0, 255]
            (naming the file).
    """
    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as error:
        raise RecipeError(f"{path!r} is not a NumPy array file ({error})") from None
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise RecipeError(f"{path!r} holds {array.dtype} values; expected a numeric image")
    image = array.astype("float32")
    if not np.isfinite(image).all():
        raise RecipeError(f"{path!r} holds NaN or infinite values; expected pixel intensities")
    if image.size and (image.min() < 0 or image.max() > 255):
        raise RecipeError(
            f"{path!r} holds values from {image.min():g} to {image.max():g}; expected "
            f"intensities in [0, 1] or [0, 255]"
        )
    return image / 255.0 if image.size and image.max() > 1.0 else image


def serve(export_dir, paths, image_shape):
    """The exported model's ``serving_default`` outputs on the image files ``paths`` that can
    be read: ``(outputs, rows, problems)``, the outputs (numpy) of the readable images, the
    row of each readable path's index, and ``{index: why}`` for the others."""
    images, rows, problems = [], {}, {}
    for index, path in enumerate(paths):
        try:
            image = read_image(path, image_shape)
        except RecipeError as error:
            problems[index] = str(error)
            continue
        rows[index] = len(images)
        images.append(image)
    batch = np.stack(images) if images else np.zeros((0, *image_shape), "float32")
    loaded = tf.saved_model.load(export_dir)
    outputs = loaded.signatures["serving_default"](images=tf.constant(batch, tf.float32))
    return {k: v.numpy() for k, v in outputs.items()}, rows, problems


def glimpse_path_text(locations):
    """A glimpse path as ``predict`` prints it: ``(y,x)`` centres in ``[-1, 1]``."""
    return " ".join(f"({y:+.2f},{x:+.2f})" for y, x in locations)


def _print_each(paths, served, line):
    """One line per image file, in order: ``line(outputs, row)`` for a readable one, why not
    for another (exit status 1 at the end, the others still answered)."""
    outputs, rows, problems = served
    answers = Answers(paths, labels=paths)
    for index in range(len(paths)):
        if index in problems:
            answers.fail(index + 1, problems[index])
            continue
        row = rows[index]
        answers.answer(index + 1, line(outputs, row))
        if "invalid_values" in outputs and outputs["invalid_values"][row]:
            answers.warn(index + 1, "pixel values outside [0, 1] or not finite, read clipped")
    answers.finish()


def print_classes(paths, served):
    """One line per image: the class, its probability and (the RAM's) glimpse path."""

    def line(outputs, row):
        label = outputs["classes"][row]
        text = f"{label}\tp={outputs['probabilities'][row, label]:.3f}"
        if "locations" in outputs:  # the RAM's glimpse centres
            text += f"\tglimpses {glimpse_path_text(outputs['locations'][row])}"
        return text

    _print_each(paths, served, line)


def print_captions(paths, served):
    """One line per image: its caption."""
    _print_each(paths, served, lambda outputs, row: outputs["caption"][row].decode())


def print_readings(paths, served):
    """One line per image: the DRAM's reading and its glimpse path."""

    def line(outputs, row):
        path_text = glimpse_path_text(outputs["locations"][row])
        return f"{outputs['caption'][row].decode()}\tglimpses {path_text}"

    _print_each(paths, served, line)

"""Captioned digit strips for Show, Attend and Tell.

A strip is a row of random digits side by side; its caption is their classes. `digit_strips`
draws strips with their captions and where each digit is, `caption_arrays` gives the
teacher-forcing arrays, and `DigitStrips` (a `keras.utils.PyDataset`) draws fresh strips every
epoch. The images come from `keras_adl.data.image_sources`; the figures of this task,
`alignment_hit_rate` (does step ``t`` look at digit ``t``?) and `exact_match`, are in
`keras_adl.recipes.vision.evaluate`.

Caption tokens follow `keras_adl.conventions`: ``PAD=0``, ``START=1``, ``END=2``, and class
``d`` is token ``d + DIGIT_OFFSET``, so 10 classes give a vocabulary of `CAPTION_VOCAB_SIZE`
(13) tokens.

Every generator takes ``rng`` (a ``numpy.random.Generator``, an int seed or ``None``) and is
vectorised over the batch; the dataset derives its generator from ``(seed, epoch, index)``, so
a batch is reproducible and every epoch brings new strips.

References:
    Xu, Ba, Kiros, Cho, Courville, Salakhutdinov, Zemel, Bengio (2015). Show, Attend and Tell:
    Neural Image Caption Generation with Visual Attention. arXiv:1502.03044.
"""

import keras
import numpy as np

from keras_adl.conventions import END, PAD, START
from keras_adl.data._checks import (
    as_generator,
    check_batches,
    check_captions,
    check_images,
    check_positive_int,
    check_seed,
)

DIGIT_OFFSET = END + 1  # the caption token of class d is d + DIGIT_OFFSET
CAPTION_VOCAB_SIZE = DIGIT_OFFSET + 10  # the specials up to END, then the 10 digit classes


def _digit_range(num_digits, *, where=""):
    if isinstance(num_digits, (tuple, list)) and len(num_digits) == 2:
        low, high = num_digits
    else:
        low = high = num_digits
    for value in (low, high):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(
                f"{where}`num_digits` must be a positive integer or a (min, max) pair of them; "
                f"received {num_digits!r}."
            )
    if low > high:
        raise ValueError(
            f"{where}`num_digits` (min, max) must have min ≤ max; received {num_digits!r}."
        )
    return int(low), int(high)


def digit_strips(images, labels, batch_size, num_digits=3, rng=None):
    """Strips of random digits side by side, with their captions and positions.

    Digit ``t`` of a strip occupies columns ``[t·w, (t+1)·w)`` of an
    ``[h, max_digits·w]`` strip; the slots after the caption's last digit stay blank (0).

    Args:
        images: ``[N, h, w]`` (or ``[N, h, w, 1]``) images to draw digits from.
        labels: ``[N]`` integer labels (class ``d`` becomes token ``d + DIGIT_OFFSET``).
        batch_size: number of strips.
        num_digits: digits per strip, an int, or a ``(min, max)`` pair for captions of
            uniformly random length.
        rng: a ``numpy.random.Generator``, an int seed or ``None``.

    Returns:
        ``(strips, captions, spans)``: float32 ``[B, h, max_digits·w, 1]``; int32
        ``[B, max_digits]`` tokens, ``PAD``-padded; int32 ``[B, max_digits, 2]``, the
        ``[start, end)`` pixel columns of each digit and ``(0, 0)`` for padding.

    Example:

    >>> images = np.arange(3)[:, None, None] * np.ones((3, 2, 2)) / 2
    >>> strips, captions, spans = digit_strips(images, np.arange(3), 2, (1, 3), rng=1)
    >>> strips.shape, captions.tolist(), spans[0].tolist()
    ((2, 2, 6, 1), [[5, 5, 0], [3, 5, 0]], [[0, 2], [2, 4], [0, 0]])
    >>> strips[1, 0, :, 0].tolist()  # digits 0 (all 0.0) and 2 (all 1.0), then a blank slot
    [0.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    """
    where = "digit_strips: "
    images, labels = check_images(images, labels, where=where)
    check_positive_int("batch_size", batch_size, where=where)
    low, high = _digit_range(num_digits, where=where)
    if labels.min() < 0:
        raise ValueError(f"{where}`labels` must be ≥ 0; received {int(labels.min())}.")
    rng = as_generator(rng)
    n, h, w = images.shape
    lengths = rng.integers(low, high + 1, size=batch_size)
    chosen = rng.integers(0, n, size=(batch_size, high))
    real = np.arange(high)[None, :] < lengths[:, None]  # [B, T]
    digits = images[chosen] * real[:, :, None, None]  # [B, T, h, w]
    strips = digits.transpose(0, 2, 1, 3).reshape(batch_size, h, high * w, 1)
    captions = np.where(real, labels[chosen] + DIGIT_OFFSET, PAD).astype("int32")
    starts = np.arange(high) * w
    spans = np.stack([starts, starts + w], axis=-1)[None] * real[..., None]
    return strips.astype("float32"), captions, spans.astype("int32")


def caption_arrays(captions):
    """Teacher-forcing arrays from ``PAD``-padded captions.

    Args:
        captions: int ``[B, T]`` tokens, each row ``c_1..c_n`` then ``PAD``.

    Returns:
        ``(decoder_input, targets)``, int32 ``[B, T+1]``: ``[START, c_1..c_n, PAD…]`` and
        ``[c_1..c_n, END, PAD…]``.

    Example:

    >>> decoder_input, targets = caption_arrays(np.array([[5, 7, 0], [4, 0, 0]]))
    >>> decoder_input.tolist(), targets.tolist()
    ([[1, 5, 7, 0], [1, 4, 0, 0]], [[5, 7, 2, 0], [4, 2, 0, 0]])
    """
    captions, real = check_captions("captions", captions, where="caption_arrays: ")
    batch, steps = captions.shape
    decoder_input = np.full((batch, steps + 1), PAD, "int32")
    decoder_input[:, 0] = START
    decoder_input[:, 1:] = captions
    targets = np.full((batch, steps + 1), PAD, "int32")
    targets[:, :steps] = captions
    targets[np.arange(batch), real.sum(axis=1)] = END
    return decoder_input, targets


class DigitStrips(keras.utils.PyDataset):
    """Batches of captioned digit strips for teacher-forced training, fresh every epoch.

    Batch ``i`` of epoch ``e`` is `digit_strips` drawn with a generator seeded with
    ``(seed, e, i)``, then `caption_arrays`; ``on_epoch_end`` (called by ``fit``) advances the
    epoch. For `keras_adl.recipes.vision.evaluate.alignment_hit_rate`, which needs the digits'
    spans, call `digit_strips`.

    Args:
        images: ``[N, h, w]`` images to draw digits from.
        labels: ``[N]`` integer labels.
        batch_size: strips per batch; ``len`` is ``N // batch_size`` (one epoch draws about as
            many digits as there are images per digit slot).
        num_digits: an int or a ``(min, max)`` pair, as in `digit_strips`.
        seed: a non-negative integer.
        teacher_forcing: give the decoder's input too (Show, Attend and Tell); ``False`` gives
            the strips alone, for models that read the image only (the Deep Recurrent
            Attention Model).
        **kwargs: ``workers``, ``use_multiprocessing``, ``max_queue_size`` of
            ``keras.utils.PyDataset``.

    Returns (``__getitem__``):
        ``({"image": strips, "decoder_input": decoder_input}, targets)``: float32
        ``[B, h, max_digits·w, 1]``, int32 ``[B, max_digits+1]`` and int32
        ``[B, max_digits+1]``; with ``teacher_forcing=False``, ``(strips, targets)``.

    Example:

    >>> data = DigitStrips(np.ones((8, 4, 4)), np.arange(8) % 10, batch_size=4, num_digits=2)
    >>> inputs, targets = data[0]
    >>> len(data), inputs["image"].shape, inputs["decoder_input"].shape, targets.shape
    (2, (4, 4, 8, 1), (4, 3), (4, 3))
    """

    def __init__(
        self, images, labels, batch_size=64, num_digits=3, seed=0, teacher_forcing=True, **kwargs
    ):
        super().__init__(**kwargs)
        where = "DigitStrips: "
        self.images, self.labels, self.batch_size = check_batches(
            images, labels, batch_size, where=where
        )
        self.num_digits = num_digits
        _digit_range(num_digits, where=where)
        self.seed = check_seed(seed, where=where)
        self.teacher_forcing = bool(teacher_forcing)
        self.epoch = 0

    def __len__(self):
        return len(self.images) // self.batch_size

    def __getitem__(self, index):
        if not 0 <= index < len(self):
            raise IndexError(f"DigitStrips: batch {index} out of range [0, {len(self)}).")
        strips, captions, _ = digit_strips(
            self.images,
            self.labels,
            self.batch_size,
            self.num_digits,
            rng=np.random.default_rng([self.seed, self.epoch, index]),
        )
        decoder_input, targets = caption_arrays(captions)
        if not self.teacher_forcing:
            return strips, targets
        return {"image": strips, "decoder_input": decoder_input}, targets

    def on_epoch_end(self):
        self.epoch += 1

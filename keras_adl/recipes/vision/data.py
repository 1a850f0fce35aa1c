"""The vision family's data: the digits and their splits, the translated canvases of the RAM
tasks and the strips of the reading tasks, for training, development and the held-out figures.

Digits are scikit-learn's (16×16), or MNIST / Fashion-MNIST IDX files given with ``--data``
(28×28; Debian's ``dataset-fashion-mnist``, `make data`).
"""

import os

from keras_adl.data.digit_strips import DigitStrips, caption_arrays, digit_strips
from keras_adl.data.image_sources import load_idx_dataset, load_sklearn_digits
from keras_adl.data.splits import split_dataset
from keras_adl.data.translated_digits import TranslatedDigits, translate_digits
from keras_adl.recipes._development import DEVELOPMENT_SEED, development_rows
from keras_adl.recipes.vision.spec import (
    CAPTION_LENGTH,
    DEVELOPMENT_DIGITS,
    DEVELOPMENT_STRIPS,
    HELD_OUT_STRIPS,
    PLACEMENT_SEED,
    SKLEARN_DIGIT_SIZE,
)


def load_digits(data_dir=None):
    """``((train_x, train_y), (test_x, test_y))``: sklearn's digits at 16×16 split 80/20, or the
    MNIST / Fashion-MNIST IDX files in ``data_dir`` (28×28)."""
    if data_dir:
        splits = load_idx_dataset(data_dir, "train"), load_idx_dataset(data_dir, "test")
        for (_, labels), split in zip(splits, ("train", "t10k")):
            if labels.size and (labels.min() < 0 or labels.max() > 9):
                path = os.path.join(data_dir, f"{split}-labels-idx1-ubyte")
                path = path if os.path.isfile(path) else path + ".gz"  # the one it read
                raise ValueError(
                    f"{path}: the vision tasks read ten digit classes, labels 0-9; received "
                    f"labels from {labels.min()} to {labels.max()}."
                )
        return splits
    images, labels = load_sklearn_digits(SKLEARN_DIGIT_SIZE)
    return split_dataset(images, labels, 0.2, seed=0)


def development_split(train_x, train_y):
    """``((train_x, train_y), development)``: the training digits without the development
    split, and that split ``(images, labels)`` (a seeded tenth of them, at most
    `DEVELOPMENT_DIGITS`; ``None`` below ``MIN_FOR_DEVELOPMENT`` digits), never test digits."""
    rows = development_rows(len(train_x), DEVELOPMENT_DIGITS)
    if rows is None:
        return (train_x, train_y), None
    train, held = rows
    return (train_x[train], train_y[train]), (train_x[held], train_y[held])


# -- the RAM tasks: digits on canvases --------------------------------------------------------


def translated_digits(train_x, train_y, batch_size, layout, seed=0):
    """The training digits placed afresh every epoch on canvases of ``layout`` (a
    `RamLayout.of` dict), as a ``PyDataset``."""
    return TranslatedDigits(
        train_x,
        train_y,
        batch_size,
        canvas_size=layout["canvas_size"],
        num_clutter=layout["num_clutter"],
        seed=seed,
    )


def development_canvases(development, layout):
    """``(canvases, classes)``: the development digits placed once on canvases of ``layout``
    (Keras' ``validation_data``)."""
    images, labels = development
    canvases, classes, _ = translate_digits(
        images, labels, layout["canvas_size"], layout["num_clutter"], rng=DEVELOPMENT_SEED
    )
    return canvases, classes


def held_out_canvases(test, layout):
    """``(canvases, labels, offsets)``: the test digits at their fixed places
    (`PLACEMENT_SEED`) on canvases of ``layout``."""
    test_x, test_y = test
    return translate_digits(
        test_x,
        test_y,
        layout["canvas_size"],
        num_clutter=layout["num_clutter"],
        rng=PLACEMENT_SEED,
    )


# -- the reading tasks: strips of digits ------------------------------------------------------


def strips(train_x, train_y, batch_size, teacher_forcing=True, seed=0):
    """Strips of `CAPTION_LENGTH` training digits drawn afresh every epoch, with their
    captions (teacher-forced for a decoder, or the plain targets), as a ``PyDataset``."""
    return DigitStrips(
        train_x, train_y, batch_size, CAPTION_LENGTH, seed=seed, teacher_forcing=teacher_forcing
    )


def development_strips(development):
    """``(strips, decoder_input, targets)``: `DEVELOPMENT_STRIPS` strips of the development
    digits, drawn once."""
    images, labels = development
    strips_, captions, _ = digit_strips(
        images, labels, DEVELOPMENT_STRIPS, CAPTION_LENGTH, rng=DEVELOPMENT_SEED
    )
    decoder_input, targets = caption_arrays(captions)
    return strips_, decoder_input, targets


def held_out_strips(test):
    """``(strips, captions, spans)``: `HELD_OUT_STRIPS` strips of the test digits at their
    fixed draw (`PLACEMENT_SEED`)."""
    test_x, test_y = test
    return digit_strips(
        test_x, test_y, HELD_OUT_STRIPS, num_digits=CAPTION_LENGTH, rng=PLACEMENT_SEED
    )

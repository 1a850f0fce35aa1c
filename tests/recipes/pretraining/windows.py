"""Texts in four scripts, read window by window: the data of the window and serving tests."""

import numpy as np

from keras_adl.recipes.pretraining import data

WINDOW_TEXTS = ["Été à Paris\u00a0: très chaud", "Привет мир", "東京大学の学生です 東京 大学", "a"]
WINDOW_LABELS = [2, 1, 0, 1]


def windows_of(ids, width, max_windows):
    """The reference windows: ``(owner, pieces)`` of each text, full windows from the start."""
    return [
        (i, pieces[start : start + width])
        for i, pieces in enumerate(ids)
        for start in range(0, max(len(pieces) - width, 0) + 1, width)[:max_windows]
    ]


def window_tokenizer():
    tokenizer = data.learn_tokenizer(WINDOW_TEXTS * 5, 60)
    ids = data.token_lists(tokenizer, WINDOW_TEXTS)
    # Text as written (case, spacing): 24 pieces: six full windows of 4, capped at 3; 10: two,
    # the last two pieces left out; 15: three, capped; 1: shorter than a window, its own.
    assert [len(p) for p in ids] == [24, 10, 15, 1]
    return tokenizer, ids


def log_softmax(x):
    x = np.asarray(x, "float64")
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))

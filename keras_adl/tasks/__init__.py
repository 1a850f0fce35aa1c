"""Data: synthetic tasks of the papers and loaders of real data in standard formats."""

from keras_adl.tasks.algorithmic import (
    associative_recall_batch,
    copy_batch,
    priority_sort_batch,
    repeat_copy_batch,
    task_dataset,
    task_dims,
)
from keras_adl.tasks.dates import CharVocabulary, date_arrays, generate_dates
from keras_adl.tasks.digits import (
    DigitStrips,
    TranslatedDigits,
    alignment_hit_rate,
    caption_arrays,
    digit_strips,
    exact_match,
    find_fashion_mnist,
    glimpses_on_digit,
    load_idx_dataset,
    load_sklearn_digits,
    read_idx,
    split_dataset,
    translate_digits,
)
from keras_adl.tasks.sorting import sort_arrays

__all__ = [
    "CharVocabulary",
    "DigitStrips",
    "TranslatedDigits",
    "alignment_hit_rate",
    "associative_recall_batch",
    "caption_arrays",
    "copy_batch",
    "date_arrays",
    "digit_strips",
    "exact_match",
    "find_fashion_mnist",
    "glimpses_on_digit",
    "generate_dates",
    "load_idx_dataset",
    "load_sklearn_digits",
    "priority_sort_batch",
    "read_idx",
    "repeat_copy_batch",
    "sort_arrays",
    "split_dataset",
    "task_dataset",
    "task_dims",
    "translate_digits",
]

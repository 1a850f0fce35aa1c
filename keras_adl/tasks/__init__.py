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
from keras_adl.tasks.sorting import sort_arrays

__all__ = [
    "CharVocabulary",
    "associative_recall_batch",
    "copy_batch",
    "date_arrays",
    "generate_dates",
    "priority_sort_batch",
    "repeat_copy_batch",
    "sort_arrays",
    "task_dataset",
    "task_dims",
]

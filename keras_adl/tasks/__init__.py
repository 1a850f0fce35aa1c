"""Data: synthetic tasks of the papers and loaders of real data in standard formats."""

from keras_adl.tasks.dates import CharVocabulary, date_arrays, generate_dates
from keras_adl.tasks.sorting import sort_arrays

__all__ = ["CharVocabulary", "date_arrays", "generate_dates", "sort_arrays"]

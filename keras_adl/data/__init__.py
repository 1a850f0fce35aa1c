"""Data: synthetic tasks of the papers and loaders of real data in standard formats.

One module per source or task. Re-exported here: `algorithmic` (copy, repeat copy,
associative recall, priority sort), `sorting`, `dates`, `date_fields` (dates tagged field by
field, for cross-view training), `cross_view` (its stream of labelled and unlabelled batches),
`image_sources` (scikit-learn digits, MNIST-format IDX files), `translated_digits`,
`digit_strips`, `corpora` (the user's labelled documents), `fortunes`, `english_tags` (fortune
sentences with silver part-of-speech and WordNet supersense tags, for multi-task tagging),
`needle` and `splits`. The text pipelines' modules are imported by their
own paths: `text_pairs`, `gettext_catalogs` (translation catalogs as text pairs),
`text_corpora` (plain-text corpora), `skipgrams` (word2vec), `bilm` (ELMo) and `pretraining`
(packing, masked-LM data and windows, e.g.
``from keras_adl.data.pretraining import text_windows``). The figures that score models on
these tasks are in each family's ``keras_adl/recipes/<family>/evaluate.py``; token ids are in
`keras_adl.conventions`.
"""

from keras_adl.data.algorithmic import (
    associative_recall_batch,
    copy_batch,
    priority_sort_batch,
    repeat_copy_batch,
    task_dataset,
    task_dims,
)
from keras_adl.data.corpora import load_document_tree, load_document_tsv, load_documents
from keras_adl.data.cross_view import cross_view_batches
from keras_adl.data.date_fields import (
    DATE_FIELD_MAX_TOKENS,
    DATE_FIELD_TAGS,
    DATE_FIELD_VOCABULARY,
    date_field_arrays,
    date_field_sequences,
    date_field_tokens,
)
from keras_adl.data.dates import date_arrays, generate_dates
from keras_adl.data.digit_strips import (
    CAPTION_VOCAB_SIZE,
    DIGIT_OFFSET,
    DigitStrips,
    caption_arrays,
    digit_strips,
)
from keras_adl.data.english_tags import (
    ENGLISH_TAG_TASKS,
    WORDNET_LEXNAMES,
    english_tag_arrays,
    english_tag_sentences,
    fortune_sentences,
    pos_tag,
    supersense_tags,
)
from keras_adl.data.fortunes import (
    FORTUNE_DIRECTORIES,
    FORTUNE_TOPICS,
    find_fortunes,
    load_fortunes,
    read_fortune_file,
)
from keras_adl.data.image_sources import (
    find_fashion_mnist,
    load_idx_dataset,
    load_sklearn_digits,
    read_idx,
)
from keras_adl.data.needle import CLASS_WORDS, FILLER_WORDS, NEEDLE_WORD, needle_documents
from keras_adl.data.sorting import sort_arrays
from keras_adl.data.splits import split_dataset
from keras_adl.data.translated_digits import TranslatedDigits, translate_digits

__all__ = [
    "cross_view_batches",
    "CAPTION_VOCAB_SIZE",
    "CLASS_WORDS",
    "DATE_FIELD_MAX_TOKENS",
    "DATE_FIELD_TAGS",
    "DATE_FIELD_VOCABULARY",
    "DIGIT_OFFSET",
    "ENGLISH_TAG_TASKS",
    "FILLER_WORDS",
    "FORTUNE_DIRECTORIES",
    "FORTUNE_TOPICS",
    "NEEDLE_WORD",
    "WORDNET_LEXNAMES",
    "DigitStrips",
    "TranslatedDigits",
    "associative_recall_batch",
    "caption_arrays",
    "copy_batch",
    "date_arrays",
    "date_field_arrays",
    "date_field_sequences",
    "date_field_tokens",
    "digit_strips",
    "english_tag_arrays",
    "english_tag_sentences",
    "find_fashion_mnist",
    "find_fortunes",
    "fortune_sentences",
    "generate_dates",
    "load_document_tree",
    "load_document_tsv",
    "load_documents",
    "load_fortunes",
    "load_idx_dataset",
    "load_sklearn_digits",
    "needle_documents",
    "pos_tag",
    "priority_sort_batch",
    "read_fortune_file",
    "read_idx",
    "repeat_copy_batch",
    "sort_arrays",
    "split_dataset",
    "supersense_tags",
    "task_dataset",
    "task_dims",
    "translate_digits",
]

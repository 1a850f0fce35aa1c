"""Tokenizers: raw text to padded id arrays.

`DocumentTokenizer`, `TextPairTokenizer` and `WordPieceTokenizer` (with `learn_wordpiece`, the
subword vocabulary every text family shares) tokenize in-graph with tensorflow-text.
`TextPairTokenizer` can slot the spans a translation keeps unchanged (`CopyThrough`:
placeholders, options) so they are copied exactly. `TextPairTokenizer` and `WordPieceTokenizer` first apply the Unicode normalisation of
`keras_adl.text.normalization` (NFKC and full case folding); `DocumentTokenizer` applies NFC
and Unicode lower-casing (its class docstring gives the rules). `CharVocabulary` is plain
numpy. `TranslationMemory` retrieves the stored pair whose source is most like a text, in the
graph (a translator's fuzzy match). `count_vocabulary` and `lookup_table` (`keras_adl.text.vocabulary`) are the counting
and the id lookup table the tokenizers share. The tensorflow-text tokenizers are imported on
first use, so ``from keras_adl.text import CharVocabulary`` does not load tensorflow-text.
"""

import importlib

from keras_adl.text.char_vocabulary import CharVocabulary

_LAZY = {
    "CopyThrough": "keras_adl.text.copy_through",
    "DocumentTokenizer": "keras_adl.text.document_tokenizer",
    "TextPairTokenizer": "keras_adl.text.tokenizer",
    "TranslationMemory": "keras_adl.text.translation_memory",
    "WordPieceTokenizer": "keras_adl.text.wordpiece",
    "count_vocabulary": "keras_adl.text.vocabulary",
    "learn_wordpiece": "keras_adl.text.wordpiece",
    "lookup_table": "keras_adl.text.vocabulary",
}

__all__ = [
    "CharVocabulary",
    "CopyThrough",
    "DocumentTokenizer",
    "TextPairTokenizer",
    "TranslationMemory",
    "WordPieceTokenizer",
    "count_vocabulary",
    "learn_wordpiece",
    "lookup_table",
]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))

"""Tokenizers: raw text to padded id arrays.

`DocumentTokenizer` and `TextPairTokenizer` tokenize in-graph with tensorflow-text (this is the
one package importing it); `CharVocabulary` is plain numpy. The tensorflow-text tokenizers are
imported on first use, so ``from keras_adl.text import CharVocabulary`` does not load
tensorflow-text.
"""

import importlib

from keras_adl.text.char_vocabulary import CharVocabulary

_LAZY = {
    "DocumentTokenizer": "keras_adl.text.document_tokenizer",
    "TextPairTokenizer": "keras_adl.text.tokenizer",
}

__all__ = ["CharVocabulary", "DocumentTokenizer", "TextPairTokenizer"]


def __getattr__(name):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))

"""Raw-text preprocessing with tensorflow-text, in-graph (the one package importing it)."""

from keras_adl.text.document_tokenizer import DocumentTokenizer
from keras_adl.text.tokenizer import TextPairTokenizer

__all__ = ["DocumentTokenizer", "TextPairTokenizer"]

"""Plain-text corpora for word embeddings: the user's text files, Debian's GCIDE dictionary
(``dict-gcide``) and WordNet's glosses (``wordnet-base``), as documents of words.

A **document** is the unit windows never cross: a paragraph of a text file (lines up to a
blank line), a paragraph of a dictionary entry, or one WordNet synset (its words and gloss).
Words come from `keras_adl.text.normalization.plain_words` (NFKC, full case folding, runs of
letters and digits; punctuation dropped), in ``tf.data`` batches.

Readers of the standard formats, so a user with the files gets the same code path:

- `read_text_documents`: a UTF-8 ``.txt`` file, or a directory of them (recursive).
- `read_gcide`: the dictd database ``gcide.dict.dz`` (dictzip is gzip-readable), with the
  GCIDE markup removed: ``[1913 Webster]`` source tags, ``\\pro*nun"ci*a`tion\\`` marks,
  ``{cross reference}`` braces and ``--Author.`` citations.
- `read_wordnet_glosses`: the ``data.noun``, ``data.verb``, ``data.adj`` and ``data.adv``
  files of WordNet 3.0 (one document per synset: its words, then its gloss).
"""

import glob
import gzip
import os
import re

GCIDE_PATH = "/usr/share/dictd/gcide.dict.dz"
WORDNET_DIR = "/usr/share/wordnet"
WORDNET_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
_GCIDE_MARKUP = [
    (re.compile(r"\[[^\]]*\]"), " "),  # [1913 Webster], [Obs.], etymologies in brackets
    (re.compile(r"\\[^\\\n]*\\"), " "),  # \A*buse"\ pronunciations
    (re.compile(r"--[A-Z][^.\n]*\."), " "),  # --Shak. citations
    (re.compile(r"[{}]"), ""),  # {cross references}
]


def paragraphs(text):
    """The blank-line-separated paragraphs of ``text``, each one line (non-empty only)."""
    return [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]


def read_text_documents(path):
    """The paragraphs of a UTF-8 text file, or of the ``.txt`` files under a directory (in
    name order).

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: a file is not valid UTF-8, or no text was found (the message names it).
    """
    if os.path.isdir(path):
        files = sorted(glob.glob(os.path.join(path, "**", "*.txt"), recursive=True))
        if not files:
            raise ValueError(f"no .txt file found under {path!r}")
    elif os.path.isfile(path):
        files = [path]
    else:
        raise FileNotFoundError(f"corpus {path!r} not found")
    documents = []
    for name in files:
        try:
            with open(name, encoding="utf-8") as f:
                documents += paragraphs(f.read())
        except UnicodeDecodeError as error:
            raise ValueError(f"{name}: not valid UTF-8 (byte {error.start})") from None
    if not documents:
        raise ValueError(f"no text found in {path!r}")
    return documents


def read_gcide(path=GCIDE_PATH):
    """The paragraphs of Debian's GCIDE dictionary (``dict-gcide``), markup removed.

    Raises:
        FileNotFoundError: naming the file and the Debian package (``make data``).
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} not found; install Debian's dict-gcide (`make data`) or pass a text corpus"
        )
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        text = f.read()
    for pattern, replacement in _GCIDE_MARKUP:
        text = pattern.sub(replacement, text)
    return paragraphs(text)


def read_wordnet_glosses(directory=WORDNET_DIR):
    """One document per WordNet synset: its words (``_`` as spaces) and its gloss.

    Raises:
        FileNotFoundError: naming the directory and the Debian package (``make data``).
    """
    paths = [os.path.join(directory, name) for name in WORDNET_FILES]
    if not any(os.path.isfile(p) for p in paths):
        raise FileNotFoundError(
            f"no WordNet data files ({', '.join(WORDNET_FILES)}) in {directory}; install "
            "Debian's wordnet-base (`make data`)"
        )
    documents = []
    for path in paths:
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith(" ") or " | " not in line:
                    continue  # the licence header, or a line without a gloss
                fields, gloss = line.split(" | ", 1)
                parts = fields.split()
                count = int(parts[3], 16)
                words = [parts[4 + 2 * i].replace("_", " ") for i in range(count)]
                documents.append(" ".join(words) + ": " + gloss.strip())
    return documents


def load_corpus(path=None):
    """Documents from ``path``: ``gcide.dict.dz`` → `read_gcide`, a WordNet directory →
    `read_wordnet_glosses`, any other file or directory → `read_text_documents`; ``None`` →
    the installed GCIDE."""
    if path is None or path.endswith(".dict.dz"):
        return read_gcide(path or GCIDE_PATH)
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "data.noun")):
        return read_wordnet_glosses(path)
    return read_text_documents(path)


def tokenize_documents(documents, batch_size=4096):
    """The words of each document (`keras_adl.text.normalization.plain_words`), tokenized in
    ``tf.data`` batches: a list of lists of str."""
    import tensorflow as tf

    from keras_adl.text.normalization import plain_words

    tokenized = []
    dataset = tf.data.Dataset.from_tensor_slices(list(documents)).batch(batch_size)
    for words in dataset.map(plain_words, num_parallel_calls=tf.data.AUTOTUNE):
        flat = [w.decode() for w in words.flat_values.numpy()]
        ends = words.row_splits.numpy()
        tokenized += [flat[ends[i] : ends[i + 1]] for i in range(len(ends) - 1)]
    return tokenized

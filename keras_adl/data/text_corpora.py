"""Plain-text corpora for word embeddings: the user's text files, Debian's GCIDE dictionary
(``dict-gcide``) and WordNet's glosses (``wordnet-base``), as documents of words.

A **document** is the unit windows never cross: a paragraph of a text file (lines up to a
blank line) or, in a file without blank lines, a line; a paragraph of a dictionary entry; or
one WordNet synset (its words and gloss).
Words come from `keras_adl.text.normalization.plain_words` (NFKC, full case folding, runs of
letters and digits; punctuation dropped), in ``tf.data`` batches.

Readers of the standard formats, so a user with the files gets the same code path:

- `read_text_documents`: a UTF-8 text file (plain or ``.gz``), a directory of ``.txt`` and
  ``.gz`` files (recursive) or a glob. These readers hold the corpus in memory;
  `keras_adl.data.text_streams` streams one of any size from disk (word2vec reads it so).
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
from collections.abc import Iterator

import numpy as np
import tensorflow as tf

from keras_adl.text.normalization import plain_words

__all__ = [
    "corpus_files",
    "load_corpus",
    "read_text_documents",
    "read_gcide",
    "read_wordnet_glosses",
    "tokenize_documents",
    "wordnet_synsets",
]


GCIDE_PATH = "/usr/share/dictd/gcide.dict.dz"
WORDNET_DIR = "/usr/share/wordnet"
WORDNET_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
_GCIDE_MARKUP = [
    (re.compile(r"\[[^\]]*\]"), " "),  # [1913 Webster], [Obs.], etymologies in brackets
    (re.compile(r"\\[^\\\n]*\\"), " "),  # \A*buse"\ pronunciations
    (re.compile(r"--[A-Z][^.\n]*\."), " "),  # --Shak. citations
    (re.compile(r"[{}]"), ""),  # {cross references}
]


# How `read_text_documents` splits a file, as ``--help`` and its errors say it.
LAYOUT_RULE = (
    "a file with blank lines is read as paragraphs (lines up to a blank line), a file "
    "without as one document per line"
)
# Lines per document when a file without blank lines is read as sentences (`line_blocks`).
LINES_PER_BLOCK = 8
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
_GLOB_CHARACTERS = re.compile(r"[*?\[]")
_TEXT_SUFFIXES = (".txt", ".gz")


def paragraphs(text):
    """The blank-line-separated paragraphs of ``text``, each one line (non-empty only)."""
    return [" ".join(p.split()) for p in _BLANK_LINE.split(text) if p.strip()]


def has_paragraphs(text):
    """Whether ``text`` holds a blank line (then it is read as paragraphs, else as lines)."""
    return _BLANK_LINE.search(text.strip()) is not None


def text_documents(text, blocks=False):
    """The documents of one file's ``text``: its paragraphs when it holds a blank line, else
    its non-empty lines (white space folded), or with ``blocks`` those lines grouped
    (`line_blocks`)."""
    if has_paragraphs(text):
        return paragraphs(text)
    lines = [" ".join(line.split()) for line in text.splitlines() if line.strip()]
    return line_blocks(lines) if blocks else lines


def line_blocks(documents, size=LINES_PER_BLOCK):
    """Consecutive line-documents grouped ``size`` at a time, one line per sentence (joined by
    newlines): the documents of next-sentence pairs when a file has no paragraphs."""
    return ["\n".join(documents[i : i + size]) for i in range(0, len(documents), size)]


def decode_text(name, raw):
    """The text of the UTF-8 bytes ``raw`` read from file ``name`` (a byte-order mark dropped,
    CRLF and CR read as LF).

    Args:
        name: the file's name, for the error messages.
        raw: bytes.

    Returns:
        A str.

    Raises:
        ValueError: ``name:line:`` of an invalid UTF-8 byte or a NUL byte.
    """
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        offset = error.start + (3 if raw.startswith(b"\xef\xbb\xbf") else 0)
        line = raw[:offset].count(b"\n") + 1
        raise ValueError(
            f"{name}:{line}: not valid UTF-8 (byte {offset}: {raw[offset : offset + 1]!r}); "
            f"save the file as UTF-8"
        ) from None
    if "\x00" in text:
        line = text[: text.index("\x00")].count("\n") + 1
        raise ValueError(f"{name}:{line}: a NUL byte; expected a text file")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def corpus_files(path):
    """The text files of ``--data``: a file, a directory (its ``.txt`` and ``.gz`` files,
    recursively, in name order) or a glob.

    Args:
        path: a file, directory or glob pattern.

    Returns:
        A list of file names.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: a directory or glob without a text file.
    """
    if _GLOB_CHARACTERS.search(path) and not os.path.exists(path):
        files = sorted(f for f in glob.glob(path, recursive=True) if os.path.isfile(f))
        if not files:
            raise ValueError(f"no file matches {path!r}")
        return files
    if os.path.isdir(path):
        found = glob.glob(os.path.join(path, "**", "*"), recursive=True)
        files = sorted(f for f in found if f.endswith(_TEXT_SUFFIXES) and os.path.isfile(f))
        if not files:
            raise ValueError(f"no .txt or .gz file found under {path!r}")
        return files
    if os.path.isfile(path):
        return [path]
    raise FileNotFoundError(f"corpus {path!r} not found")


def read_text(name):
    """The text of a UTF-8 file, gunzipped when its name ends in ``.gz`` (`decode_text`).

    Args:
        name: the file.

    Returns:
        A str.

    Raises:
        ValueError: the file is not UTF-8 text (`decode_text`), or not gzip data.
    """
    try:
        with gzip.open(name, "rb") if name.endswith(".gz") else open(name, "rb") as f:
            raw = f.read()
    except (gzip.BadGzipFile, EOFError) as error:
        raise ValueError(f"{name}: cannot be read as gzip ({error})") from None
    return decode_text(name, raw)


def read_text_documents(path, blocks=False):
    """The documents of a UTF-8 text file (plain or ``.gz``), of the ``.txt`` and ``.gz``
    files under a directory (in name order) or of the files a glob matches (`corpus_files`):
    each file's paragraphs when it holds a blank line, else its lines
    (`text_documents`).

    Args:
        path: a file, directory or glob.
        blocks: read a file without blank lines as consecutive sentences instead: its lines
            grouped `LINES_PER_BLOCK` at a time (`line_blocks`), for next-sentence pairs.

    Returns:
        A list of str.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: a file is not valid UTF-8 or holds a NUL byte (naming the file and line),
            a directory or glob holds no text file, or no text was found.

    Example:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     for name, text in [("a.txt", "First  paragraph,\\non two lines.\\n\\nSecond one.\\n"),
    ...                        ("b.txt", "One line\\r\\nanother\\r\\n")]:  # no blank line: lines
    ...         with open(os.path.join(directory, name), "w", encoding="utf-8") as f:
    ...             _ = f.write(text)
    ...     print(read_text_documents(directory))
    ...     print(read_text_documents(os.path.join(directory, "b.txt"), blocks=True))
    ['First paragraph, on two lines.', 'Second one.', 'One line', 'another']
    ['One line\\nanother']
    """
    files = corpus_files(path)
    documents = []
    for name in files:
        documents += text_documents(read_text(name), blocks)
    if not documents:
        raise ValueError(f"no text found in {path!r}")
    return documents


def topic_corpus(vocabulary, lines, topics=6, seed=0):
    """A synthetic corpus of ``lines`` lines over ``vocabulary`` words (``w0``, ``w1``, …):
    each line draws a topic and 5 to 13 words, 80% from the topic's share of the vocabulary,
    the rest from all of it, so words of one topic share contexts. The vocabulary size is
    the user's knob (a small one makes every word occur many times in a batch).

    Args:
        vocabulary: the number of words.
        lines: the number of lines.
        topics: the number of topics.
        seed: the seed of the draws.

    Returns:
        The text, one line per line (no blank lines).

    Example:

    >>> len(topic_corpus(10, 2).splitlines())
    2
    """
    rng = np.random.default_rng(seed)
    groups = np.array_split(np.arange(vocabulary), topics)
    out = []
    for _ in range(lines):
        group = groups[rng.integers(topics)]
        count = rng.integers(5, 14)
        ids = np.where(
            rng.random(count) < 0.8, rng.choice(group, count), rng.integers(0, vocabulary, count)
        )
        out.append(" ".join(f"w{i}" for i in ids))
    return "\n".join(out) + "\n"


def read_gcide(path=GCIDE_PATH):
    """The paragraphs of Debian's GCIDE dictionary (``dict-gcide``), markup removed.

    Args:
        path: the gzipped dictionary file.

    Returns:
        A list of str.

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

    Args:
        directory: the WordNet dictionary directory (``data.noun``, ...).

    Returns:
        A list of str.

    Raises:
        FileNotFoundError: naming the directory and the Debian package (``make data``).
    """
    return list(wordnet_synsets(directory))


def wordnet_synsets(directory=WORDNET_DIR) -> Iterator[str]:
    """`read_wordnet_glosses`' documents one at a time, read as they come (for streams).

    Args:
        directory: the WordNet dictionary directory.

    Yields:
        str: a synset's words, then its gloss.

    Raises:
        FileNotFoundError: naming the directory and the Debian package (``make data``).
    """
    paths = [os.path.join(directory, name) for name in WORDNET_FILES]
    if not any(os.path.isfile(p) for p in paths):
        raise FileNotFoundError(
            f"no WordNet data files ({', '.join(WORDNET_FILES)}) in {directory}; install "
            "Debian's wordnet-base (`make data`)"
        )
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
                yield " ".join(words) + ": " + gloss.strip()


def load_corpus(path=None, blocks=False):
    """Documents from ``path``: ``gcide.dict.dz`` → `read_gcide`, a WordNet directory →
    `read_wordnet_glosses`, any other file or directory → `read_text_documents` (``blocks``
    passed on); ``None`` → the installed GCIDE."""
    if path is None or path.endswith(".dict.dz"):
        return read_gcide(path or GCIDE_PATH)
    if os.path.isdir(path) and os.path.isfile(os.path.join(path, "data.noun")):
        return read_wordnet_glosses(path)
    return read_text_documents(path, blocks=blocks)


def tokenize_documents(documents, batch_size=4096):
    """The words of each document (`keras_adl.text.normalization.plain_words`), tokenized in
    ``tf.data`` batches: a list of lists of str."""
    tokenized = []
    dataset = tf.data.Dataset.from_tensor_slices(list(documents)).batch(batch_size)
    for words in dataset.map(plain_words, num_parallel_calls=tf.data.AUTOTUNE):
        flat = [w.decode() for w in words.flat_values.numpy()]
        ends = words.row_splits.numpy()
        tokenized += [flat[ends[i] : ends[i + 1]] for i in range(len(ends) - 1)]
    return tokenized

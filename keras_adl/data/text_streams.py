"""Text corpora of any size, streamed from disk: memory follows the vocabulary and the model,
never the corpus.

A `TextStream` reads a corpus as **blocks** of whole lines (about `BLOCK_BYTES` each) in
Python, checks each as it goes (UTF-8, no NUL byte, naming the file and line otherwise), and
hands them to ``tf.data``, where `block_words` cuts them into lines, documents and words
(`keras_adl.text.normalization.plain_words`) in the graph. Nothing holds more than a few
blocks at a time, so a corpus of gigabytes trains in the memory of a small one.

The forms ``--data`` takes:

- a UTF-8 text file, plain or gzipped (``.gz``); a directory (its ``.txt`` and ``.gz`` files,
  recursively, in name order); or a glob (``corpus/*.txt.gz``);
- Debian's GCIDE dictionary (``gcide.dict.dz``, markup removed as `read_gcide` does) and a
  WordNet directory (one document per synset), the installed defaults.

Documents follow `keras_adl.data.text_corpora`'s rule, decided per file: a file with a blank
line between two lines of text is read as paragraphs (lines up to a blank line), a file
without as one document per line. A line longer than `MAX_LINE_BYTES` is cut into pieces at a
space (windows across a cut are lost; memory stays bounded). A paragraph longer than a block
is cut at the block's end likewise. Read with ``lines_per_document``, a file without blank
lines gives its lines in groups, one sentence each (next-sentence pairs need documents of
several sentences), joined by `LINE_BREAK`.

`count_words` is the one counting pass: word counts (pruned as gensim's ``max_vocab_size`` is
when the distinct words exceed ``max_words``), documents and words, so an epoch's length is
known before training. It can also write the corpus as word numbers (`EncodedCorpus`, 4 bytes
a word, on disk), which each epoch then reads without tokenizing the text again.
"""

import atexit
import gzip
import os
import re
import tempfile
from collections.abc import Iterator

import numpy as np
import tensorflow as tf

from keras_adl.data.text_corpora import (
    _GCIDE_MARKUP,
    GCIDE_PATH,
    corpus_files,
    paragraphs,
    wordnet_synsets,
)
from keras_adl.text.normalization import plain_words

__all__ = [
    "EncodedCorpus",
    "LINE_BREAK",
    "block_lines",
    "TextStream",
    "WordCounts",
    "block_words",
    "corpus_files",
    "count_words",
    "document_texts",
    "temporary_file",
]


# Bytes read at a time: a block of about 80,000 words, the unit tf.data tokenizes and word2vec
# draws its examples from (its windows stop at a block's end).
BLOCK_BYTES = 1 << 19
# A line longer than this is cut at a space (a file of one huge line still streams).
MAX_LINE_BYTES = 1 << 20
# Distinct words the counting pass holds before it prunes the rarest (gensim's max_vocab_size):
# about 250 MB of counts.
MAX_COUNTED_WORDS = 2_000_000
_BLANK_LINE = re.compile(rb"\n[^\S\n]*\n")
# Joins the lines grouped into one document (``lines_per_document``): U+2028 LINE SEPARATOR,
# which no folding of white space removes (RE2's \s is ASCII) and a sentence splitter reads as
# a sentence end.
LINE_BREAK = "\u2028"


def _open(name):
    """``name`` opened for reading bytes (gunzipped when it ends in ``.gz``)."""
    return gzip.open(name, "rb") if name.endswith(".gz") else open(name, "rb")


def _read_blocks(name, size):
    """The raw byte blocks of file ``name``; a broken gzip file named in one line."""
    try:
        with _open(name) as f:
            while block := f.read(size):
                yield block
    except (gzip.BadGzipFile, EOFError, OSError) as error:
        if isinstance(error, FileNotFoundError):
            raise
        raise ValueError(
            f"{name}: cannot be read as {'gzip' if name.endswith('.gz') else 'text'} ({error})"
        ) from None


def _lf_blocks(name, size):
    """The byte blocks of file ``name`` with CRLF and CR line ends read as LF (a CR ending
    one block carried to the next, so a CRLF pair cut in two stays one end) and a byte-order
    mark dropped."""
    carried, first = b"", True
    for raw in _read_blocks(name, size):
        if first:
            raw, first = raw.removeprefix(b"\xef\xbb\xbf"), False
        raw = carried + raw
        carried = b""
        if b"\r" in raw:
            if raw.endswith(b"\r"):
                raw, carried = raw[:-1], b"\r"
            raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        yield raw
    if carried:
        yield b"\n"


def has_paragraphs(name):
    """Whether file ``name`` holds a blank line between two lines of text (then it is read as
    paragraphs), found in one streaming scan that stops at the first such line."""
    seen_text, tail = False, b""
    for raw in _lf_blocks(name, 1 << 20):
        text = tail + raw
        start = 0
        for match in _BLANK_LINE.finditer(text):
            if (seen_text or text[: match.start()].strip()) and text[match.end() :].strip():
                return True
            start = match.end()
        seen_text = seen_text or bool(text[:start].strip())
        tail = text[start:]
        if len(tail) > 1 << 16:  # no blank line can start this far back
            seen_text = seen_text or bool(tail[: -(1 << 16)].strip())
            tail = tail[-(1 << 16) :]
    return False


def _cut_point(data):
    """Where to cut ``data`` (no newline in it, longer than `MAX_LINE_BYTES`): after its last
    space, else before a UTF-8 lead byte (never inside a character)."""
    space = max(data.rfind(b" ", 0, MAX_LINE_BYTES), data.rfind(b"\t", 0, MAX_LINE_BYTES))
    if space > 0:
        return space + 1
    cut = MAX_LINE_BYTES
    while cut > 1 and data[cut] & 0xC0 == 0x80:  # a continuation byte
        cut -= 1
    return cut


def _checked(name, block, line):
    """``block`` when it is UTF-8 without NUL bytes; else one line naming ``name`` and the
    line (``line``: the block's first line number)."""
    try:
        block.decode("utf-8")
    except UnicodeDecodeError as error:
        at = line + block[: error.start].count(b"\n")
        bad = block[error.start : error.start + 1]
        raise ValueError(
            f"{name}:{at}: not valid UTF-8 (byte {bad!r}); save the file as UTF-8"
        ) from None
    nul = block.find(b"\x00")
    if nul >= 0:
        at = line + block[:nul].count(b"\n")
        raise ValueError(f"{name}:{at}: a NUL byte; expected a text file")
    return block


def file_blocks(name, size=BLOCK_BYTES) -> Iterator[bytes]:
    """The blocks of whole lines of text file ``name`` (bytes, about ``size`` each, CR and
    CRLF ends read as LF, a byte-order mark dropped), each checked (`_checked`).

    Args:
        name: the file (plain or ``.gz``).
        size: the bytes read at a time.

    Yields:
        UTF-8 bytes of whole lines (a line longer than `MAX_LINE_BYTES` cut at a space).

    Raises:
        ValueError: invalid UTF-8 or a NUL byte, naming the file and line.
    """
    pending, line = b"", 1
    for raw in _lf_blocks(name, size):
        data = pending + raw
        cut = data.rfind(b"\n") + 1
        if not cut:
            if len(data) <= MAX_LINE_BYTES:
                pending = data
                continue
            cut = _cut_point(data)
        block, pending = data[:cut], data[cut:]
        yield _checked(name, block, line)
        line += block.count(b"\n")
    if pending:
        yield _checked(name, pending, line)


def _gcide_path(path):
    """``path`` if the GCIDE file is there; else one line naming the Debian package."""
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"{path} not found; install Debian's dict-gcide (`make data`) or pass a text corpus"
        )
    return path


def temporary_file(prefix):
    """A new temporary file's name (``prefix`` first), deleted when the process ends: where
    a pass writes the corpus it encodes."""
    handle, name = tempfile.mkstemp(prefix=prefix, suffix=".ids")
    os.close(handle)
    atexit.register(lambda: os.path.exists(name) and os.remove(name))
    return name


def _gcide_blocks(path, size=BLOCK_BYTES * 4):
    """GCIDE's paragraphs, markup removed (`keras_adl.data.text_corpora.read_gcide`), in
    blocks of one paragraph per line."""
    pending = ""
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        while True:
            raw = f.read(size)
            text = pending + raw
            cut = text.rfind("\n\n") + 2 if raw else len(text)
            if cut < 2 and raw:
                pending = text
                continue
            text, pending = text[:cut], text[cut:]
            for pattern, replacement in _GCIDE_MARKUP:
                text = pattern.sub(replacement, text)
            found = paragraphs(text)
            if found:
                yield ("\n".join(found) + "\n").encode("utf-8")
            if not raw:
                return


def _wordnet_blocks(directory, size=BLOCK_BYTES):
    """One line per WordNet synset (`wordnet_synsets`), in blocks."""
    lines, length = [], 0
    for line in wordnet_synsets(directory):
        lines.append(" ".join(line.split()))
        length += len(lines[-1])
        if length >= size:
            yield ("\n".join(lines) + "\n").encode("utf-8")
            lines, length = [], 0
    if lines:
        yield ("\n".join(lines) + "\n").encode("utf-8")


def _documents_in(block, by_paragraph):
    """The documents that start in ``block``: its lines of text, or with ``by_paragraph``
    the lines of text after a blank line or at the block's start."""
    lines = block.split(b"\n")
    if not by_paragraph:
        return sum(1 for line in lines if line.strip())
    return sum(1 for a, b in zip([b""] + lines, lines) if b.strip() and not a.strip())


def _first_documents(block, by_paragraph, count):
    """The lines of ``block`` up to (not including) the start of its ``count + 1``-th
    document."""
    lines = block.split(b"\n")
    seen, previous = 0, b""
    for i, line in enumerate(lines):
        starts = line.strip() and (not by_paragraph or not previous.strip())
        if starts:
            seen += 1
            if seen > count:
                return b"\n".join(lines[:i]) + b"\n"
        previous = line
    return block


def _grouped_lines(block, size):
    """A block of one document per line with its lines of text joined ``size`` at a time by
    `LINE_BREAK` (the last group of a block may be shorter)."""
    lines = [line for line in block.split(b"\n") if line.strip()]
    joiner = LINE_BREAK.encode("utf-8")
    return b"".join(joiner.join(lines[i : i + size]) + b"\n" for i in range(0, len(lines), size))


class TextStream:
    """A corpus read as blocks of whole lines, again on every pass, from disk.

    Args:
        path: ``--data`` (`corpus_files`' forms, ``gcide.dict.dz`` or a WordNet directory);
            ``None``: the installed GCIDE.
        documents: read at most this many documents (the first ones; ``None``: all).
        block_bytes: the size of a block.
        lines_per_document: a file without blank lines gives its lines this many at a time
            as one document, joined by `LINE_BREAK` (a group stops at a block's end); 1:
            one document per line.

    Raises:
        FileNotFoundError, ValueError: ``path`` names no corpus (one line).

    Example:

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     name = os.path.join(directory, "a.txt")
    ...     with open(name, "w", encoding="utf-8") as f:
    ...         _ = f.write("Un  été\\u00a0chaud.\\n\\nL'hiver, froid.\\n")
    ...     words, documents = block_words(*next(iter(TextStream(name))))
    ...     print(words.to_list(), documents.numpy().tolist())
    [[b'un', b'\\xc3\\xa9t\\xc3\\xa9', b'chaud'], [], [b'l', b'hiver', b'froid'], []] [0, 0, 1, 1]
    """

    def __init__(self, path=None, documents=None, block_bytes=BLOCK_BYTES, lines_per_document=1):
        self.path = path
        self.limit = documents
        self.block_bytes = block_bytes
        self.lines_per_document = lines_per_document
        if path is None or path.endswith(".dict.dz"):
            self._source = ("gcide", _gcide_path(path or GCIDE_PATH))
        elif os.path.isdir(path) and os.path.isfile(os.path.join(path, "data.noun")):
            self._source = ("wordnet", path)
        else:
            files = corpus_files(path)
            self._source = ("files", [(name, has_paragraphs(name)) for name in files])

    def _all_blocks(self):
        kind, where = self._source
        if kind == "gcide":
            for block in _gcide_blocks(where):
                yield block, False
        elif kind == "wordnet":
            for block in _wordnet_blocks(where, self.block_bytes):
                yield block, False
        else:
            group = self.lines_per_document
            for name, by_paragraph in where:
                for block in file_blocks(name, self.block_bytes):
                    if group > 1 and not by_paragraph:
                        block = _grouped_lines(block, group)
                    yield block, by_paragraph

    def __iter__(self):
        """``(block, by_paragraph)`` pairs: UTF-8 bytes of whole lines, and whether their
        documents are paragraphs (else lines)."""
        left = self.limit
        for block, by_paragraph in self._all_blocks():
            if left is not None:
                found = _documents_in(block, by_paragraph)
                if found > left:
                    block = _first_documents(block, by_paragraph, left)
                    found = left
                left -= found
            yield block, by_paragraph
            if left is not None and left <= 0:
                return

    def dataset(self, errors=None):
        """The blocks as a ``tf.data.Dataset`` of ``(block, by_paragraph)`` scalars, read
        again on each iteration.

        Args:
            errors: a list: a file's `ValueError` (not UTF-8, a NUL byte) then ends the
                dataset and is appended there, for the caller to raise as itself (``tf.data``
                would raise it wrapped, with a trace). ``None``: raised in ``tf.data``.

        Returns:
            A ``tf.data.Dataset``.
        """

        def blocks():
            try:
                yield from self
            except ValueError as error:
                if errors is None:
                    raise
                errors.append(error)

        return tf.data.Dataset.from_generator(
            blocks, output_signature=(tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.bool))
        )

    def chunks(self, vocabulary, first_id):
        """``(ids, documents)`` runs of the stream's words in ``vocabulary`` (a list of
        words; word ``i`` gets id ``first_id + i``), one per block, tokenized on every pass:
        a ``tf.data.Dataset`` of int32 ``[N]`` pairs, other words dropped."""
        table = vocabulary_table(vocabulary, first_id)

        def encode(block, by_paragraph):
            words, documents = block_words(block, by_paragraph)
            ids = table.lookup(words.flat_values)
            numbers = tf.repeat(documents, tf.cast(words.row_lengths(), tf.int32))
            known = ids >= 0
            return ids[known], numbers[known]

        return self.dataset().map(encode, num_parallel_calls=tf.data.AUTOTUNE)

    def documents(self):
        """The words of each document, one list of str at a time (for tools that take Python
        sentences, such as gensim); a document cut by a block's end comes in two."""
        for block, by_paragraph in self:
            words, numbers = block_words(tf.constant(block), tf.constant(by_paragraph))
            rows = words.to_list()
            numbers = numbers.numpy()
            current, last = [], None
            for row, number in zip(rows, numbers):
                if number != last and current:
                    yield [w.decode() for w in current]
                    current = []
                last = number
                current += row
            if current:
                yield [w.decode() for w in current]


def block_lines(block, by_paragraph):
    """``(lines, starts, documents)`` of a block: its lines, whether each starts a document
    and the document of each (from 0; a blank line belongs to the document before it).

    Args:
        block: a scalar string of whole lines.
        by_paragraph: whether documents are paragraphs (lines up to a blank line) rather
            than lines.

    Returns:
        ``[L]`` strings, ``[L]`` bools and int32 ``[L]``.
    """
    lines = tf.strings.split(block, "\n")
    text = tf.strings.length(tf.strings.strip(lines)) > 0
    previous = tf.concat([[False], text[:-1]], 0)
    starts = tf.where(by_paragraph, text & ~previous, text)
    documents = tf.maximum(tf.cumsum(tf.cast(starts, tf.int32)) - 1, 0)
    return lines, starts, documents


def document_texts(block, by_paragraph):
    """The documents of a block as text: each line's white space folded to single spaces,
    the lines of a paragraph joined by a space (`keras_adl.data.text_corpora.paragraphs`'s
    rule), empty documents dropped: ``[D]`` strings."""
    lines, _, documents = block_lines(block, by_paragraph)
    folded = tf.strings.strip(tf.strings.regex_replace(lines, r"\s+", " "))
    texts = tf.strings.unsorted_segment_join(
        folded, documents, tf.reduce_max(documents) + 1, separator=" "
    )
    texts = tf.strings.strip(tf.strings.regex_replace(texts, " +", " "))
    return tf.boolean_mask(texts, tf.strings.length(texts) > 0)


@tf.function(
    input_signature=[tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.bool)],
    reduce_retracing=True,
)
def block_words(block, by_paragraph):
    """The words of each line of a block and each line's document number.

    Args:
        block: a scalar string of whole lines.
        by_paragraph: whether documents are paragraphs (lines up to a blank line) rather
            than lines.

    Returns:
        ``(words, documents)``: ``[L, (words)]`` ragged strings (`plain_words`) and int32
        ``[L]``, the document of each line, counted from 0 in the block (a blank line belongs
        to the document before it).
    """
    lines, _, documents = block_lines(block, by_paragraph)
    return plain_words(lines), documents


class WordCounts:
    """What the counting pass found: each word's count and the corpus' size.

    Args:
        counts: a dict of word (str) to count.
        documents: the documents read.
        words: the words read.
        longest: the most words of one document (in one block).
        pruned: the count at and below which pruning dropped words (0: none was).
        encoded: the `EncodedCorpus` the pass wrote, or ``None``.
    """

    def __init__(self, counts, documents, words, longest, pruned, encoded=None):
        self.counts, self.documents, self.words = counts, documents, words
        self.longest, self.pruned, self.encoded = longest, pruned, encoded


@tf.function(
    input_signature=[tf.TensorSpec([], tf.string), tf.TensorSpec([], tf.bool)],
    reduce_retracing=True,
)
def _block_counts(block, by_paragraph):
    """A block's distinct words with their counts, each word's index among them, each
    word's document start flag, its documents and its longest document's words."""
    lines, starts, documents = block_lines(block, by_paragraph)
    words = plain_words(lines)
    unique, index, counts = tf.unique_with_counts(words.flat_values)
    per_document = tf.math.unsorted_segment_sum(
        tf.cast(words.row_lengths(), tf.int32), documents, tf.reduce_max(documents) + 1
    )
    # a word that opens a document: the first word of a line that starts one (a document of
    # no words still counts among the documents; it opens nothing)
    opening = starts & (words.row_lengths() > 0)
    first = tf.scatter_nd(
        tf.boolean_mask(words.row_starts(), opening)[:, None],
        tf.ones_like(tf.boolean_mask(documents, opening)),
        tf.shape(index, out_type=tf.int64),
    )
    return (
        unique,
        counts,
        tf.cast(index, tf.int32),
        first,
        tf.reduce_sum(tf.cast(starts, tf.int32)),
        tf.reduce_max(per_document),
    )


def count_words(stream, max_words=MAX_COUNTED_WORDS, encode_to=None):
    """One pass over ``stream`` counting its words, in bounded memory; with ``encode_to``,
    the corpus is also written there as word numbers (`EncodedCorpus`), so that training
    reads it again without tokenizing it again.

    When more than ``max_words`` distinct words are held, the words seen at most ``n`` times
    are dropped, ``n`` growing by one at each prune: gensim's ``max_vocab_size`` rule (a word
    dropped early may come back with a lower count).

    Args:
        stream: a `TextStream`.
        max_words: the most distinct words held.
        encode_to: a file name for the `EncodedCorpus` (4 bytes per word and per document),
            or ``None``.

    Returns:
        A `WordCounts`.

    Raises:
        ValueError: a file is not UTF-8 or holds a NUL byte (file and line named).
    """
    errors = []
    blocks = stream.dataset(errors)
    counted = blocks.map(_block_counts, num_parallel_calls=tf.data.AUTOTUNE).prefetch(2)
    counts, numbers, documents, words, longest, pruned = {}, {}, 0, 0, 0, 0
    next_number = 0
    out = open(encode_to, "wb") if encode_to else None
    try:
        for (
            unique,
            block_counts,
            index,
            first,
            block_documents,
            block_longest,
        ) in counted.as_numpy_iterator():
            unique = unique.tolist()
            for word, count in zip(unique, block_counts.tolist()):
                counts[word] = counts.get(word, 0) + count
            if out is not None:
                for word in unique:
                    if word not in numbers:
                        numbers[word], next_number = next_number, next_number + 1
                mine = np.array([numbers[w] for w in unique], dtype="int32")
                _write_encoded(out, mine[index], first)
            words += len(index)
            documents += int(block_documents)
            longest = max(longest, int(block_longest))
            if len(counts) > max_words:
                pruned += 1
                for word in [w for w, c in counts.items() if c <= pruned]:
                    del counts[word]
                    numbers.pop(word, None)  # its words so far are dropped when read
    finally:
        if out is not None:
            out.close()
    if errors:
        raise errors[0]
    decoded = {w.decode("utf-8"): c for w, c in counts.items()}
    encoded = None
    if out is not None:
        encoded = EncodedCorpus(
            encode_to, {w.decode("utf-8"): n for w, n in numbers.items()}, next_number
        )
    return WordCounts(decoded, documents, words, longest, pruned, encoded)


# In an encoded corpus, -1 opens a document; other values are word numbers.
_DOCUMENT = -1


def _write_encoded(out, ids, first):
    """Writes one block's word numbers ``ids`` with `_DOCUMENT` before each word that opens
    a document (``first``) and at the block's start (windows stop at a block's end)."""
    marked = np.insert(ids, np.flatnonzero(first), _DOCUMENT) if first.any() else ids
    np.concatenate([[_DOCUMENT], marked]).astype("<i4").tofile(out)


class EncodedCorpus:
    """A corpus as the counting pass numbered its words, on disk (`count_words`): read again
    each epoch without tokenizing, in runs of `chunk_tokens` words.

    Args:
        path: the file (int32: a word number each, -1 opening a document).
        numbers: a dict of word to its number in the file (a word pruned from the counts is
            missing: it is dropped when read).
        size: the numbers given (one more than the largest).
    """

    chunk_tokens = 1 << 15

    def __init__(self, path, numbers, size):
        self.path, self.numbers, self.size = path, numbers, size

    def _runs(self):
        if os.path.getsize(self.path) // 4 < self.chunk_tokens:
            # A small corpus comes as one run of copies of itself (each opens with a document
            # mark): a pass of a few words would otherwise be one tf.data element, and a batch
            # could take thousands of them.
            run = np.fromfile(self.path, dtype="<i4")
            yield np.tile(run, max(1, self.chunk_tokens // max(len(run), 1)))
            return
        with open(self.path, "rb") as f:
            while True:
                run = np.fromfile(f, dtype="<i4", count=self.chunk_tokens)
                if not len(run):
                    return
                yield run

    def chunks(self, vocabulary, first_id):
        """``(ids, documents)`` runs of the corpus' words in ``vocabulary`` (a list of
        words; word ``i`` gets id ``first_id + i``): a ``tf.data.Dataset`` of int32 ``[N]``
        pairs, other words dropped."""
        size = self.size + 1
        remap = np.full(size, -1, dtype="int32")  # slot 0 is the document mark
        for i, word in enumerate(vocabulary):
            number = self.numbers.get(word)
            if number is not None:
                remap[number + 1] = first_id + i
        remap = tf.constant(remap)
        runs = tf.data.Dataset.from_generator(
            self._runs, output_signature=tf.TensorSpec([None], tf.int32)
        )

        def decode(run):
            documents = tf.cumsum(tf.cast(run == _DOCUMENT, tf.int32))
            ids = tf.gather(remap, tf.clip_by_value(run + 1, 0, size - 1))
            known = ids >= 0
            return ids[known], documents[known]

        return runs.map(decode, num_parallel_calls=tf.data.AUTOTUNE)

    def remove(self):
        """Deletes the file."""
        if os.path.exists(self.path):
            os.remove(self.path)


def vocabulary_table(words, first_id):
    """A ``tf.lookup.StaticHashTable`` of ``words`` to ``first_id, first_id + 1, …``; -1 for
    any other word."""
    keys = tf.constant(list(words), tf.string)
    values = tf.range(first_id, first_id + len(words), dtype=tf.int32)
    initializer = tf.lookup.KeyValueTensorInitializer(keys, values)
    return tf.lookup.StaticHashTable(initializer, default_value=-1)

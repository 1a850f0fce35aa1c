"""Documents for hierarchical attention: the user's own corpora, fortunes, and a needle task.

Loaders of labelled documents, each returning ``(documents, labels, class_names)`` with
``labels`` an int64 array of indices into ``class_names``:

- `load_document_tree`: a ``root/<label>/<document>.txt`` directory tree;
- `load_document_tsv`: a ``label<TAB>text`` file, one document per line;
- `load_documents`: either of the two, chosen by what the path is;
- `load_fortunes`: topics of the ``fortune`` cookie files (Debian's ``fortunes`` package,
  ``make data``; `find_fortunes` locates them, `read_fortune_file` reads one file).

A synthetic task whose label can only be read at the sentence level, `needle_documents`:
one *key* sentence holds the marker word `NEEDLE_WORD` next to the class word of the label,
and every other sentence holds the class word of a random class. A sentence-attention model
solves it by attending to the key sentence, and `sentence_attention_hit_rate` measures how
often it does.

Everything here is pure Python and numpy.

References:
    Yang, Yang, Dyer, He, Smola, Hovy (2016). Hierarchical Attention Networks for Document
    Classification. NAACL-HLT 2016.
"""

import os

import numpy as np

from keras_adl.utils import check_seed

# Where the strfile-format fortune files live on various systems (Debian, Fedora, others).
FORTUNE_DIRECTORIES = (
    "/usr/share/games/fortunes",
    "/usr/share/fortune",
    "/usr/share/fortunes",
    "/usr/local/share/games/fortunes",
)

# Topic files of Debian's `fortunes` package used as classes by `load_fortunes`.
FORTUNE_TOPICS = (
    "computers",
    "education",
    "food",
    "law",
    "love",
    "medicine",
    "politics",
    "science",
    "sports",
)

NEEDLE_WORD = "needle"

# Class words of `needle_documents`: class ``c`` is ``CLASS_WORDS[c]``.
CLASS_WORDS = (
    "apple",
    "river",
    "candle",
    "forest",
    "garden",
    "hammer",
    "island",
    "ladder",
    "mirror",
    "pencil",
    "rocket",
    "violin",
)


def _filler_words():
    """280 distinct two-syllable consonant-vowel pseudo-words, independent of any seed."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]  # 70 syllables
    words = []
    for a, first in enumerate(syllables):
        for j in range(4):  # 17·j mod 70 is distinct for j < 4: no duplicates
            words.append(first + syllables[(a + 17 * j + 5) % len(syllables)])
    return tuple(w for w in words if w not in CLASS_WORDS and w != NEEDLE_WORD)


# Filler words of `needle_documents`: lowercase pronounceable pseudo-words ("bafa", "kimo", ...).
FILLER_WORDS = _filler_words()

_TXT = ".txt"


# --------------------------------------------------------------------------------- checks


def _check_int(where, name, value, low, high=None):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low or (
        high is not None and value > high
    ):
        bounds = f"in {low}..{high}" if high is not None else f">= {low}"
        raise ValueError(f"{where}`{name}` must be an integer {bounds}; received {value!r}.")
    return int(value)


def _check_range(where, name, value, minimum=1):
    """``value`` as ``(low, high)`` integers with ``minimum <= low <= high``."""
    ok = isinstance(value, (tuple, list)) and len(value) == 2 and all(
        not isinstance(v, bool) and isinstance(v, (int, np.integer)) for v in value
    )
    if not ok:
        raise ValueError(
            f"{where}`{name}` must be a pair (low, high) of integers; received {value!r}."
        )
    low, high = int(value[0]), int(value[1])
    if not minimum <= low <= high:
        raise ValueError(
            f"{where}`{name}` must satisfy {minimum} <= low <= high; received {value!r}."
        )
    return low, high


def _check_path(where, name, path):
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{where}`{name}` must be a path (str or os.PathLike); received "
                        f"{type(path).__name__}.")
    return os.fspath(path)


def _decode(path, data, where=""):
    """UTF-8 text of ``data`` read from ``path`` with universal newlines."""
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark is not text
    except UnicodeDecodeError as error:
        raise ValueError(
            f"{where}{path}: not valid UTF-8 ({error.reason} at byte {error.start})"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _labelled(where, what, documents, names):
    """``(documents, labels, class_names)`` from documents and their string labels."""
    if not documents:
        raise ValueError(f"{where}no documents found in {what}.")
    class_names = sorted(set(names))
    if len(class_names) < 2:
        raise ValueError(
            f"{where}a classifier needs at least 2 classes; {what} holds {len(class_names)} "
            f"({class_names})."
        )
    index = {name: i for i, name in enumerate(class_names)}
    labels = np.array([index[name] for name in names], dtype="int64")
    return documents, labels, class_names


# -------------------------------------------------------------------------- user's corpora


def load_document_tree(root):
    """Reads labelled documents from a ``root/<label>/<document>.txt`` directory tree.

    Every subdirectory of ``root`` is a class named after it; its ``*.txt`` files (direct
    children only, the suffix compared case-insensitively) are its documents, read as UTF-8
    with universal newlines and stripped of surrounding whitespace. Classes are sorted by name
    and files by name within a class, so the result does not depend on the file system.
    Whitespace-only files are skipped, and so are hidden entries (names starting with ``.``)
    and other files; a subdirectory left without any document is not a class.

    Args:
        root: path of the directory tree.

    Returns:
        ``(documents, labels, class_names)``: a list of strings, int64 ``[N]`` indices into
        ``class_names``, and the sorted list of class names.

    Raises:
        FileNotFoundError: ``root`` is not a directory.
        ValueError: a file is not valid UTF-8 (the message names the file), the tree holds no
            documents, or fewer than 2 classes.

    Example:

    >>> import os, tempfile
    >>> root = tempfile.mkdtemp()
    >>> for label, name, text in [("spam", "1.txt", "Win money now"), ("ham", "a.txt", "Hi Bob"),
    ...                           ("ham", "b.txt", "Lunch?"), ("ham", "c.txt", "  \\n")]:
    ...     os.makedirs(os.path.join(root, label), exist_ok=True)
    ...     with open(os.path.join(root, label, name), "w") as f:
    ...         _ = f.write(text)
    >>> documents, labels, class_names = load_document_tree(root)
    >>> documents, labels.tolist(), class_names
    (['Hi Bob', 'Lunch?', 'Win money now'], [0, 0, 1], ['ham', 'spam'])
    """
    where = "load_document_tree: "
    root = _check_path(where, "root", root)
    if not os.path.isdir(root):
        raise FileNotFoundError(f"{where}`root` {root!r} is not a directory.")
    documents, names = [], []
    for label in sorted(os.listdir(root)):
        directory = os.path.join(root, label)
        if label.startswith(".") or not os.path.isdir(directory):
            continue
        for name in sorted(os.listdir(directory)):
            path = os.path.join(directory, name)
            if name.startswith(".") or not name.lower().endswith(_TXT):
                continue
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                text = _decode(path, f.read(), where).strip()
            if text:
                documents.append(text)
                names.append(label)
    return _labelled(where, f"directory {root!r}", documents, names)


def load_document_tsv(path):
    """Reads labelled documents from a tab-separated ``label<TAB>text`` file.

    Each non-blank line is one document: a label, exactly one tab, and the text (anything but
    a tab). Since a line cannot hold a line break, the two characters ``\\n`` (a backslash and
    ``n``) in the text stand for one; they are turned into a newline (there is no escape for a
    literal backslash-n). Label and text are stripped of surrounding whitespace and must not be
    empty. Classes are the sorted distinct labels.

    Args:
        path: a UTF-8 text file.

    Returns:
        ``(documents, labels, class_names)``: a list of strings, int64 ``[N]`` indices into
        ``class_names``, and the sorted list of distinct labels.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: a line is not valid UTF-8, does not have exactly one tab, or has an empty
            label or text (the message names ``path:line``); the file holds no documents, or
            fewer than 2 classes.

    Example:

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
    ...     _ = f.write("sport\\tGoal!\\\\nWhat a match.\\n\\npolitics\\tVote today\\n")
    >>> documents, labels, class_names = load_document_tsv(f.name)
    >>> documents, labels.tolist(), class_names
    (['Goal!\\nWhat a match.', 'Vote today'], [1, 0], ['politics', 'sport'])
    """
    where = "load_document_tsv: "
    path = _check_path(where, "path", path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{where}document file {path!r} not found.")
    documents, names = [], []
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{where}{path}:{number}: not valid UTF-8 ({error.reason})"
                ) from None
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise ValueError(
                    f"{where}{path}:{number}: expected 'label<TAB>text', found "
                    f"{len(parts) - 1} tab(s)."
                )
            label = parts[0].strip()
            text = parts[1].replace("\\n", "\n").strip()
            if not label or not text:
                side = "label" if not label else "text"
                raise ValueError(f"{where}{path}:{number}: the {side} is empty.")
            documents.append(text)
            names.append(label)
    return _labelled(where, f"file {path!r}", documents, names)


def load_documents(path):
    """Reads labelled documents from a directory tree or a tab-separated file.

    Args:
        path: a directory (read by `load_document_tree`) or a file (read by
            `load_document_tsv`).

    Returns:
        ``(documents, labels, class_names)`` as returned by the loader.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: as raised by the loader.

    Example:

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
    ...     _ = f.write("b\\tsecond\\na\\tfirst\\n")
    >>> documents, labels, class_names = load_documents(f.name)
    >>> labels.tolist(), class_names
    ([1, 0], ['a', 'b'])
    """
    path = _check_path("load_documents: ", "path", path)
    if os.path.isdir(path):
        return load_document_tree(path)
    if os.path.isfile(path):
        return load_document_tsv(path)
    raise FileNotFoundError(
        f"load_documents: `path` {path!r} not found (expected a directory of "
        f"<label>/<document>.txt files or a label<TAB>text file)."
    )


# ------------------------------------------------------------------------------- fortunes


def find_fortunes(directories=FORTUNE_DIRECTORIES):
    """The first existing directory of fortune files, or ``None``.

    Args:
        directories: candidate directories, tried in order.

    Returns:
        A directory path, or ``None`` when none exists.

    Raises:
        TypeError: ``directories`` is a single path instead of a sequence of paths.

    Example:

    >>> find_fortunes(["/no/such/directory"]) is None
    True
    >>> directory = find_fortunes()
    >>> directory is None or directory in FORTUNE_DIRECTORIES
    True
    """
    if isinstance(directories, (str, bytes, os.PathLike)):
        raise TypeError(
            f"find_fortunes: `directories` must be a sequence of paths, not a single path; "
            f"received {directories!r}."
        )
    for directory in directories:
        if os.path.isdir(directory):
            return directory
    return None


def _remove_overstrike(line):
    """``line`` as a terminal would show it: ``x\\bx`` (bold) and ``_\\bx`` (underline) are
    ``x``; a backspace moves back one character and the next one overstrikes it, an underscore
    never hiding a character."""
    chars, cursor = [], 0
    for char in line:
        if char == "\b":
            cursor = max(0, cursor - 1)
        elif cursor < len(chars):
            if char != "_" or chars[cursor] == " ":
                chars[cursor] = char
            cursor += 1
        else:
            chars.append(char)
            cursor += 1
    return "".join(chars)


def read_fortune_file(path):
    """Entries of a strfile-format fortune file.

    Entries are separated by lines holding exactly ``%``. The file is read as UTF-8 (invalid
    bytes become U+FFFD), backspace overstriking (``x\\bx`` bold, ``_\\bx`` underline) is
    removed, and each entry is stripped of surrounding whitespace; empty entries are dropped.

    Args:
        path: the text file (e.g. ``/usr/share/games/fortunes/law.u8``, not the ``.dat`` index).

    Returns:
        A list of strings.

    Raises:
        FileNotFoundError: the file does not exist.

    Example:

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", delete=False) as f:
    ...     _ = f.write("A _\\bbold move.\\n%\\n%\\n  Two\\nlines.\\n%\\n")
    >>> read_fortune_file(f.name)
    ['A bold move.', 'Two\\nlines.']
    """
    path = _check_path("read_fortune_file: ", "path", path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"read_fortune_file: fortune file {path!r} not found.")
    with open(path, "rb") as f:
        text = f.read().decode("utf-8", errors="replace")
    entries, lines = [], []
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "%":
            entries.append("\n".join(lines).strip())
            lines = []
        else:
            lines.append(_remove_overstrike(line) if "\b" in line else line)
    entries.append("\n".join(lines).strip())
    return [entry for entry in entries if entry]


def load_fortunes(directory=None, topics=FORTUNE_TOPICS, max_per_topic=None, seed=0):
    """Fortune cookies labelled by topic: a small real document-classification corpus.

    Topic ``t`` is read from ``<directory>/<t>.u8`` (Debian's UTF-8 version) when it exists,
    else from ``<directory>/<t>``, with `read_fortune_file`. Entries keep their file order.

    Args:
        directory: the fortune directory; ``None`` uses `find_fortunes`.
        topics: the topic file names, the classes in this order.
        max_per_topic: keep at most this many entries per topic, a random subset (in file
            order) drawn with ``seed``; ``None`` keeps all.
        seed: non-negative integer seed of the subsets.

    Returns:
        ``(documents, labels, topics)``: a list of strings, int64 ``[N]`` indices into
        ``topics``, and the list of topics.

    Raises:
        FileNotFoundError: no fortune directory is found, or a topic file is missing.
        ValueError: ``topics`` is empty, repeats a topic or holds fewer than 2; a topic file
            holds no entries; ``max_per_topic`` or ``seed`` is invalid.
        TypeError: ``topics`` is a single string or holds a non-string.

    Example:

    >>> import os, tempfile
    >>> directory = tempfile.mkdtemp()
    >>> for topic, text in [("cats", "Meow.\\n%\\nPurr.\\n%\\nHiss.\\n"), ("dogs", "Woof.\\n")]:
    ...     with open(os.path.join(directory, topic), "w") as f:
    ...         _ = f.write(text)
    >>> documents, labels, topics = load_fortunes(directory, ("cats", "dogs"))
    >>> documents, labels.tolist(), topics
    (['Meow.', 'Purr.', 'Hiss.', 'Woof.'], [0, 0, 0, 1], ['cats', 'dogs'])
    >>> load_fortunes(directory, ("cats", "dogs"), max_per_topic=2)[1].tolist()
    [0, 0, 1]
    """
    where = "load_fortunes: "
    if isinstance(topics, (str, bytes)):
        raise TypeError(f"{where}`topics` must be a sequence of topic names, not a single "
                        f"string; received {topics!r}.")
    topics = list(topics)
    for topic in topics:
        if not isinstance(topic, str):
            raise TypeError(f"{where}`topics` must hold strings; received {topic!r}.")
        if not topic or "/" in topic or topic.startswith("."):
            raise ValueError(f"{where}`topics` must hold plain file names; received {topic!r}.")
    if len(topics) < 2 or len(set(topics)) != len(topics):
        raise ValueError(
            f"{where}`topics` must hold at least 2 distinct topics (the classes); received "
            f"{topics!r}."
        )
    if max_per_topic is not None:
        _check_int(where, "max_per_topic", max_per_topic, 1)
    rng = np.random.default_rng(check_seed(where, seed))
    if directory is None:
        directory = find_fortunes()
        if directory is None:
            raise FileNotFoundError(
                f"{where}no fortune directory found (looked in {', '.join(FORTUNE_DIRECTORIES)}); "
                f"install Debian's `fortunes` package (`make data`) or pass directory=."
            )
    directory = _check_path(where, "directory", directory)
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"{where}`directory` {directory!r} is not a directory; install Debian's `fortunes` "
            f"package (`make data`) or pass directory=."
        )
    documents, labels = [], []
    for label, topic in enumerate(topics):
        path = os.path.join(directory, topic + ".u8")
        if not os.path.isfile(path):
            path = os.path.join(directory, topic)
        if not os.path.isfile(path):
            raise FileNotFoundError(
                f"{where}topic {topic!r}: neither {path + '.u8'!r} nor {path!r} exists."
            )
        entries = read_fortune_file(path)
        if not entries:
            raise ValueError(f"{where}topic {topic!r}: {path} holds no fortunes.")
        if max_per_topic is not None and len(entries) > max_per_topic:
            keep = np.sort(rng.choice(len(entries), size=max_per_topic, replace=False))
            entries = [entries[i] for i in keep]
        documents.extend(entries)
        labels.extend([label] * len(entries))
    return documents, np.array(labels, dtype="int64"), topics


# ---------------------------------------------------------------------------- needle task


def needle_documents(num_documents, num_classes=4, num_sentences=(4, 10),
                     sentence_length=(4, 10), seed=0):
    """Synthetic documents whose label is the word sharing a sentence with a marker.

    A document has ``n ~ U{num_sentences}`` sentences of ``L ~ U{sentence_length}`` words
    each. One sentence, at a uniform index ``k``, is the *key*: it holds `NEEDLE_WORD` and the
    class word ``CLASS_WORDS[label]`` at two random positions. Every other sentence holds
    exactly one class word of a uniformly random class (a distractor) and never the marker. The
    remaining words are uniform draws from `FILLER_WORDS`. Labels are uniform over classes.

    Class-word counts alone are a weak cue (the label's word has only one extra occurrence on
    average, and ties are frequent), so a bag of words does poorly; a model must find the
    sentence with the marker and read the class word in it, which is what sentence-level
    attention is for (`sentence_attention_hit_rate`).

    Words are lowercase and separated by single spaces; each sentence ends with ``.`` and the
    sentences are joined by a single space, so ``document[:-1].split(". ")`` gives the
    sentences (without their full stops) and the key is at index ``k``.

    Args:
        num_documents: number of documents, a positive integer.
        num_classes: number of classes, in ``2..len(CLASS_WORDS)``.
        num_sentences: ``(low, high)`` sentences per document, ``1 <= low <= high``.
        sentence_length: ``(low, high)`` words per sentence, ``2 <= low <= high`` (the key
            sentence holds two special words).
        seed: non-negative integer seed; the documents are a function of all the arguments.

    Returns:
        ``(documents, labels, key_sentences)``: a list of strings, int64 ``[N]`` labels and
        int64 ``[N]`` indices of the key sentences.

    Raises:
        ValueError: an argument is out of range.

    Example:

    >>> documents, labels, keys = needle_documents(2, num_sentences=(2, 3),
    ...                                            sentence_length=(3, 4), seed=0)
    >>> sentences = documents[0][:-1].split(". ")
    >>> NEEDLE_WORD in sentences[keys[0]].split()
    True
    >>> CLASS_WORDS[labels[0]] in sentences[keys[0]].split()
    True
    >>> labels.dtype, keys.dtype
    (dtype('int64'), dtype('int64'))
    """
    where = "needle_documents: "
    num_documents = _check_int(where, "num_documents", num_documents, 1)
    num_classes = _check_int(where, "num_classes", num_classes, 2, len(CLASS_WORDS))
    s_low, s_high = _check_range(where, "num_sentences", num_sentences, 1)
    w_low, w_high = _check_range(where, "sentence_length", sentence_length, 2)
    rng = np.random.default_rng(check_seed(where, seed))
    filler = np.array(FILLER_WORDS)
    labels = rng.integers(0, num_classes, size=num_documents)
    counts = rng.integers(s_low, s_high + 1, size=num_documents)
    keys = rng.integers(0, counts)
    documents = []
    for label, count, key in zip(labels, counts, keys):
        lengths = rng.integers(w_low, w_high + 1, size=count)
        words = filler[rng.integers(0, len(filler), size=lengths.sum())].tolist()
        distractors = rng.integers(0, num_classes, size=count)
        positions = (rng.random(count) * lengths).astype("int64")
        key_positions = rng.choice(lengths[key], size=2, replace=False)
        sentences, start = [], 0
        for i, length in enumerate(lengths):
            sentence = words[start:start + length]
            start += length
            if i == key:
                sentence[key_positions[0]] = NEEDLE_WORD
                sentence[key_positions[1]] = CLASS_WORDS[label]
            else:
                sentence[positions[i]] = CLASS_WORDS[distractors[i]]
            sentences.append(" ".join(sentence) + ".")
        documents.append(" ".join(sentences))
    return documents, labels.astype("int64"), keys.astype("int64")


def sentence_attention_hit_rate(sentence_attention, key_sentences):
    """Fraction of documents whose most-attended sentence is the key sentence.

    Args:
        sentence_attention: ``[N, S]`` sentence-attention weights (padding sentences should
            carry no weight).
        key_sentences: int ``[N]`` key-sentence indices in ``[0, S)``, e.g. from
            `needle_documents`.

    Returns:
        The hit rate, a float in ``[0, 1]``.

    Raises:
        ValueError: the shapes do not match, there are no documents, or a key index is out
            of range.
        TypeError: ``key_sentences`` is not integer.

    Example:

    >>> attention = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.0, 0.1, 0.9]])
    >>> round(sentence_attention_hit_rate(attention, np.array([1, 2, 2])), 3)
    0.667
    """
    where = "sentence_attention_hit_rate: "
    attention, keys = np.asarray(sentence_attention), np.asarray(key_sentences)
    if attention.ndim != 2 or attention.shape[0] == 0 or attention.shape[1] == 0:
        raise ValueError(
            f"{where}`sentence_attention` must have shape [N, S] with N, S > 0; received shape "
            f"{attention.shape}."
        )
    if keys.shape != (attention.shape[0],):
        raise ValueError(
            f"{where}`key_sentences` must have shape [N] with N = {attention.shape[0]} (the "
            f"rows of `sentence_attention`, shape {attention.shape}); received shape "
            f"{keys.shape}."
        )
    if not np.issubdtype(keys.dtype, np.integer):
        raise TypeError(f"{where}`key_sentences` must be integers; received dtype {keys.dtype}.")
    if keys.min() < 0 or keys.max() >= attention.shape[1]:
        raise ValueError(
            f"{where}`key_sentences` must lie in [0, {attention.shape[1]}) (the sentences of "
            f"`sentence_attention`); received values in [{keys.min()}, {keys.max()}]."
        )
    return float(np.mean(np.argmax(attention, axis=1) == keys))

"""Fortune cookies labelled by topic: a small real document-classification corpus.

The ``fortune`` cookie files (Debian's ``fortunes`` package, ``make data``): `find_fortunes`
locates them, `read_fortune_file` reads one strfile-format file, and `load_fortunes` returns
``(documents, labels, topics)`` with one class per topic file; `read_other_fortunes` reads
the other files, unlabelled.

Everything here is pure Python and numpy.
"""

import os

import numpy as np

from keras_adl.data._checks import check_int, check_path, check_seed

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


def _fortune_directory(directory, *, where=""):
    """``directory`` checked, or the installed one (`find_fortunes`)."""
    if directory is None:
        directory = find_fortunes()
        if directory is None:
            raise FileNotFoundError(
                f"{where}no fortune directory found (looked in {', '.join(FORTUNE_DIRECTORIES)}); "
                f"install Debian's `fortunes` package (`make data`) or pass directory=."
            )
    directory = check_path("directory", directory, where=where)
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"{where}`directory` {directory!r} is not a directory; install Debian's `fortunes` "
            f"package (`make data`) or pass directory=."
        )
    return directory


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
    path = check_path("path", path, where="read_fortune_file: ")
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
        raise TypeError(
            f"{where}`topics` must be a sequence of topic names, not a single "
            f"string; received {topics!r}."
        )
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
        check_int("max_per_topic", max_per_topic, 1, where=where)
    rng = np.random.default_rng(check_seed(seed, where=where))
    directory = _fortune_directory(directory, where=where)
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


def read_other_fortunes(directory=None, topics=FORTUNE_TOPICS, exclude=()):
    """The fortunes of every file in ``directory`` except the ``topics`` files: unlabelled
    text of the same kind, e.g. to pretrain on before classifying the topics.

    A fortune file is one with its strfile index (``name.dat``) beside it; ``name.u8`` is
    read when it exists (Debian's UTF-8 copy), else ``name``.

    Args:
        directory: a fortunes directory; ``None`` → `find_fortunes`.
        topics: the file names to leave out (the classes of `load_fortunes`).
        exclude: texts to drop (e.g. the held-out fortunes of a classification split),
            compared with white space collapsed.

    Returns:
        A list of strings, file by file in name order.

    Raises:
        FileNotFoundError: no fortune directory, or ``directory`` is not one.

    Example:

    >>> import pathlib, tempfile
    >>> directory = pathlib.Path(tempfile.mkdtemp())
    >>> for name, text in [("cats", "Meow.\\n%\\nPurr.\\n"), ("misc", "Hi.\\n%\\nPurr.\\n")]:
    ...     _ = (directory / name).write_text(text)
    ...     _ = (directory / (name + ".dat")).write_bytes(b"")
    >>> read_other_fortunes(str(directory), topics=("cats",), exclude=["Purr."])
    ['Hi.']
    """
    where = "read_other_fortunes: "
    directory = _fortune_directory(directory, where=where)
    if isinstance(topics, (str, bytes)):
        raise TypeError(f"{where}`topics` must be a sequence of names; received {topics!r}.")
    skipped = set(topics)
    dropped = {" ".join(t.split()) for t in exclude}
    texts = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".dat"):
            continue
        base = name[: -len(".dat")]
        if base in skipped:
            continue
        path = os.path.join(directory, base + ".u8")
        if not os.path.isfile(path):
            path = os.path.join(directory, base)
        if not os.path.isfile(path):
            continue
        texts += [t for t in read_fortune_file(path) if " ".join(t.split()) not in dropped]
    return texts

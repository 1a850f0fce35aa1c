"""The user's own labelled documents, from a directory tree or a tab-separated file.

Each loader returns ``(documents, labels, class_names)`` with ``labels`` an int64 array of
indices into ``class_names``:

- `load_document_tree`: a ``root/<label>/<document>.txt`` directory tree;
- `load_document_tsv`: a ``label<TAB>text`` file, one document per line;
- `load_documents`: either of the two, chosen by what the path is.

Files are read as UTF-8 (a byte-order mark is dropped) with universal newlines. Everything
here is pure Python and numpy.
"""

import os
from collections.abc import Iterator

import numpy as np

from keras_adl.data._checks import check_path
from keras_adl.data.text_corpora import decode_text

_TXT = ".txt"


def _decode(path, data, *, where=""):
    """UTF-8 text of ``data`` read from ``path`` with universal newlines (`decode_text`)."""
    try:
        return decode_text(path, data)
    except ValueError as error:
        raise ValueError(f"{where}{error}") from None


def _labelled(documents, names, what, *, where=""):
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
    root = check_path("root", root, where=where)
    if not os.path.isdir(root):
        raise FileNotFoundError(f"{where}`root` {root!r} is not a directory.")
    documents, names = [], []
    for text, label in _tree_documents(root, where):
        documents.append(text)
        names.append(label)
    return _labelled(documents, names, f"directory {root!r}", where=where)


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
        ValueError: a line is not valid UTF-8, holds a NUL byte, does not have exactly one
            tab, or has an empty label or text (the message names ``path:line``); the file
            holds no documents, or fewer than 2 classes.

    Example:

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
    ...     _ = f.write("sport\\tGoal!\\\\nWhat a match.\\n\\npolitics\\tVote today\\n")
    >>> documents, labels, class_names = load_document_tsv(f.name)
    >>> documents, labels.tolist(), class_names
    (['Goal!\\nWhat a match.', 'Vote today'], [1, 0], ['politics', 'sport'])
    """
    where = "load_document_tsv: "
    path = check_path("path", path, where=where)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{where}document file {path!r} not found.")
    documents, names = [], []
    for text, label in _tsv_documents(path, where):
        documents.append(text)
        names.append(label)
    return _labelled(documents, names, f"file {path!r}", where=where)


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
    path = check_path("path", path, where="load_documents: ")
    if os.path.isdir(path):
        return load_document_tree(path)
    if os.path.isfile(path):
        return load_document_tsv(path)
    raise FileNotFoundError(
        f"load_documents: `path` {path!r} not found (expected a directory of "
        f"<label>/<document>.txt files or a label<TAB>text file)."
    )


def _tree_documents(root, where) -> Iterator[tuple[str, str]]:
    """``(text, label)`` of each document of a `load_document_tree` tree, read one at a time
    (the file names of a class are listed, its texts are not held)."""
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
                text = _decode(path, f.read(), where=where).strip()
            if text:
                yield text, label


def _tsv_documents(path, where) -> Iterator[tuple[str, str]]:
    """``(text, label)`` of each line of a `load_document_tsv` file, read one at a time."""
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise ValueError(
                    f"{where}{path}:{number}: not valid UTF-8 ({error.reason})"
                ) from None
            if "\x00" in line:
                raise ValueError(f"{where}{path}:{number}: a NUL byte; expected a text file.")
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
            yield text, label


def iter_documents(path) -> Iterator[tuple[str, str]]:
    """The labelled documents of a directory tree or a tab-separated file, one at a time: what
    `load_documents` reads, in the same order and with the same checks, without holding them.

    Args:
        path: a directory (a `load_document_tree` tree) or a file (a `load_document_tsv`
            file).

    Yields:
        ``(text, label)``: a document and its class name.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        ValueError: as the loaders raise it for a bad file or line.

    Example:

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
    ...     _ = f.write("b\\tsecond\\na\\tfirst\\n")
    >>> list(iter_documents(f.name))
    [('second', 'b'), ('first', 'a')]
    """
    where = "load_documents: "
    path = check_path("path", path, where=where)
    if os.path.isdir(path):
        yield from _tree_documents(path, "load_document_tree: ")
    elif os.path.isfile(path):
        yield from _tsv_documents(path, "load_document_tsv: ")
    else:
        raise FileNotFoundError(
            f"load_documents: `path` {path!r} not found (expected a directory of "
            f"<label>/<document>.txt files or a label<TAB>text file)."
        )

"""Awkward inputs of every shape a user brings (issue 47, item 9), written to files.

Each case is ``(name, bytes)``; `text_cases` are free text (the word2vec, pretraining and
contextual ``--data``), `pair_cases` ``source<TAB>target`` lines and `document_cases`
``label<TAB>text`` lines. `write_cases` writes them under a directory.
"""

import os

BOM = b"\xef\xbb\xbf"
MIXED = "Fichier\u00a0: «\u00a0ÉCOLE\u00a0» — Москва, 東京, القاهرة, Ελλάδα."


def _words(count, vocabulary, seed=0):
    import numpy as np

    rng = np.random.default_rng(seed)
    return " ".join(f"w{i}" for i in rng.integers(0, vocabulary, count))


def _lines(count, words=8, vocabulary=2000):
    return "".join(_words(words, vocabulary, seed=i) + ".\n" for i in range(count)).encode()


def text_cases():
    """Free-text corpora: ``[(name, bytes, expectation)]`` with ``"ok"`` or ``"error"``."""
    return [
        ("one line", b"A single line of text.\n", "ok"),
        ("two lines", b"First line.\nSecond line.\n", "ok"),
        ("ten lines", _lines(10), "ok"),
        ("a sentence over two lines", b"One sentence\nover two lines.\n", "ok"),
        ("paragraphs", b"First.\n\nSecond\nstill second.\n\n\nThird.\n", "ok"),
        ("small vocabulary", _lines(2000, 10, vocabulary=12), "ok"),
        ("large vocabulary", _lines(2000, 10, vocabulary=200_000), "ok"),
        ("a very long line", (_words(200_000, 5000) + "\n").encode(), "ok"),
        ("CRLF", b"First line.\r\nSecond line.\r\n\r\nThird.\r\n", "ok"),
        ("UTF-8 BOM", BOM + b"First line.\nSecond line.\n", "ok"),
        ("NUL bytes", b"First line.\nSec\x00ond.\n", "error"),
        ("invalid UTF-8", b"First line.\nSecond \xff line.\n", "error"),
        ("mixed scripts", (MIXED + "\n" + MIXED.upper() + "\n").encode(), "ok"),
        ("empty lines only", b"\n\n \n\t\n", "error"),
        ("empty file", b"", "error"),
        ("duplicate lines", b"The same line.\n" * 50, "ok"),
    ]


def pair_cases():
    """``source<TAB>target`` files: ``[(name, bytes, expectation)]``."""
    pair = "File not found.\tFichier introuvable.\n"
    return [
        ("one pair", pair.encode(), "ok"),
        ("two pairs", (pair + "Open\tOuvrir\n").encode(), "ok"),
        ("ten pairs", "".join(f"item {i}\télément {i}\n" for i in range(10)).encode(), "ok"),
        ("CRLF", pair.replace("\n", "\r\n").encode() * 3, "ok"),
        ("UTF-8 BOM", BOM + pair.encode() * 3, "ok"),
        ("NUL bytes", b"File\x00 not found.\tFichier introuvable.\n", "error"),
        ("invalid UTF-8", b"File not found.\tFichier \xff introuvable.\n", "error"),
        ("no tab", b"File not found. Fichier introuvable.\n", "error"),
        ("two tabs", b"a\tb\tc\n", "error"),
        ("empty target", b"File not found.\t\n", "error"),
        ("mixed scripts", f"{MIXED}\t{MIXED.upper()}\n".encode() * 3, "ok"),
        ("empty lines only", b"\n\n", "error"),
        ("duplicate pairs", pair.encode() * 50, "ok"),
        ("a very long line", f"{_words(5000, 100)}\t{_words(5000, 100)}\n".encode(), "ok"),
    ]


def document_cases():
    """``label<TAB>text`` files: ``[(name, bytes, expectation)]``."""
    docs = "sport\tThe match ended. The crowd left.\nnews\tThe paper said so. Then it ended.\n"
    return [
        ("two documents", docs.encode(), "ok"),
        ("one document", b"sport\tThe match ended.\n", "error"),  # one class: nothing to learn
        ("a class of one example", (docs + "news\tAnother one.\n" * 5).encode(), "ok"),
        ("CRLF", docs.replace("\n", "\r\n").encode(), "ok"),
        ("UTF-8 BOM", BOM + docs.encode(), "ok"),
        ("NUL bytes", b"sport\tThe match\x00 ended.\nnews\tSo.\n", "error"),
        ("invalid UTF-8", b"sport\tThe match \xff ended.\nnews\tSo.\n", "error"),
        ("no tab", b"sport The match ended.\nnews\tSo.\n", "error"),
        ("empty text", b"sport\t\nnews\tSo.\n", "error"),
        ("mixed scripts", f"a\t{MIXED}\nb\t{MIXED.upper()}\n".encode(), "ok"),
        ("a very long document", f"a\t{_words(20_000, 500)}.\nb\tShort.\n".encode(), "ok"),
        ("duplicate documents", docs.encode() * 20, "ok"),
    ]


def write_cases(directory, cases, suffix):
    """Writes each case to ``directory/<i>.<suffix>``; returns ``[(name, path, expected)]``."""
    written = []
    for index, (name, data, expected) in enumerate(cases):
        path = os.path.join(directory, f"{index:02d}{suffix}")
        with open(path, "wb") as f:
            f.write(data)
        written.append((name, path, expected))
    return written


def _idx(array, type_code=0x08):
    """An IDX file's bytes: the magic number, the dimensions, the big-endian values."""
    import numpy as np

    dtypes = {0x08: ">u1", 0x0D: ">f4"}
    header = bytes([0, 0, type_code, array.ndim]) + np.asarray(array.shape, ">u4").tobytes()
    return header + np.asarray(array, dtypes[type_code]).tobytes()


def idx_cases():
    """Directories of MNIST-style IDX files (the vision tasks' ``--data``): ``[(name, {file
    name: bytes}, expectation)]``; ``"labels"`` loads but is not ten digit classes."""
    import gzip

    import numpy as np

    rng = np.random.default_rng(0)

    def images(count, size=28, *extra):
        return rng.integers(0, 256, (count, size, size, *extra), dtype=np.uint8)

    def labels(count, high=10):
        return rng.integers(0, high, count, dtype=np.uint8)

    def files(train_x, train_y, test_x, test_y, gz=False):
        named = {
            "train-images-idx3-ubyte": train_x,
            "train-labels-idx1-ubyte": train_y,
            "t10k-images-idx3-ubyte": test_x,
            "t10k-labels-idx1-ubyte": test_y,
        }
        named = {k: v if isinstance(v, bytes) else _idx(v) for k, v in named.items()}
        return {k + ".gz": gzip.compress(v) for k, v in named.items()} if gz else named

    good = (images(40), labels(40), images(10), labels(10))
    return [
        ("MNIST-shaped", files(*good), "ok"),
        ("gzip-compressed", files(*good, gz=True), "ok"),
        ("20×20 images", files(images(40, 20), labels(40), images(10, 20), labels(10)), "ok"),
        ("labels given as images", files(labels(40), labels(40), *good[2:]), "error"),
        ("float32 images", files(_idx(images(40) / 255.0, 0x0D), *good[1:]), "error"),
        ("RGB images", files(images(40, 28, 3), *good[1:]), "error"),
        ("fewer labels than images", files(good[0], labels(39), *good[2:]), "error"),
        ("a PNG renamed", files(b"\x89PNG\r\n\x1a\n" + bytes(64), *good[1:]), "error"),
        ("truncated", files(_idx(good[0])[:-100], *good[1:]), "error"),
        ("broken gzip", files(b"\x1f\x8b" + bytes(40), *good[1:]), "error"),
        ("labels beyond 9", files(good[0], labels(40, 40), *good[2:]), "labels"),
    ]


def write_idx_case(directory, files):
    """Writes one `idx_cases` directory; returns its path."""
    os.makedirs(directory, exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(directory, name), "wb") as f:
            f.write(data)
    return directory

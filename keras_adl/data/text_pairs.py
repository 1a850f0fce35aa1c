"""Loader for the user's own parallel data: one ``source<TAB>target`` pair per line."""

import os
from collections.abc import Iterator

import numpy as np

__all__ = ["iter_text_pairs", "load_text_pairs", "split_pairs"]


def load_text_pairs(path):
    """Reads a tab-separated file of (source, target) pairs.

    Args:
        path: a UTF-8 text file; each non-blank line is ``source<TAB>target`` with both sides
            non-empty. Blank lines are skipped.

    Returns:
        Two lists of strings: sources and targets.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: a line is not valid UTF-8, holds a NUL byte, has no tab or more than one,
            or an empty side (the message names the file and line), or the file holds no
            pairs. A byte-order mark and CRLF line ends are read as text editors write them.

    Example:

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".tsv", delete=False) as f:
    ...     _ = f.write("hello world\\tbonjour le monde\\n\\nthanks\\tmerci\\n")
    >>> load_text_pairs(f.name)
    (['hello world', 'thanks'], ['bonjour le monde', 'merci'])
    """
    sources, targets = [], []
    for source, target in iter_text_pairs(path):
        sources.append(source)
        targets.append(target)
    if not sources:
        raise ValueError(f"{path}: no source<TAB>target pairs found")
    return sources, targets


def iter_text_pairs(path) -> Iterator[tuple[str, str]]:
    """The pairs of a `load_text_pairs` file one at a time, with its checks, without holding
    them (an empty file yields nothing).

    Args:
        path: a UTF-8 ``source<TAB>target`` file.

    Yields:
        ``(source, target)``.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: a bad line, as `load_text_pairs` names it.
    """
    if not os.path.isfile(path):
        raise FileNotFoundError(f"text-pair file {path!r} not found")
    with open(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid UTF-8 ({error.reason})") from None
            if "\x00" in line:
                raise ValueError(f"{path}:{number}: a NUL byte; expected a text file")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 2:
                raise ValueError(
                    f"{path}:{number}: expected 'source<TAB>target', found {len(parts) - 1} tab(s)"
                )
            source, target = (p.strip() for p in parts)
            if not source or not target:
                side = "source" if not source else "target"
                raise ValueError(f"{path}:{number}: the {side} side is empty")
            yield source, target


def split_pairs(sources, targets, fraction=0.05, seed=0):
    """A seeded split of parallel data into training and held-out pairs.

    Args:
        sources: a list of strings.
        targets: a list of strings of the same length.
        fraction: the share held out, in (0, 1); at least one pair is held out and at least
            one kept.
        seed: the split's seed (the same data and seed give the same split).

    Returns:
        ``((train_sources, train_targets), (held_sources, held_targets))``, each keeping the
        file's order.

    Example:

    >>> (train, _), (held, _) = split_pairs(list("abcdefghij"), list("ABCDEFGHIJ"), 0.2)
    >>> len(train), len(held), sorted(train + held) == list("abcdefghij")
    (8, 2, True)
    """
    if len(sources) != len(targets):
        raise ValueError(
            f"split_pairs: `sources` and `targets` must have one length; received "
            f"{len(sources)} and {len(targets)}."
        )
    if not 0 < fraction < 1:
        raise ValueError(f"split_pairs: `fraction` must be in (0, 1); received {fraction}.")
    if len(sources) < 2:
        raise ValueError(
            f"split_pairs: holding pairs out needs at least 2 pairs; received {len(sources)}."
        )
    count = min(max(1, round(fraction * len(sources))), len(sources) - 1)
    held = np.zeros(len(sources), bool)
    held[np.random.default_rng(seed).permutation(len(sources))[:count]] = True

    def pick(values, mask):
        return [v for v, m in zip(values, mask) if m]

    return (pick(sources, ~held), pick(targets, ~held)), (pick(sources, held), pick(targets, held))

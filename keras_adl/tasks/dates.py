"""Date normalisation: human-written dates in many formats → ISO ``YYYY-MM-DD``, char level.

The classic attention demo: the model must find the day, month and year wherever the source
format puts them. Generation is seeded and uses fixed English month/day names (no locale).
Numeric formats are unambiguous by their separator: ``DD.MM.YYYY`` (European) and
``MM/DD/YYYY`` (US).
"""

import datetime

import numpy as np

PAD, START, END, UNK = 0, 1, 2, 3
_SPECIALS = ["<pad>", "<s>", "</s>", "<unk>"]
SOURCE_CHARS = " ,./-0123456789abcdefghijklmnopqrstuvwxyz"
TARGET_CHARS = "-0123456789"

_MONTHS = [
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
]
_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]


def _formats(date):
    d, m, y = date.day, date.month, date.year
    month, day = _MONTHS[m - 1], _DAYS[date.weekday()]
    return [
        f"{d} {month} {y}",
        f"{d:02d} {month} {y}",
        f"{month} {d}, {y}",
        f"{month[:3]} {d} {y}",
        f"{d} {month[:3]} {y}",
        f"{day}, {d} {month} {y}",
        f"{day[:3]} {month[:3]} {d:02d} {y}",
        f"{d:02d}.{m:02d}.{y}",
        f"{d}.{m}.{y}",
        f"{m:02d}/{d:02d}/{y}",
        f"{m}/{d}/{y}",
        f"{y}-{m:02d}-{d:02d}",
        f"{month} {y}, day {d}",
    ]


def generate_dates(num, seed=0, start_year=1900, end_year=2099):
    """Seeded pairs of (human-written date, ISO date).

    Args:
        num: number of pairs.
        seed: random seed.
        start_year, end_year: inclusive range of years.

    Returns:
        Two lists of ``num`` strings: sources (lower-case, one of 13 formats) and ISO targets.

    Example:

    >>> sources, targets = generate_dates(2, seed=1)
    >>> all(len(t) == 10 and t[4] == "-" for t in targets)
    True
    """
    if num < 0:
        raise ValueError(f"`num` must be >= 0; received {num}.")
    rng = np.random.default_rng(seed)
    first = datetime.date(start_year, 1, 1).toordinal()
    last = datetime.date(end_year, 12, 31).toordinal()
    sources, targets = [], []
    for ordinal in rng.integers(first, last + 1, size=num):
        date = datetime.date.fromordinal(int(ordinal))
        choices = _formats(date)
        sources.append(choices[rng.integers(len(choices))])
        targets.append(date.isoformat())
    return sources, targets


class CharVocabulary:
    """A fixed character vocabulary with ``<pad>=0, <s>=1, </s>=2, <unk>=3``.

    Args:
        chars: the characters, in id order after the four specials.

    Example:

    >>> vocab = CharVocabulary("ab")
    >>> vocab.encode(["ab", "ba?"], max_length=5).tolist()
    [[4, 5, 0, 0, 0], [5, 4, 3, 0, 0]]
    >>> vocab.decode([[4, 5, 2, 4]])
    ['ab']
    """

    def __init__(self, chars):
        if len(set(chars)) != len(chars):
            raise ValueError(f"`chars` has repeated characters: {chars!r}.")
        self.chars = chars
        self.tokens = _SPECIALS + list(chars)
        self._ids = {c: i + len(_SPECIALS) for i, c in enumerate(chars)}

    def __len__(self):
        return len(self.tokens)

    def encode(self, strings, max_length, add_start=False, add_end=False):
        """Ids ``[N, max_length]`` (int32), padded with 0; raises if a string is too long."""
        out = np.zeros((len(strings), max_length), "int32")
        for row, text in enumerate(strings):
            ids = [self._ids.get(c, UNK) for c in text]
            ids = ([START] if add_start else []) + ids + ([END] if add_end else [])
            if len(ids) > max_length:
                raise ValueError(
                    f"`max_length`={max_length} is too short for {text!r} "
                    f"({len(ids)} ids with the markers)."
                )
            out[row, : len(ids)] = ids
        return out

    def decode(self, ids):
        """Strings from id rows, stopping at ``</s>`` or padding and skipping ``<s>``."""
        strings = []
        for row in np.asarray(ids):
            chars = []
            for i in row:
                if i in (END, PAD):
                    break
                if i >= len(_SPECIALS):
                    chars.append(self.tokens[i])
            strings.append("".join(chars))
        return strings


SOURCE_VOCAB = CharVocabulary(SOURCE_CHARS)
TARGET_VOCAB = CharVocabulary(TARGET_CHARS)
SOURCE_LENGTH = 32  # the longest format, "wednesday, 27 september 2023", has 28 characters
TARGET_LENGTH = 12  # <s> + 10 characters, or 10 characters + </s>


def date_arrays(num, seed=0):
    """Fixed-shape arrays for teacher-forced training on the date task.

    Returns:
        A dict with ``source`` ``[N, 32]``, ``decoder_input`` ``[N, 12]`` (``<s>`` + ISO date),
        ``target`` ``[N, 12]`` (ISO date + ``</s>``), all int32 with 0 as padding, and the raw
        ``source_text`` / ``target_text`` lists.
    """
    sources, targets = generate_dates(num, seed)
    return {
        "source": SOURCE_VOCAB.encode(sources, SOURCE_LENGTH),
        "decoder_input": TARGET_VOCAB.encode(targets, TARGET_LENGTH, add_start=True),
        "target": TARGET_VOCAB.encode(targets, TARGET_LENGTH, add_end=True),
        "source_text": sources,
        "target_text": targets,
    }

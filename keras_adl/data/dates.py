"""Date normalisation: human-written dates in many formats → ISO ``YYYY-MM-DD``, char level.

The classic attention demo: the model must find the day, month and year wherever the source
format puts them. Generation is seeded and uses fixed English month/day names (no locale).
Numeric formats are unambiguous by their separator: ``DD.MM.YYYY`` (European) and
``MM/DD/YYYY`` (US).
"""

import datetime

import numpy as np

from keras_adl.text.char_vocabulary import CharVocabulary

SOURCE_CHARS = " ,./-0123456789abcdefghijklmnopqrstuvwxyz"
TARGET_CHARS = "-0123456789"

_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
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
        start_year: the first year (inclusive).
        end_year: the last year (inclusive).

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


SOURCE_VOCAB = CharVocabulary(SOURCE_CHARS)
TARGET_VOCAB = CharVocabulary(TARGET_CHARS)
SOURCE_LENGTH = 32  # the longest format, "wednesday, 27 september 2023", has 28 characters
TARGET_LENGTH = 12  # <s> + 10 characters, or 10 characters + </s>


def date_arrays(num, seed=0):
    """Fixed-shape arrays for teacher-forced training on the date task.

    Args:
        num: number of examples ``N``.
        seed: seed of `generate_dates`.

    Returns:
        A dict with ``source`` ``[N, 32]``, ``decoder_input`` ``[N, 12]`` (``<s>`` + ISO date),
        ``target`` ``[N, 12]`` (ISO date + ``</s>``), all int32 with 0 as padding, and the raw
        ``source_text`` / ``target_text`` lists.

    Example:

    >>> arrays = date_arrays(3)
    >>> arrays["source"].shape, arrays["decoder_input"].shape, arrays["target"].dtype
    ((3, 32), (3, 12), dtype('int32'))
    >>> arrays["source_text"][0], arrays["target_text"][0]
    ('feb 15 2070', '2070-02-15')
    >>> TARGET_VOCAB.decode(arrays["target"][:1])
    ['2070-02-15']
    """
    sources, targets = generate_dates(num, seed)
    return {
        "source": SOURCE_VOCAB.encode(sources, SOURCE_LENGTH),
        "decoder_input": TARGET_VOCAB.encode(targets, TARGET_LENGTH, add_start=True),
        "target": TARGET_VOCAB.encode(targets, TARGET_LENGTH, add_end=True),
        "source_text": sources,
        "target_text": targets,
    }

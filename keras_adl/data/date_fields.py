"""Field tagging of human-written dates: the main task of cross-view training (issue 50).

A sequence is a short English text holding 2-4 dates, all written in *one* format drawn per
sequence, joined by connectors ("to", "and", ",", "then", "from ... until ...", "between ...
and ..."). Each token is tagged with its field: ``O`` (connectors), ``WEEKDAY``, ``DAY``,
``MONTH``, ``YEAR`` or ``SEP`` (a separator inside a date). The labels are exact: they come
from the generator, which knows which number it wrote in which slot.

Why this task: in the numeric formats the separator does not give the order away (``/``,
``.`` and ``-`` each occur day-first and month-first), so in ``05/06/2002`` the tags of ``05``
and ``06`` cannot be read from the date alone. Because the format is shared, another date of
the sequence with a number above 12 in a day/month slot (``17/06/2002``) resolves them, so does
a weekday that fits only one order (a calendar fact, harder to learn), or nothing does. A
tagger needs context beyond the date, and the views of cross-view training (past only, future
only, ...) see different parts of it. Measured on 10,000 sequences (seed 0; recomputed by
``tests/data/test_date_fields.py``): 7.5% of all tokens (23.7% of the DAY and MONTH tokens)
are the day or month number of a locally ambiguous date (both numbers <= 12, a numeric
day/month format); of these, 82.7% are resolved by another date of the sequence, 9.4% only by
a weekday and 8.0% not at all (0.6% of all tokens: their labels are still the generator's, a
coin flip for any tagger, so the best reachable token accuracy is about 99.7%).

Choices:

- Formats (31, times three weekday styles): numeric day/month orders ``D/M/Y`` and ``M/D/Y``
  with separator ``/``, ``.`` or ``-``, zero-padded or not, 4- or 2-digit year (60% of the
  sequences, the ambiguous family); year first ``2002-06-05`` (10%); written months ``5 June
  2002``, ``June 5, 2002``, full or three-letter (30%). A weekday (``Wed`` or ``Wednesday``,
  then ``,``) is written before every date of half the sequences.
- Dates are uniform over 1950-2049 (a 2-digit year names one year) and drawn independently,
  not sorted, so their order is no cue beyond the ones counted above.
- Tokens are words, numbers and single separator characters (`date_field_tokens` splits a raw
  string the same way); names are capitalised, connectors lower case, everything ASCII.
- `DATE_FIELD_TAGS` starts with ``"<pad>"`` so that tag id `keras_adl.conventions.PAD` (0) is
  padding in the tag arrays as in the token arrays: one mask ``token_ids != PAD`` serves
  both, and a padded label is still a valid class index for any loss (masked out, never
  out of range). A tagger's softmax has ``len(DATE_FIELD_TAGS)`` = 7 outputs.
- `DATE_FIELD_VOCABULARY` is every token the generator can write (256), fixed and independent
  of the seed, so labelled, unlabelled and held-out arrays share their ids and no token is
  ``<unk>``; the embeddings of tokens absent from a few labelled sequences can still be trained
  by cross-view training's unlabelled batches. Pass a smaller vocabulary (e.g. the labelled
  sequences' tokens) to see ``<unk>`` for the rest.
- `DATE_FIELD_MAX_TOKENS` (31: four numeric dates with weekdays and three connectors) is the
  longest sequence the generator writes, the default length of the arrays, so it always fits.
- Unlabelled batches are the token ids alone: ``date_field_arrays(n, seed=s)[0]`` with a seed
  of their own (draw labelled, unlabelled and held-out data with different seeds).

Everything here is pure Python and numpy.
"""

import calendar
import datetime
import re

import numpy as np

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, SPECIAL_TOKENS, UNK
from keras_adl.data._checks import check_int, check_seed

__all__ = [
    "DATE_FIELD_MAX_TOKENS",
    "DATE_FIELD_TAGS",
    "DATE_FIELD_VOCABULARY",
    "date_field_arrays",
    "date_field_sequences",
    "date_field_tokens",
]

# Tag ``i`` has id ``i``; id 0 (`PAD`) is padding.
DATE_FIELD_TAGS = (SPECIAL_TOKENS[PAD], "O", "WEEKDAY", "DAY", "MONTH", "YEAR", "SEP")

FIRST_YEAR, LAST_YEAR = 1950, 2049  # a century: a 2-digit year names one year
NUM_DATES = (2, 4)  # dates per sequence, inclusive

_MONTHS = tuple(calendar.month_name[1:])  # "January", ...
_WEEKDAYS = tuple(calendar.day_name)  # "Monday", ... (index = date.weekday())
_SEPARATORS = ("/", ".", "-")

# A format: the fields in order, the separator after each but the last ("" for a space),
# zero-padded day and month, year digits, and how the month is written ("number", "full",
# "abbrev"). The families and their shares of the sequences:
_DAY_MONTH_NUMERIC = tuple(
    (order, (sep, sep), padded, digits, "number")
    for order in (("DAY", "MONTH", "YEAR"), ("MONTH", "DAY", "YEAR"))
    for sep in _SEPARATORS
    for padded in (True, False)
    for digits in (4, 2)
)
_YEAR_FIRST = tuple(
    (("YEAR", "MONTH", "DAY"), (sep, sep), True, 4, "number") for sep in _SEPARATORS
)
_WRITTEN = tuple(
    (order, seps, False, 4, month)
    for order, seps in ((("DAY", "MONTH", "YEAR"), ("", "")), (("MONTH", "DAY", "YEAR"), ("", ",")))
    for month in ("full", "abbrev")
)
_FAMILIES = (_DAY_MONTH_NUMERIC, _YEAR_FIRST, _WRITTEN)
_FAMILY_SHARES = (0.6, 0.1, 0.3)
_WEEKDAY_STYLES = (None, "abbrev", "full")
_WEEKDAY_SHARES = (0.5, 0.25, 0.25)

# Connectors: (words before the first date, between two dates, before the last date).
_TWO_DATE_STYLES = (
    ((), "to", "to"),
    ((), "and", "and"),
    ((), ",", ","),
    ((), "then", "then"),
    (("from",), "until", "until"),
    (("from",), "to", "to"),
    (("between",), "and", "and"),
)
_MANY_DATE_STYLES = (
    ((), ",", ","),
    ((), ",", "and"),
    ((), "then", "then"),
    ((), ",", "then"),
    ((), "and", "and"),
)

_TOKEN = re.compile(r"[A-Za-z]+|[0-9]+|[^\sA-Za-z0-9]")


def _vocabulary():
    """Every token the generator can write, in a fixed order."""
    words = ["from", "between", "to", "until", "and", "then"]
    words += [",", *_SEPARATORS]
    words += [w for name in _WEEKDAYS for w in (name[:3], name)]
    words += [w for name in _MONTHS for w in (name[:3], name)]  # "May" twice: kept once
    words += [str(n) for n in range(1, 32)] + [f"{n:02d}" for n in range(100)]
    words += [str(year) for year in range(FIRST_YEAR, LAST_YEAR + 1)]
    return tuple(dict.fromkeys(words))


def _max_tokens():
    """The longest sequence: the most dates, each with a weekday and the longest format."""
    date = 2 + max(len(fmt[0]) + sum(s != "" for s in fmt[1]) for f in _FAMILIES for fmt in f)
    styles = [(NUM_DATES[0], _TWO_DATE_STYLES)] if NUM_DATES[0] == 2 else []
    styles += [(n, _MANY_DATE_STYLES) for n in range(3, NUM_DATES[1] + 1)]
    return max(len(s[0]) + n * date + n - 1 for n, group in styles for s in group)


DATE_FIELD_VOCABULARY = _vocabulary()
DATE_FIELD_MAX_TOKENS = _max_tokens()


def date_field_tokens(text):
    """Splits a human-written text into the tokens of this task: words, numbers and single
    separator characters (spaces separate, they are not tokens).

    Args:
        text: a str.

    Returns:
        A list of str.

    Example:

    >>> date_field_tokens("Wed, 05/06/2002 to June 7, 2002")
    ['Wed', ',', '05', '/', '06', '/', '2002', 'to', 'June', '7', ',', '2002']
    """
    if not isinstance(text, str):
        raise TypeError(f"date_field_tokens: `text` must be a str; received {type(text).__name__}.")
    return _TOKEN.findall(text)


def _date_tokens(date, fmt, weekday):
    """``(tokens, tags)`` of one date written in ``fmt``, after a weekday if asked."""
    order, seps, padded, digits, month_style = fmt
    tokens, tags = [], []
    if weekday is not None:
        name = _WEEKDAYS[date.weekday()]
        tokens += [name[:3] if weekday == "abbrev" else name, ","]
        tags += ["WEEKDAY", "SEP"]
    for i, field in enumerate(order):
        if field == "YEAR":
            tokens.append(str(date.year) if digits == 4 else f"{date.year % 100:02d}")
        elif field == "MONTH" and month_style != "number":
            name = _MONTHS[date.month - 1]
            tokens.append(name[:3] if month_style == "abbrev" else name)
        else:
            value = date.day if field == "DAY" else date.month
            tokens.append(f"{value:02d}" if padded else str(value))
        tags.append(field)
        if i < len(seps) and seps[i]:
            tokens.append(seps[i])
            tags.append("SEP")
    return tokens, tags


def date_field_sequences(num, seed=0):
    """Seeded texts of 2-4 dates in one shared format, as tokens and their field tags.

    Args:
        num: number of sequences, a positive integer.
        seed: non-negative integer seed.

    Returns:
        A list of ``num`` pairs ``(tokens, tags)``: lists of str of one length, each tag one
        of ``DATE_FIELD_TAGS[1:]`` (``O``, ``WEEKDAY``, ``DAY``, ``MONTH``, ``YEAR``, ``SEP``).
        ``" ".join(tokens)`` is a text that `date_field_tokens` splits back into ``tokens``.

    Raises:
        ValueError: ``num`` or ``seed`` is not a non-negative (``num``: positive) integer.

    Example:

    >>> sequences = date_field_sequences(3, seed=0)
    >>> tokens, tags = sequences[0]
    >>> len(tokens) == len(tags) and set(tags) <= set(DATE_FIELD_TAGS[1:])
    True
    >>> {tag for _, tags in sequences for tag in tags} >= {"O", "DAY", "MONTH", "YEAR"}
    True
    """
    where = "date_field_sequences: "
    num = check_int("num", num, 1, where=where)
    rng = np.random.default_rng(check_seed(seed, where=where))
    first = datetime.date(FIRST_YEAR, 1, 1).toordinal()
    last = datetime.date(LAST_YEAR, 12, 31).toordinal()
    sequences = []
    for _ in range(num):
        family = _FAMILIES[rng.choice(len(_FAMILIES), p=_FAMILY_SHARES)]
        fmt = family[rng.integers(len(family))]
        weekday = _WEEKDAY_STYLES[rng.choice(len(_WEEKDAY_STYLES), p=_WEEKDAY_SHARES)]
        count = int(rng.integers(NUM_DATES[0], NUM_DATES[1] + 1))
        styles = _TWO_DATE_STYLES if count == 2 else _MANY_DATE_STYLES
        prefix, middle, final = styles[rng.integers(len(styles))]
        dates = [datetime.date.fromordinal(int(o)) for o in rng.integers(first, last + 1, count)]
        tokens, tags = list(prefix), ["O"] * len(prefix)
        for i, date in enumerate(dates):
            if i:
                tokens.append(final if i == count - 1 else middle)
                tags.append("O")
            date_tokens, date_tags = _date_tokens(date, fmt, weekday)
            tokens += date_tokens
            tags += date_tags
        sequences.append((tokens, tags))
    return sequences


def _check_vocabulary(vocabulary, *, where=""):
    """``vocabulary`` as a tuple of distinct str (``None``: `DATE_FIELD_VOCABULARY`)."""
    if vocabulary is None:
        return DATE_FIELD_VOCABULARY
    if isinstance(vocabulary, str) or not all(isinstance(t, str) for t in vocabulary):
        raise ValueError(
            f"{where}`vocabulary` must be a sequence of token strings (or None); received "
            f"{vocabulary!r}."
        )
    vocabulary = tuple(vocabulary)
    if len(set(vocabulary)) != len(vocabulary):
        raise ValueError(f"{where}`vocabulary` must not repeat a token; received {vocabulary!r}.")
    return vocabulary


def date_field_arrays(num, max_tokens=DATE_FIELD_MAX_TOKENS, seed=0, vocabulary=None):
    """`date_field_sequences` as fixed-shape arrays of token ids and tag ids.

    Token ``vocabulary[i]`` has id ``i + NUM_SPECIAL_TOKENS``, a token outside the vocabulary
    `UNK`; tag ``DATE_FIELD_TAGS[j]`` has id ``j``. Both arrays are padded at the end with
    `PAD` (0), so ``token_ids != PAD`` masks both. Unlabelled batches for cross-view training
    are ``token_ids`` alone.

    Args:
        num: number of sequences, a positive integer.
        max_tokens: the length ``T`` of the arrays, at least the longest sequence drawn; the
            default, `DATE_FIELD_MAX_TOKENS`, always fits.
        seed: non-negative integer seed (the same sequences as `date_field_sequences`).
        vocabulary: a sequence of distinct token strings, or ``None`` for
            `DATE_FIELD_VOCABULARY` (every token the generator writes).

    Returns:
        ``(token_ids, tag_ids, vocabulary)``: int32 ``[num, max_tokens]`` arrays and the
        vocabulary used, a tuple of str (an ``Embedding``'s ``input_dim`` is
        ``len(vocabulary) + NUM_SPECIAL_TOKENS``).

    Raises:
        ValueError: an argument is out of range, or a sequence is longer than ``max_tokens``.

    Example:

    >>> token_ids, tag_ids, vocabulary = date_field_arrays(4, seed=0)
    >>> token_ids.shape == tag_ids.shape == (4, DATE_FIELD_MAX_TOKENS), token_ids.dtype
    (True, dtype('int32'))
    >>> bool(np.array_equal(token_ids != PAD, tag_ids != PAD))
    True
    >>> [DATE_FIELD_TAGS[j] for j in tag_ids[0, :3]] == date_field_sequences(1)[0][1][:3]
    True
    """
    where = "date_field_arrays: "
    num = check_int("num", num, 1, where=where)
    max_tokens = check_int("max_tokens", max_tokens, 1, where=where)
    seed = check_seed(seed, where=where)
    vocabulary = _check_vocabulary(vocabulary, where=where)
    sequences = date_field_sequences(num, seed)
    longest = max(len(tokens) for tokens, _ in sequences)
    if longest > max_tokens:
        raise ValueError(
            f"{where}`max_tokens` must be at least the longest sequence, {longest} tokens "
            f"(DATE_FIELD_MAX_TOKENS = {DATE_FIELD_MAX_TOKENS} always fits); received "
            f"{max_tokens}."
        )
    token_index = {t: i + NUM_SPECIAL_TOKENS for i, t in enumerate(vocabulary)}
    tag_index = {tag: j for j, tag in enumerate(DATE_FIELD_TAGS)}
    token_ids = np.full((num, max_tokens), PAD, "int32")
    tag_ids = np.full((num, max_tokens), PAD, "int32")
    for row, (tokens, tags) in enumerate(sequences):
        token_ids[row, : len(tokens)] = [token_index.get(t, UNK) for t in tokens]
        tag_ids[row, : len(tags)] = [tag_index[tag] for tag in tags]
    return token_ids, tag_ids, vocabulary

import calendar
import datetime
import doctest
import re

import numpy as np
import pytest

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.data import date_fields
from keras_adl.data.date_fields import (
    DATE_FIELD_MAX_TOKENS,
    DATE_FIELD_TAGS,
    DATE_FIELD_VOCABULARY,
    date_field_arrays,
    date_field_sequences,
    date_field_tokens,
)

MONTHS = list(calendar.month_name[1:])
WEEKDAYS = list(calendar.day_name)


def _dates(tokens, tags):
    """The dates of a tagged sequence, read from the tags alone: the runs of non-``O`` tokens,
    each a dict of its fields' tokens, its format's signature and its calendar date."""
    runs, run = [], []
    for token, tag in [*zip(tokens, tags), (None, "O")]:
        if tag == "O":
            if run:
                runs.append(run)
            run = []
        else:
            run.append((token, tag))
    dates = []
    for run in runs:
        fields = {tag: token for token, tag in run if tag != "SEP"}
        assert sorted(tag for _, tag in run if tag != "SEP") == sorted(
            ["DAY", "MONTH", "YEAR"] + (["WEEKDAY"] if "WEEKDAY" in fields else [])
        )
        day, month, year = fields["DAY"], fields["MONTH"], fields["YEAR"]
        if month.isdigit():
            month_number = int(month)
        else:
            month_number = [m[: len(month)] for m in MONTHS].index(month) + 1
        year_number = (
            int(year) if len(year) == 4 else (1900 if int(year) >= 50 else 2000) + int(year)
        )
        signature = tuple(
            token
            if tag == "SEP"
            else tag
            + (":num" if token.isdigit() else (":abbrev" if len(token) == 3 else ":full"))
            + (f":{len(token)}" if tag == "YEAR" else "")
            for token, tag in run
        )
        dates.append(
            {
                **fields,
                "signature": signature,
                "value": (year_number, month_number, int(day)),
                "numeric_day_month": month.isdigit() and run[-1][1] == "YEAR",
            }
        )
    return dates


def _weekday_decides(date):
    """Whether the date's weekday (if written) is false for the day/month swapped reading."""
    year, month, day = date["value"]
    return "WEEKDAY" in date and calendar.weekday(year, day, month) != calendar.weekday(
        year, month, day
    )


def _shares(sequences):
    """``(ambiguous / tokens, ambiguous / day-month tokens, by another date, by a weekday only,
    unresolved)``, the last three as shares of the ambiguous tokens."""
    tokens = day_month = 0
    counts = {"date": 0, "weekday": 0, "none": 0}
    for toks, tags in sequences:
        tokens += len(toks)
        day_month += sum(tag in ("DAY", "MONTH") for tag in tags)
        dates = _dates(toks, tags)
        for i, date in enumerate(dates):
            if not (date["numeric_day_month"] and date["value"][2] <= 12):
                continue
            others = dates[:i] + dates[i + 1 :]
            if any(other["value"][2] > 12 for other in others):
                counts["date"] += 2  # its DAY and MONTH tokens
            elif any(_weekday_decides(d) for d in dates):
                counts["weekday"] += 2
            else:
                counts["none"] += 2
    ambiguous = sum(counts.values())
    return (
        ambiguous / tokens,
        ambiguous / day_month,
        counts["date"] / ambiguous,
        counts["weekday"] / ambiguous,
        counts["none"] / ambiguous,
    )


def test_tags_of_a_hand_checked_sequence():
    tokens, tags = date_field_sequences(4, seed=0)[3]
    # 15 January 1958 was a Wednesday, 21 December 1979 a Friday (month-first, 2-digit years).
    assert " ".join(tokens) == "Wednesday , 01 . 15 . 58 then Friday , 12 . 21 . 79"
    assert tags == (
        ["WEEKDAY", "SEP", "MONTH", "SEP", "DAY", "SEP", "YEAR", "O"]
        + ["WEEKDAY", "SEP", "MONTH", "SEP", "DAY", "SEP", "YEAR"]
    )
    assert DATE_FIELD_TAGS == ("<pad>", "O", "WEEKDAY", "DAY", "MONTH", "YEAR", "SEP")


def test_dates_are_real_and_share_one_format():
    sequences = date_field_sequences(3000, seed=1)
    orders = {"numeric": set(), "written": set()}
    counts = set()
    for tokens, tags in sequences:
        assert len(tokens) == len(tags) <= DATE_FIELD_MAX_TOKENS
        assert set(tags) <= set(DATE_FIELD_TAGS[1:])
        dates = _dates(tokens, tags)
        counts.add(len(dates))
        # "May" is written the same in full and abbreviated: it fits either style.
        styles = {s for d in dates if d["MONTH"] != "May" for s in d["signature"]}
        signatures = {
            tuple(s.replace(":full", ":abbrev") if "MONTH:" in s else s for s in d["signature"])
            for d in dates
        }
        assert len(signatures) == 1 and {"MONTH:full", "MONTH:abbrev"} - styles, tokens
        padded = {
            len(d[f]) == 2
            for d in dates
            for f in ("DAY", "MONTH")
            if d[f].isdigit() and int(d[f]) < 10
        }
        assert len(padded) <= 1, tokens  # zero-padding is part of the format
        for date in dates:
            year, month, day = date["value"]
            assert 1950 <= year <= 2049 and 1 <= month <= 12
            assert 1 <= day <= calendar.monthrange(year, month)[1], tokens
            if "WEEKDAY" in date:
                name = WEEKDAYS[datetime.date(year, month, day).weekday()]
                assert date["WEEKDAY"] in (name, name[:3]), tokens
        first = dates[0]["signature"]
        day_first = first.index(next(s for s in first if s.startswith("DAY"))) < first.index(
            next(s for s in first if s.startswith("MONTH"))
        )
        if dates[0]["numeric_day_month"]:
            orders["numeric"].add(day_first)
        elif not dates[0]["MONTH"].isdigit():
            orders["written"].add(day_first)
    assert orders == {"numeric": {True, False}, "written": {True, False}}
    assert counts == {2, 3, 4}


def test_the_shares_are_those_of_the_docstring():
    shares = _shares(date_field_sequences(10_000, seed=0))
    written = [round(100 * s, 1) for s in shares]
    assert written == [7.5, 23.7, 82.7, 9.4, 8.0]
    unresolved = round(100 * shares[0] * shares[4], 1)  # of all tokens
    doc = " ".join(date_fields.__doc__.split())
    for value in [*written, unresolved]:
        assert f"{value}%" in doc


def test_generation_is_seeded():
    a = date_field_sequences(200, seed=3)
    assert a == date_field_sequences(200, seed=3)
    assert a != date_field_sequences(200, seed=4)
    assert date_field_sequences(50, seed=3) == a[:50]


def test_text_is_ascii_and_splits_back_into_its_tokens():
    vocabulary = set(DATE_FIELD_VOCABULARY)
    for tokens, _ in date_field_sequences(1000, seed=2):
        text = " ".join(tokens)
        assert text.isascii()
        assert date_field_tokens(text) == tokens
        assert all(re.fullmatch(r"[A-Za-z]+|[0-9]+|[,/.-]", t) for t in tokens)
        assert set(tokens) <= vocabulary
    assert date_field_tokens("Wed, 05/06/2002 to June 7, 2002") == [
        "Wed",
        ",",
        "05",
        "/",
        "06",
        "/",
        "2002",
        "to",
        "June",
        "7",
        ",",
        "2002",
    ]


def test_vocabulary_and_max_tokens():
    assert len(set(DATE_FIELD_VOCABULARY)) == len(DATE_FIELD_VOCABULARY) == 256
    assert all(t.isascii() and " " not in t for t in DATE_FIELD_VOCABULARY)
    lengths = [len(tokens) for tokens, _ in date_field_sequences(2000, seed=0)]
    assert max(lengths) == DATE_FIELD_MAX_TOKENS == 31  # the bound is reached, never passed


def test_arrays_are_padded_ids_of_the_sequences():
    token_ids, tag_ids, vocabulary = date_field_arrays(100, max_tokens=40, seed=5)
    assert token_ids.shape == tag_ids.shape == (100, 40)
    assert token_ids.dtype == tag_ids.dtype == np.int32
    assert vocabulary == DATE_FIELD_VOCABULARY
    sequences = date_field_sequences(100, seed=5)
    np.testing.assert_array_equal(token_ids != PAD, tag_ids != PAD)
    for row, (tokens, tags) in enumerate(sequences):
        n = len(tokens)
        assert np.all(token_ids[row, n:] == PAD) and np.all(tag_ids[row, n:] == PAD)
        assert [vocabulary[i - NUM_SPECIAL_TOKENS] for i in token_ids[row, :n]] == tokens
        assert [DATE_FIELD_TAGS[j] for j in tag_ids[row, :n]] == tags
    assert token_ids.max() < len(vocabulary) + NUM_SPECIAL_TOKENS
    assert tag_ids.max() < len(DATE_FIELD_TAGS)
    default = date_field_arrays(100, seed=5)
    assert default[0].shape == (100, DATE_FIELD_MAX_TOKENS)
    np.testing.assert_array_equal(default[0], token_ids[:, :DATE_FIELD_MAX_TOKENS])


def test_arrays_map_tokens_outside_a_given_vocabulary_to_unk():
    token_ids, tag_ids, vocabulary = date_field_arrays(20, seed=0, vocabulary=["to", "and"])
    assert vocabulary == ("to", "and")
    real = token_ids != PAD
    assert set(token_ids[real].tolist()) <= {UNK, NUM_SPECIAL_TOKENS, NUM_SPECIAL_TOKENS + 1}
    assert np.all(tag_ids[real] != PAD)  # the tags do not depend on the vocabulary
    np.testing.assert_array_equal(tag_ids, date_field_arrays(20, seed=0)[1])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: date_field_sequences(0), "date_field_sequences: `num` must be an integer >= 1"),
        (lambda: date_field_sequences(True), "`num` must be an integer >= 1; received True"),
        (lambda: date_field_sequences(3, seed=-1), "`seed` must be a non-negative integer"),
        (lambda: date_field_arrays(3, max_tokens=0), "date_field_arrays: `max_tokens` must be"),
        (lambda: date_field_arrays(3, max_tokens=2.5), "`max_tokens` must be an integer"),
        (lambda: date_field_arrays(3, seed="0"), "date_field_arrays: `seed` must be"),
        (lambda: date_field_arrays(3, vocabulary="to"), "`vocabulary` must be a sequence of"),
        (lambda: date_field_arrays(3, vocabulary=["to", 1]), "`vocabulary` must be a sequence"),
        (lambda: date_field_arrays(3, vocabulary=["to", "to"]), "must not repeat a token"),
    ],
)
def test_bad_arguments_raise_naming_them(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


def test_a_too_short_max_tokens_says_what_fits():
    longest = max(len(tokens) for tokens, _ in date_field_sequences(50, seed=0))
    date_field_arrays(50, max_tokens=longest, seed=0)
    with pytest.raises(ValueError, match=f"longest sequence, {longest} tokens .* 31 always fits"):
        date_field_arrays(50, max_tokens=longest - 1, seed=0)
    with pytest.raises(TypeError, match="`text` must be a str"):
        date_field_tokens(None)


def test_doctests():
    results = doctest.testmod(date_fields, optionflags=doctest.ELLIPSIS)
    assert results.attempted >= 3 and results.failed == 0

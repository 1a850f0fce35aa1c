import numpy as np
import pytest

from keras_adl.data import fortunes
from keras_adl.data.fortunes import (
    FORTUNE_DIRECTORIES,
    FORTUNE_TOPICS,
    find_fortunes,
    load_fortunes,
    read_fortune_file,
)
from tests import debian_data


def test_read_fortune_file_separators_overstrike_and_empty_entries(tmp_path):
    path = tmp_path / "topic"
    path.write_bytes(
        b"%\n"  # a leading separator: empty entry
        b"  First entry,\n  two lines.  \n"
        b"%\n%\n \n%\n"  # empty and whitespace-only entries
        b"An _\bi_\bt_\ba_\bl_\bi_\bc and b\bbo\bol\bld word.\n"
        b"%\n"
        b"It was ____\b\b\b\bonly 100% sure.\n"  # a '%' inside a line is not a separator
        b" %\n"  # not exactly '%': part of the entry
        b"Bad byte \xff here\n"
        b"%"  # a trailing separator without a newline
    )
    assert read_fortune_file(path) == [
        "First entry,\n  two lines.",
        "An italic and bold word.",
        "It was only 100% sure.\n %\nBad byte \ufffd here",
    ]


def test_read_fortune_file_missing(tmp_path):
    with pytest.raises(FileNotFoundError, match="absent"):
        read_fortune_file(tmp_path / "absent")


def _fortune_dir(tmp_path):
    directory = tmp_path / "fortunes"
    directory.mkdir()
    (directory / "cats").write_text("latin-1 version\n%\nignored\n")
    (directory / "cats.u8").write_text("\n%\n".join(f"cat {i}" for i in range(10)) + "\n")
    (directory / "dogs").write_text("dog 0\n%\ndog 1\n%\ndog 2\n")
    (directory / "dogs.dat").write_bytes(b"\x00\x00\x00\x02 binary index, never read")
    return directory


def test_load_fortunes_prefers_u8_and_labels_by_topic_order(tmp_path):
    directory = _fortune_dir(tmp_path)
    documents, labels, topics = load_fortunes(directory, topics=("dogs", "cats"))
    assert topics == ["dogs", "cats"]
    assert documents == ["dog 0", "dog 1", "dog 2"] + [f"cat {i}" for i in range(10)]
    assert labels.dtype == np.int64 and labels.tolist() == [0] * 3 + [1] * 10


def test_load_fortunes_max_per_topic_is_a_seeded_subset(tmp_path):
    directory = _fortune_dir(tmp_path)
    kwargs = dict(topics=("cats", "dogs"), max_per_topic=4)
    documents, labels, _ = load_fortunes(directory, seed=0, **kwargs)
    assert labels.tolist() == [0] * 4 + [1] * 3  # dogs has only 3: all kept
    cats = documents[:4]
    assert set(cats) <= {f"cat {i}" for i in range(10)}
    assert cats == sorted(cats, key=lambda c: int(c.split()[1]))  # file order kept
    assert load_fortunes(directory, seed=0, **kwargs)[0] == documents
    subsets = {tuple(load_fortunes(directory, seed=s, **kwargs)[0][:4]) for s in range(6)}
    assert len(subsets) > 1


def test_load_fortunes_errors(tmp_path, monkeypatch):
    directory = _fortune_dir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"topic 'birds'.*birds\.u8.*birds"):
        load_fortunes(directory, topics=("cats", "birds"))
    with pytest.raises(FileNotFoundError, match=r"`fortunes` package \(`make data`\) or pass"):
        load_fortunes(tmp_path / "nowhere", topics=("cats", "dogs"))
    monkeypatch.setattr(fortunes, "FORTUNE_DIRECTORIES", (str(tmp_path / "nowhere"),))
    monkeypatch.setattr(fortunes.find_fortunes, "__defaults__", (fortunes.FORTUNE_DIRECTORIES,))
    with pytest.raises(FileNotFoundError, match="no fortune directory found.*directory="):
        load_fortunes(topics=("cats", "dogs"))
    with pytest.raises(ValueError, match="`max_per_topic` must be an integer >= 1; received 0"):
        load_fortunes(directory, topics=("cats", "dogs"), max_per_topic=0)
    with pytest.raises(ValueError, match="`topics` must hold at least 2 distinct"):
        load_fortunes(directory, topics=("cats", "cats"))
    with pytest.raises(TypeError, match="`topics` must be a sequence"):
        load_fortunes(directory, topics="cats")


def test_find_fortunes(tmp_path):
    assert find_fortunes([str(tmp_path / "a"), str(tmp_path), "/"]) == str(tmp_path)
    assert find_fortunes([str(tmp_path / "a")]) is None
    with pytest.raises(TypeError, match="`directories` must be a sequence"):
        find_fortunes(str(tmp_path))
    assert FORTUNE_DIRECTORIES[0] == "/usr/share/games/fortunes"


@debian_data.needs("fortunes")
def test_real_fortunes():
    documents, labels, topics = load_fortunes()
    assert topics == list(FORTUNE_TOPICS) and len(topics) == 9
    counts = np.bincount(labels, minlength=len(topics))
    assert (counts > 0).all() and len(documents) == counts.sum()
    assert all(doc.strip() == doc and doc and "\b" not in doc for doc in documents)
    _, small, _ = load_fortunes(max_per_topic=20)
    assert np.bincount(small).tolist() == [20] * 9


def test_read_fortune_file_keeps_non_ascii_text(tmp_path):
    path = tmp_path / "intl.u8"
    path.write_bytes("Café ☕ für alle.\n%\n— Ἀριστοτέλης\n%\n日本語\n".encode())
    assert read_fortune_file(path) == ["Café ☕ für alle.", "— Ἀριστοτέλης", "日本語"]


def test_read_other_fortunes_skips_topics_and_excluded_texts(tmp_path):
    files = {
        "law": "Objection.\n%\n",  # a topic file: left out
        "zen": "Old pond.\n%\nFrog  jumps\nin.\n%\nÉté, ça brûle.\n",
        "zen.u8": "Old pond.\n%\nFrog jumps in.\n%\nÉté\u00a0ça brûle.\n%\nПривет 東京\n",
        "notes": "no index beside it\n",  # not a fortune file
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    for name in ("law", "zen"):
        (tmp_path / f"{name}.dat").write_bytes(b"")
    texts = fortunes.read_other_fortunes(tmp_path, topics=("law",), exclude=["Frog\njumps  in."])
    assert texts == ["Old pond.", "Été\u00a0ça brûle.", "Привет 東京"]  # the .u8 copy, read
    with pytest.raises(TypeError, match="`topics` must be a sequence"):
        fortunes.read_other_fortunes(tmp_path, topics="law")

import os
import re

import numpy as np
import pytest

from keras_adl.tasks import documents as docs
from keras_adl.tasks.documents import (
    CLASS_WORDS,
    FILLER_WORDS,
    FORTUNE_DIRECTORIES,
    FORTUNE_TOPICS,
    NEEDLE_WORD,
    find_fortunes,
    load_document_tree,
    load_document_tsv,
    load_documents,
    load_fortunes,
    needle_documents,
    read_fortune_file,
    sentence_attention_hit_rate,
)


def _tree(root, files):
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)
    return root


def _tsv(tmp_path, content, name="docs.tsv"):
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


# ------------------------------------------------------------------------------ tree loader


def test_tree_loader_labels_order_and_skipped_files(tmp_path):
    root = _tree(tmp_path / "corpus", {
        "sports/b.txt": "Second sports doc.\n",
        "sports/a.txt": "First sports doc.",
        "sports/blank.txt": " \n\t\n",  # whitespace only: skipped
        "sports/notes.md": "not a document",
        "arts/z.txt": "Only arts doc,\r\nsecond line.",
        "empty/blank.txt": "   ",  # no document left: not a class
        "music/.hidden.txt": "hidden",  # hidden: skipped, so not a class either
    })
    (tmp_path / "corpus" / "stray.txt").write_text("a file at the root is not a class")
    documents, labels, class_names = load_document_tree(str(root))
    assert class_names == ["arts", "sports"]
    assert documents == ["Only arts doc,\nsecond line.", "First sports doc.", "Second sports doc."]
    assert labels.dtype == np.int64 and labels.tolist() == [0, 1, 1]
    # a pathlib.Path works too, and the result is the same
    again = load_document_tree(root)
    assert again[0] == documents and again[1].tolist() == labels.tolist()


def test_tree_loader_bad_utf8_names_the_file(tmp_path):
    root = _tree(tmp_path, {"a/1.txt": "fine", "b/bad.txt": b"caf\xe9 \xff"})
    with pytest.raises(ValueError, match=r"bad\.txt: not valid UTF-8"):
        load_document_tree(root)


def test_tree_loader_errors(tmp_path):
    _tree(tmp_path / "one", {"only/1.txt": "a", "only/2.txt": "b"})
    with pytest.raises(ValueError, match=r"at least 2 classes.*holds 1 \(\['only'\]\)"):
        load_document_tree(tmp_path / "one")
    (tmp_path / "none" / "x").mkdir(parents=True)
    with pytest.raises(ValueError, match="no documents found"):
        load_document_tree(tmp_path / "none")
    with pytest.raises(FileNotFoundError, match="`root`.*missing.*not a directory"):
        load_document_tree(tmp_path / "missing")
    with pytest.raises(TypeError, match="`root` must be a path"):
        load_document_tree(3)


# ------------------------------------------------------------------------------- TSV loader


def test_tsv_loader_parses_and_converts_backslash_n(tmp_path):
    path = _tsv(tmp_path, "spam\t Win money!\\nClick here. \n\n   \nham\tHi\\n\\nBob\r\nspam\tx\n")
    documents, labels, class_names = load_document_tsv(path)
    assert class_names == ["ham", "spam"]
    assert documents == ["Win money!\nClick here.", "Hi\n\nBob", "x"]
    assert labels.dtype == np.int64 and labels.tolist() == [1, 0, 1]


@pytest.mark.parametrize(
    "content, message",
    [
        ("a\tok\nno tab here\n", r"docs.tsv:2: expected 'label<TAB>text', found 0 tab"),
        ("a\tb\tc\n", r"docs.tsv:1: expected 'label<TAB>text', found 2 tab"),
        ("a\tok\n\n  \tempty label\n", r"docs.tsv:3: the label is empty"),
        ("a\t  \n", r"docs.tsv:1: the text is empty"),
        (b"a\tok\nb\t\xff\n", r"docs.tsv:2: not valid UTF-8"),
        ("a\tone\na\ttwo\n", r"at least 2 classes"),
        ("\n\n", r"no documents found"),
    ],
)
def test_tsv_loader_errors_name_the_line(tmp_path, content, message):
    with pytest.raises(ValueError, match=message):
        load_document_tsv(_tsv(tmp_path, content))


def test_tsv_loader_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.tsv"):
        load_document_tsv(tmp_path / "nope.tsv")


def test_load_documents_dispatches(tmp_path):
    root = _tree(tmp_path / "tree", {"x/1.txt": "from the tree", "y/1.txt": "also"})
    path = _tsv(tmp_path, "x\tfrom the file\ny\tagain\n")
    assert load_documents(root)[0] == ["from the tree", "also"]
    assert load_documents(path)[0] == ["from the file", "again"]
    with pytest.raises(FileNotFoundError, match="`path`.*ghost.*not found"):
        load_documents(tmp_path / "ghost")


# --------------------------------------------------------------------------------- fortunes


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
    monkeypatch.setattr(docs, "FORTUNE_DIRECTORIES", (str(tmp_path / "nowhere"),))
    monkeypatch.setattr(docs.find_fortunes, "__defaults__", (docs.FORTUNE_DIRECTORIES,))
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


def test_real_fortunes():
    if find_fortunes() is None:
        pytest.skip("no fortune directory (install Debian's `fortunes` package: `make data`)")
    documents, labels, topics = load_fortunes()
    assert topics == list(FORTUNE_TOPICS) and len(topics) == 9
    counts = np.bincount(labels, minlength=len(topics))
    assert (counts > 0).all() and len(documents) == counts.sum()
    assert all(doc.strip() == doc and doc and "\b" not in doc for doc in documents)
    _, small, _ = load_fortunes(max_per_topic=20)
    assert np.bincount(small).tolist() == [20] * 9


# ------------------------------------------------------------------------------ needle task


def _sentences(document):
    assert document.endswith(".")
    return [s.split() for s in document[:-1].split(". ")]


def test_word_lists():
    assert len(CLASS_WORDS) >= 10 and len(set(CLASS_WORDS)) == len(CLASS_WORDS)
    assert len(FILLER_WORDS) >= 200 and len(set(FILLER_WORDS)) == len(FILLER_WORDS)
    assert all(re.fullmatch(r"[a-z]+", w) for w in CLASS_WORDS + FILLER_WORDS)
    assert not set(FILLER_WORDS) & (set(CLASS_WORDS) | {NEEDLE_WORD})
    assert NEEDLE_WORD not in CLASS_WORDS
    assert FILLER_WORDS == docs._filler_words()  # fixed, not random


def test_needle_is_deterministic_per_seed():
    a = needle_documents(50, seed=3)
    b = needle_documents(50, seed=3)
    c = needle_documents(50, seed=4)
    assert a[0] == b[0]
    np.testing.assert_array_equal(a[1], b[1])
    np.testing.assert_array_equal(a[2], b[2])
    assert a[0] != c[0]


@pytest.mark.parametrize(
    "num_classes, num_sentences, sentence_length",
    [(4, (4, 10), (4, 10)), (2, (1, 3), (2, 2)), (12, (5, 5), (3, 12))],
)
def test_needle_structure(num_classes, num_sentences, sentence_length):
    documents, labels, keys = needle_documents(
        300, num_classes, num_sentences, sentence_length, seed=1
    )
    assert len(documents) == 300 and labels.shape == keys.shape == (300,)
    assert labels.dtype == keys.dtype == np.int64
    assert labels.min() >= 0 and labels.max() < num_classes
    classes = set(CLASS_WORDS[:num_classes])
    vocabulary = set(FILLER_WORDS) | classes | {NEEDLE_WORD}
    seen_lengths, seen_counts = set(), set()
    for document, label, key in zip(documents, labels, keys):
        assert re.fullmatch(r"[a-z]+( [a-z]+)*\.( [a-z]+( [a-z]+)*\.)*", document)
        sentences = _sentences(document)
        seen_counts.add(len(sentences))
        assert num_sentences[0] <= len(sentences) <= num_sentences[1]
        assert 0 <= key < len(sentences)
        assert " ".join(" ".join(s) + "." for s in sentences) == document
        for i, words in enumerate(sentences):
            seen_lengths.add(len(words))
            assert sentence_length[0] <= len(words) <= sentence_length[1]
            assert set(words) <= vocabulary
            class_words = [w for w in words if w in classes]
            if i == key:
                assert words.count(NEEDLE_WORD) == 1
                assert class_words == [CLASS_WORDS[label]]
            else:
                assert NEEDLE_WORD not in words
                assert len(class_words) == 1
    assert seen_counts == set(range(num_sentences[0], num_sentences[1] + 1))
    assert seen_lengths == set(range(sentence_length[0], sentence_length[1] + 1))


def test_needle_labels_and_keys_are_spread():
    documents, labels, keys = needle_documents(2000, num_classes=4, seed=0)
    counts = np.bincount(labels, minlength=4)
    assert counts.min() > 400 and counts.max() < 600  # 500 expected, sd ≈ 19
    positions = [key / (len(_sentences(d)) - 1) for d, key in zip(documents, keys)]
    assert 0.4 < np.mean(positions) < 0.6  # the key is not always first or last
    first = [d.split()[:2] for d, k in zip(documents, keys) if k == 0]
    assert 0 < len(first) < len(documents)


def test_needle_label_is_not_readable_from_class_word_counts():
    documents, labels, _ = needle_documents(2000, num_classes=4, seed=0)
    counts = np.array([[d.replace(".", "").split().count(w) for w in CLASS_WORDS[:4]]
                       for d in documents])
    assert (counts.sum(axis=1) == [len(_sentences(d)) for d in documents]).all()
    majority = (counts.argmax(axis=1) == labels).mean()
    assert majority < 0.6  # a bag of words sees a weak cue only (chance is 0.25)
    # whereas the word next to the marker gives the label every time
    readout = []
    for document in documents:
        key = next(s for s in _sentences(document) if NEEDLE_WORD in s)
        readout.append(next(CLASS_WORDS.index(w) for w in key if w in CLASS_WORDS))
    np.testing.assert_array_equal(readout, labels)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(num_documents=0), "`num_documents` must be an integer >= 1; received 0"),
        (dict(num_documents=2.0), "`num_documents` must be an integer"),
        (dict(num_documents=5, num_classes=1), r"`num_classes` must be an integer in 2\.\.12"),
        (dict(num_documents=5, num_classes=13), r"`num_classes`.*received 13"),
        (dict(num_documents=5, num_sentences=(0, 3)), r"`num_sentences` must satisfy 1 <= low"),
        (dict(num_documents=5, num_sentences=(5, 3)), r"`num_sentences`.*received \(5, 3\)"),
        (dict(num_documents=5, num_sentences=4), r"`num_sentences` must be a pair"),
        (dict(num_documents=5, sentence_length=(1, 4)), r"`sentence_length` must satisfy 2 <="),
        (dict(num_documents=5, sentence_length=(2.0, 4)), r"`sentence_length` must be a pair"),
        (dict(num_documents=5, seed=-1), "`seed` must be a non-negative integer"),
    ],
)
def test_needle_validates_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        needle_documents(**kwargs)


# --------------------------------------------------------------------------------- hit rate


def test_hit_rate_on_a_hand_made_example():
    attention = np.array([
        [0.1, 0.8, 0.1, 0.0],  # argmax 1, key 1: hit
        [0.6, 0.2, 0.2, 0.0],  # argmax 0, key 2: miss
        [0.0, 0.0, 0.3, 0.7],  # argmax 3, key 3: hit
        [0.25, 0.25, 0.5, 0.0],  # argmax 2, key 0: miss
    ])
    keys = np.array([1, 2, 3, 0])
    assert sentence_attention_hit_rate(attention, keys) == 0.5
    assert sentence_attention_hit_rate(attention, [1, 0, 3, 2]) == 1.0
    assert isinstance(sentence_attention_hit_rate(attention, keys), float)


@pytest.mark.parametrize(
    "attention, keys, error, message",
    [
        (np.zeros(4), [0], ValueError, r"`sentence_attention` must have shape \[N, S\]"),
        (np.zeros((2, 3)), [0, 1, 2], ValueError,
         r"`key_sentences` must have shape \[N\] with N = 2"),
        (np.zeros((2, 3)), [[0, 1]], ValueError, r"`key_sentences` must have shape"),
        (np.zeros((2, 3)), [0, 3], ValueError, r"`key_sentences` must lie in \[0, 3\)"),
        (np.zeros((2, 3)), [0.0, 1.0], TypeError, r"`key_sentences` must be integers"),
    ],
)
def test_hit_rate_shape_errors(attention, keys, error, message):
    with pytest.raises(error, match=message):
        sentence_attention_hit_rate(attention, keys)


def test_byte_order_marks_are_not_part_of_labels_or_documents(tmp_path):
    tsv = tmp_path / "bom.tsv"
    tsv.write_bytes("\ufeffsport\tGoal.\npolitics\tVote.\n".encode("utf-8"))
    assert load_document_tsv(str(tsv))[2] == ["politics", "sport"]
    for label in ("a", "b"):
        (tmp_path / "tree" / label).mkdir(parents=True)
        (tmp_path / "tree" / label / "x.txt").write_bytes("\ufeffHello.".encode("utf-8"))
    assert load_document_tree(str(tmp_path / "tree"))[0] == ["Hello.", "Hello."]

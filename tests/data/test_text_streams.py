"""`keras_adl.data.text_streams`: corpora read from disk block by block, with the documents,
words and errors of `keras_adl.data.text_corpora`'s readers, and one bounded counting pass."""

import collections
import gzip

import numpy as np
import pytest

from keras_adl.data import text_streams
from keras_adl.data.text_corpora import (
    read_gcide,
    read_text_documents,
    read_wordnet_glosses,
    tokenize_documents,
)
from keras_adl.data.text_streams import TextStream, corpus_files, count_words
from tests.data.test_text_corpora import GCIDE, WORDNET

LINES = ["Le fichier\u00a0: introuvable.", "ÉCOLE Москва 東京 🎉 ok", "  third  line ", "4th"]
PARAGRAPHS = "First line\nstill first.\n\n\nSecond: Été!\r\n \r\nThird, Straße.\nEnd\n"


def _write(path, text, gz=False):
    data = text.encode("utf-8") if isinstance(text, str) else text
    if gz:
        with gzip.open(path, "wb") as f:
            f.write(data)
    else:
        path.write_bytes(data)
    return str(path)


def _documents(path, **kwargs):
    return list(TextStream(path, **kwargs).documents())


def _expected(path):
    return [d for d in tokenize_documents(read_text_documents(path)) if d]


def test_streamed_documents_are_the_readers_documents(tmp_path):
    # a byte-order mark and CRLF line ends (Windows editors), and a file of paragraphs
    lines = _write(tmp_path / "lines.txt", b"\xef\xbb\xbf" + "\r\n".join(LINES).encode() + b"\r\n")
    paragraphs = _write(tmp_path / "paragraphs.txt", PARAGRAPHS)
    assert _documents(lines) == _expected(lines)
    assert _documents(lines)[1] == ["école", "москва", "東京", "ok"]
    assert (
        _documents(paragraphs)
        == _expected(paragraphs)
        == [
            ["first", "line", "still", "first"],
            ["second", "été"],
            ["third", "strasse", "end"],
        ]
    )
    # gzipped, the same; a directory: its .txt and .gz files in name order, others ignored
    _write(tmp_path / "c.txt.gz", PARAGRAPHS, gz=True)
    _write(tmp_path / "notes.md", "ignored")
    whole = _documents(str(tmp_path))
    assert whole == _documents(str(tmp_path / "c.txt.gz")) + _expected(lines) + _expected(
        paragraphs
    )
    assert corpus_files(str(tmp_path / "*.txt")) == [lines, paragraphs]


def test_small_blocks_and_a_huge_line_keep_every_word(tmp_path, monkeypatch):
    text = "".join(f"line {i} with words\n" for i in range(500))
    path = _write(tmp_path / "many.txt", text)
    assert _documents(path, block_bytes=64) == _expected(path)
    # a line longer than MAX_LINE_BYTES is cut at a space: its words all arrive, in order
    monkeypatch.setattr(text_streams, "MAX_LINE_BYTES", 100)
    long = " ".join(f"mot{i}" for i in range(300)) + "\nnext line\n"
    path = _write(tmp_path / "long.txt", long)
    pieces = _documents(path, block_bytes=64)
    assert len(pieces) > 2 and sum(pieces, []) == sum(_expected(path), [])
    # no space in it: cut between characters, never inside one
    path = _write(tmp_path / "cjk.txt", "東京" * 100 + "\n")
    assert "".join(sum(_documents(path, block_bytes=64), [])) == "東京" * 100


def test_a_document_limit_reads_the_first_documents(tmp_path):
    lines = _write(tmp_path / "lines.txt", "\n".join(LINES) + "\n")
    assert _documents(lines, documents=2) == _expected(lines)[:2]
    paragraphs = _write(tmp_path / "paragraphs.txt", PARAGRAPHS)
    assert _documents(paragraphs, documents=2) == _expected(paragraphs)[:2]
    assert count_words(TextStream(paragraphs, documents=2)).documents == 2


def test_bad_files_are_named_in_one_line(tmp_path):
    with pytest.raises(FileNotFoundError, match="corpus '.*nothing.txt' not found"):
        TextStream(str(tmp_path / "nothing.txt"))
    with pytest.raises(ValueError, match="no file matches"):
        TextStream(str(tmp_path / "*.txt"))
    with pytest.raises(ValueError, match=r"no \.txt or \.gz file found under"):
        TextStream(str(tmp_path))
    bad = _write(tmp_path / "bad.txt", b"ok\nfine\n\xff\xfe\n")
    with pytest.raises(ValueError, match=r"bad.txt:3: not valid UTF-8 \(byte b'\\xff'\)"):
        count_words(TextStream(bad, block_bytes=4))
    nul = _write(tmp_path / "nul.txt", b"one\ntwo\x00three\n")
    with pytest.raises(ValueError, match=r"nul.txt:2: a NUL byte; expected a text file"):
        count_words(TextStream(nul))
    broken = _write(tmp_path / "broken.gz", b"not gzip at all")
    with pytest.raises(ValueError, match="broken.gz: cannot be read as gzip"):
        count_words(TextStream(broken))


def test_gcide_and_wordnet_stream_as_their_readers_read_them(tmp_path):
    path = tmp_path / "gcide.dict.dz"
    _write(path, GCIDE, gz=True)
    assert _documents(str(path)) == tokenize_documents(read_gcide(str(path)))
    (tmp_path / "wn").mkdir()
    (tmp_path / "wn" / "data.noun").write_text(WORDNET)
    wordnet = str(tmp_path / "wn")
    assert _documents(wordnet) == tokenize_documents(read_wordnet_glosses(wordnet))
    with pytest.raises(FileNotFoundError, match="install Debian's dict-gcide"):
        TextStream(str(tmp_path / "none.dict.dz"))


def test_the_counting_pass_counts_and_prunes_as_gensim(tmp_path):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(400)]
    weights = 1.0 / np.arange(1, 401)  # Zipf: a few frequent words, many rare ones
    lines = [
        " ".join(rng.choice(words, rng.integers(1, 12), p=weights / weights.sum()))
        for _ in range(3000)
    ]
    path = _write(tmp_path / "zipf.txt", "\n".join(lines) + "\n")
    expected = collections.Counter(w for line in lines for w in line.split())
    counted = count_words(TextStream(path, block_bytes=512))
    assert counted.counts == expected and counted.pruned == 0
    assert counted.documents == 3000 and counted.words == sum(expected.values())
    assert counted.longest == max(len(line.split()) for line in lines)
    # at most 100 distinct words held (and a block's new words): the rarest are dropped; a
    # frequent word dropped early comes back, missing only its first few occurrences
    pruned = count_words(TextStream(path, block_bytes=512), max_words=100)
    assert pruned.pruned > 0 and len(pruned.counts) <= 100 + 80
    assert set(pruned.counts) < set(expected)
    for word, count in expected.most_common(10):
        assert count - 2 * pruned.pruned <= pruned.counts[word] <= count


def test_the_encoded_corpus_reads_as_the_stream_tokenizes(tmp_path):
    path = _write(tmp_path / "paragraphs.txt", (PARAGRAPHS + "\n") * 50)
    stream = TextStream(path, block_bytes=128)
    counted = count_words(stream, encode_to=str(tmp_path / "corpus.ids"))
    counted.encoded.chunk_tokens = 64  # runs of 64 numbers: the file holds several
    vocabulary = sorted(counted.counts)[:-2]  # two words left out: dropped when read
    runs = {
        kind: [(i.numpy(), d.numpy()) for i, d in source.chunks(vocabulary, 4)]
        for kind, source in (("stream", stream), ("encoded", counted.encoded))
    }
    ids = {kind: np.concatenate([i for i, _ in r]) for kind, r in runs.items()}
    np.testing.assert_array_equal(ids["stream"], ids["encoded"])
    assert ids["stream"].min() >= 4 and ids["stream"].max() < 4 + len(vocabulary)
    # documents: each paragraph of the file is one document, in either reading
    for kind, found in runs.items():
        per_run = [np.unique(d, return_counts=True)[1] for _, d in found]
        sizes = np.concatenate(per_run)
        assert sizes.max() <= 4, kind  # a paragraph's known words, or fewer where a run ends
    # a corpus smaller than a run comes as one run of whole copies, each its own documents
    counted.encoded.chunk_tokens = 10_000
    ((small, documents),) = [
        (i.numpy(), d.numpy()) for i, d in counted.encoded.chunks(vocabulary, 4)
    ]
    copies = len(small) // len(ids["stream"])
    assert copies > 1 and len(small) == copies * len(ids["stream"])
    np.testing.assert_array_equal(small, np.tile(ids["stream"], copies))
    first, last = documents[: len(ids["stream"])], documents[-len(ids["stream"]) :]
    assert first.max() < last.min()
    counted.encoded.remove()
    assert not (tmp_path / "corpus.ids").exists()

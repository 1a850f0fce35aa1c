"""`keras_adl.data.text_corpora`: text files, GCIDE's dictd database and WordNet's data files
as documents of words."""

import gzip

import pytest

from keras_adl.data.text_corpora import (
    LINES_PER_BLOCK,
    load_corpus,
    read_gcide,
    read_text_documents,
    read_wordnet_glosses,
    tokenize_documents,
)

GCIDE = """Abuse \\A*buse"\\, v. t. [F. abuser; L. abusus. See {Use}.]
   1. To put to a wrong use; to misapply; as, to abuse inherited gold.
      [1913 Webster]

            This principle (if one may so abuse the word) shoots
            rapidly into popularity.              --Froude.
      [1913 Webster]
"""

WORDNET = """  1 This software and database is being provided to you, the LICENSEE, by
  2 Princeton University under the following license.
00001740 03 n 01 entity 0 003 ~ 00001930 n 0000 | that which is perceived or known
00002137 03 n 02 abstraction 0 abstract_entity 0 000 | a general concept formed by extracting
"""


def test_text_files_give_paragraphs_and_directories_are_read_in_order(tmp_path):
    (tmp_path / "b.txt").write_text("Third paragraph.\n", encoding="utf-8")
    (tmp_path / "a.txt").write_text(
        "First line\nstill first.\n\n\nSecond: Été!\n", encoding="utf-8"
    )
    (tmp_path / "notes.md").write_text("ignored")
    assert read_text_documents(str(tmp_path)) == [
        "First line still first.",
        "Second: Été!",
        "Third paragraph.",
    ]
    assert tokenize_documents(read_text_documents(str(tmp_path / "a.txt"))) == [
        ["first", "line", "still", "first"],
        ["second", "été"],
    ]


def test_gcide_markup_is_removed(tmp_path):
    path = tmp_path / "gcide.dict.dz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(GCIDE)
    documents = read_gcide(str(path))
    assert documents == [
        "Abuse , v. t. 1. To put to a wrong use; to misapply; as, to abuse inherited gold.",
        "This principle (if one may so abuse the word) shoots rapidly into popularity.",
    ]
    assert load_corpus(str(path)) == documents


def test_wordnet_synsets_give_their_words_and_gloss(tmp_path):
    (tmp_path / "data.noun").write_text(WORDNET)
    documents = read_wordnet_glosses(str(tmp_path))
    assert documents == [
        "entity: that which is perceived or known",
        "abstraction abstract entity: a general concept formed by extracting",
    ]
    assert load_corpus(str(tmp_path)) == documents


def test_missing_corpora_name_the_package_and_bad_text_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="install Debian's dict-gcide"):
        read_gcide(str(tmp_path / "none.dict.dz"))
    with pytest.raises(FileNotFoundError, match="install Debian's wordnet-base"):
        read_wordnet_glosses(str(tmp_path))
    with pytest.raises(FileNotFoundError, match="corpus '.*nothing.txt' not found"):
        read_text_documents(str(tmp_path / "nothing.txt"))
    (tmp_path / "bad.txt").write_bytes(b"ok\n\xff\xfe")
    with pytest.raises(ValueError, match=r"bad.txt:2: not valid UTF-8 \(byte 3: "):
        read_text_documents(str(tmp_path / "bad.txt"))
    (tmp_path / "nul.txt").write_bytes(b"one\ntwo\x00three\n")
    with pytest.raises(ValueError, match=r"nul.txt:2: a NUL byte; expected a text file"):
        read_text_documents(str(tmp_path / "nul.txt"))
    (tmp_path / "empty.txt").write_text("\n \n")
    with pytest.raises(ValueError, match="no text found"):
        read_text_documents(str(tmp_path / "empty.txt"))


def test_a_file_without_blank_lines_is_one_document_per_line(tmp_path):
    lines = ["Le fichier\u00a0: introuvable.", "ÉCOLE Москва 東京", "  third  line "]
    path = tmp_path / "lines.txt"
    # A byte-order mark and CRLF line ends, as Windows editors write them.
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode("utf-8") + b"\r\n")
    assert read_text_documents(str(path)) == [
        "Le fichier : introuvable.",
        "ÉCOLE Москва 東京",
        "third line",
    ]


def test_lines_become_documents_unless_the_file_has_paragraphs(tmp_path):
    lines = tmp_path / "lines.txt"
    lines.write_text("".join(f"Sentence {i}.\n" for i in range(20)), encoding="utf-8")
    assert read_text_documents(str(lines)) == [f"Sentence {i}." for i in range(20)]
    # As sentences (next-sentence pairs): blocks of consecutive lines, one line each.
    blocks = read_text_documents(str(lines), blocks=True)
    assert blocks[0] == "\n".join(f"Sentence {i}." for i in range(LINES_PER_BLOCK))
    assert len(blocks) == -(-20 // LINES_PER_BLOCK)
    paragraphs = tmp_path / "paragraphs.txt"
    paragraphs.write_text("One.\nTwo.\r\n \r\nThree.\n", encoding="utf-8")
    assert read_text_documents(str(paragraphs)) == ["One. Two.", "Three."]
    assert read_text_documents(str(paragraphs), blocks=True) == ["One. Two.", "Three."]

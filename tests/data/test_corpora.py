import numpy as np
import pytest

from keras_adl.data.corpora import load_document_tree, load_document_tsv, load_documents


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


def test_tree_loader_labels_order_and_skipped_files(tmp_path):
    root = _tree(
        tmp_path / "corpus",
        {
            "sports/b.txt": "Second sports doc.\n",
            "sports/a.txt": "First sports doc.",
            "sports/blank.txt": " \n\t\n",  # whitespace only: skipped
            "sports/notes.md": "not a document",
            "arts/z.txt": "Only arts doc,\r\nsecond line.",
            "empty/blank.txt": "   ",  # no document left: not a class
            "music/.hidden.txt": "hidden",  # hidden: skipped, so not a class either
        },
    )
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
    with pytest.raises(ValueError, match=r"bad\.txt:1: not valid UTF-8 \(byte 3: "):
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


def test_byte_order_marks_are_not_part_of_labels_or_documents(tmp_path):
    tsv = tmp_path / "bom.tsv"
    tsv.write_bytes("\ufeffsport\tGoal.\npolitics\tVote.\n".encode("utf-8"))
    assert load_document_tsv(str(tsv))[2] == ["politics", "sport"]
    for label in ("a", "b"):
        (tmp_path / "tree" / label).mkdir(parents=True)
        (tmp_path / "tree" / label / "x.txt").write_bytes("\ufeffHello.".encode("utf-8"))
    assert load_document_tree(str(tmp_path / "tree"))[0] == ["Hello.", "Hello."]


def test_non_ascii_labels_and_documents_from_a_tree_and_a_file(tmp_path):
    root = _tree(
        tmp_path / "tree",
        {
            "café/1.txt": "Grüße aus Köln. Ça va?",
            "日本/文書.txt": "日本語の文書です。\n二行目。",
        },
    )
    documents, labels, class_names = load_document_tree(root)
    assert class_names == ["café", "日本"]
    assert documents == ["Grüße aus Köln. Ça va?", "日本語の文書です。\n二行目。"]
    assert labels.tolist() == [0, 1]
    path = _tsv(tmp_path, "日本\t日本語の文書です。\\n二行目。\ncafé\tGrüße aus Köln.\n")
    documents, labels, class_names = load_document_tsv(path)
    assert class_names == ["café", "日本"]
    assert documents == ["日本語の文書です。\n二行目。", "Grüße aus Köln."]
    assert labels.tolist() == [1, 0]

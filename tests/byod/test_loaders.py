"""Bring your own data: every awkward input either loads or stops with one line naming the
file (and the line, where one line is at fault) — for the free text of word2vec, pretraining
and the contextual tasks, the ``pairs`` files and the documents files (issue 47, item 9)."""

import pytest

from keras_adl.data.corpora import load_documents
from keras_adl.data.text_corpora import load_corpus
from keras_adl.data.text_pairs import load_text_pairs
from tests.byod.inputs import (
    document_cases,
    idx_cases,
    pair_cases,
    text_cases,
    write_cases,
    write_idx_case,
)

GROUPS = {
    "text": (text_cases, ".txt", load_corpus),
    "pairs": (pair_cases, ".tsv", load_text_pairs),
    "documents": (document_cases, ".tsv", load_documents),
}
CASES = [
    (group, index, name, expected)
    for group, (cases, _, _) in GROUPS.items()
    for index, (name, _, expected) in enumerate(cases())
]


@pytest.mark.parametrize(
    "group, index, name, expected", CASES, ids=[f"{c[0]}-{c[2]}" for c in CASES]
)
def test_an_awkward_input_loads_or_fails_in_one_line_naming_the_file(
    tmp_path, group, index, name, expected
):
    cases, suffix, load = GROUPS[group]
    _, path, _ = write_cases(str(tmp_path), cases(), suffix)[index]
    if expected == "ok":
        loaded = load(path)
        items = loaded[0]
        assert items and all(isinstance(item, str) and item for item in items)
        assert not any("\ufeff" in item or "\x00" in item for item in items)
        return
    with pytest.raises(ValueError) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message and path in message
    if name in ("NUL bytes", "invalid UTF-8", "no tab", "two tabs", "empty target"):
        assert f"{path}:1:" in message or f"{path}:2:" in message


def test_a_bom_and_crlf_do_not_reach_the_text(tmp_path):
    cases = {name: data for name, data, _ in pair_cases()}
    path = tmp_path / "bom.tsv"
    path.write_bytes(cases["UTF-8 BOM"])
    sources, targets = load_text_pairs(str(path))
    assert sources[0] == "File not found." and targets[0] == "Fichier introuvable."
    path.write_bytes(cases["CRLF"])
    assert load_text_pairs(str(path))[1][0] == "Fichier introuvable."


IDX = idx_cases()


@pytest.mark.parametrize("index", range(len(IDX)), ids=[case[0] for case in IDX])
def test_an_awkward_idx_directory_loads_or_fails_in_one_line_naming_the_file(tmp_path, index):
    from keras_adl.recipes.vision.data import load_digits

    name, files, expected = IDX[index]
    directory = write_idx_case(str(tmp_path / "idx"), files)
    if expected == "ok":
        (train_x, train_y), (test_x, test_y) = load_digits(directory)
        assert train_x.dtype == "float32" and 0.0 <= train_x.min() and train_x.max() <= 1.0
        assert len(train_x) == len(train_y) == 40 and len(test_x) == len(test_y) == 10
        assert train_x.shape[1] == train_x.shape[2] == (20 if "20" in name else 28)
        return
    with pytest.raises(ValueError) as caught:
        load_digits(directory)
    message = str(caught.value)
    assert "\n" not in message and directory in message
    if expected == "labels":
        assert "labels 0-9" in message and "train-labels-idx1-ubyte" in message

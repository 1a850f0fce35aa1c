"""The documents recipe on a user's own documents: sizes that follow the data, the share cut."""

import json

import numpy as np
import pytest

from keras_adl import recipes
from keras_adl.recipes.documents.data import cut_shares, fitted_shape
from keras_adl.recipes.documents.spec import (
    FORTUNES_SHAPE,
    MAX_SENTENCES,
    MAX_WORDS,
    MAX_WORDS_PER_DOCUMENT,
)
from keras_adl.recipes.documents.tasks import RECIPES
from keras_adl.text import DocumentTokenizer


def _document(sentences, words, word="mot"):
    return " ".join(" ".join([word] * words) + "." for _ in range(sentences))


def test_lengths_count_sentences_and_words_before_truncation():
    probe = DocumentTokenizer([], 1, 1)
    sentences, words = probe.lengths([_document(3, 4), "Один. Два три!", _document(1, 7)])
    assert sentences.tolist() == [3, 2, 1]
    assert words.tolist() == [[4, 4, 4], [1, 2, 0], [7, 0, 0]]


def test_fitted_shape_follows_the_percentile_within_the_caps():
    sentences = np.arange(1, 101)  # 1 to 100 sentences
    words = np.tile(np.arange(1, 21), (100, 1))  # sentences of 1 to 20 words
    assert fitted_shape(sentences, words, percentile=90) == (91, 19)
    huge = fitted_shape(np.array([10_000]), np.array([[500]]))
    assert huge[0] <= MAX_SENTENCES and huge[1] <= MAX_WORDS
    assert huge[0] * huge[1] <= MAX_WORDS_PER_DOCUMENT


def test_cut_shares_count_what_padding_drops():
    sentences = np.array([3, 1])
    words = np.array([[4, 2, 6], [10, 0, 0]])
    cut = cut_shares(sentences, words, max_sentences=2, max_words=4)
    assert cut["sentences_cut"] == pytest.approx(1 / 4)  # the first document's third
    # kept: 4 + 2 of the first, 4 of the second: 10 of 22 words.
    assert cut["words_cut"] == pytest.approx(12 / 22)
    assert cut_shares(sentences, words, 3, 10) == {"sentences_cut": 0.0, "words_cut": 0.0}


@pytest.mark.slow  # 17 s: a documents run; make test keeps its 8-minute budget
def test_a_users_long_documents_keep_their_length_and_the_run_reports_the_cut(tmp_path, capsys):
    rng = np.random.default_rng(0)
    lines = []
    for i in range(40):
        label = ("court", "long")[i % 2]
        count = 20 + int(rng.integers(0, 20))
        lines.append(f"{label}\t{_document(count, 12, 'alpha' if i % 2 else 'beta')}")
    data = tmp_path / "documents.tsv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tokenizer = RECIPES["documents"].tokenizer([line.split("\t")[1] for line in lines])
    assert tokenizer.max_sentences > FORTUNES_SHAPE[0]  # longer than the old fixed 15
    assert tokenizer.max_words == 12
    out = tmp_path / "run"
    recipes.train("documents", str(out), epochs=1, data=str(data), max_sentences=10)
    record = json.loads((out / "run.json").read_text())
    assert (record["max_sentences"], record["max_words"]) == (10, 12)
    assert record["sentences_cut"] > 0.5 and record["words_cut"] == pytest.approx(
        record["sentences_cut"]
    )
    assert "of the training sentences and" in capsys.readouterr().out

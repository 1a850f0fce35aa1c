"""``needle_long``: the needle task's key sentence among 20 to 40 sentences."""

import json

import numpy as np
import pytest

from keras_adl import recipes
from keras_adl.recipes.documents.tasks import RECIPES


def _sentences(document):
    return len(document[:-1].split(". "))


def test_long_needle_documents_hold_20_to_40_sentences_and_fit_the_shape():
    task = RECIPES["needle_long"]
    documents = task.documents(None, 200)
    counts = [_sentences(d) for d in documents.train_docs + list(documents.test_docs)]
    assert min(counts) >= 20 and max(counts) <= 40 and max(counts) > 30
    keys = np.asarray(documents.test_keys)
    assert keys.max() >= 20  # key sentences past the short task's 10
    tokenizer = task.tokenizer(documents.train_docs)
    assert (tokenizer.max_sentences, tokenizer.max_words) == (40, 10)
    _, _, (development, _) = task.development(documents.train_docs, documents.train_labels)
    assert min(_sentences(d) for d in development) >= 20
    assert not set(development) & set(documents.train_docs)
    # The short needle task is unchanged by the long one.
    short = RECIPES["needle"].documents(None, 50)
    assert max(_sentences(d) for d in short.train_docs) <= 10


@pytest.mark.slow  # a short training run
def test_long_needle_trains_through_the_registry(tmp_path):
    out = tmp_path / "run"
    _, _, metrics = recipes.train(
        "needle_long", str(out), epochs=1, samples=64, batch_size=32, jit_compile=False
    )
    record = json.loads((out / "run.json").read_text())
    assert (record["max_sentences"], record["max_words"]) == (40, 10)
    assert 0 <= metrics["sentence_attention_hit_rate"] <= 1
    assert metrics["held_out_documents"] == 1000

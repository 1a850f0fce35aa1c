"""The documents task on a user's documents streamed from disk: splits by a keyed hash of each
text, the vocabulary and the padded shape from counts, batches that mix the classes of a file
sorted by label, and memory that stays flat when the corpus grows."""

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.recipes.documents import streaming
from keras_adl.recipes.documents.data import cut_shares, fitted_shape
from keras_adl.recipes.documents.spec import MAX_VOCABULARY
from keras_adl.recipes.documents.streaming import (
    TEST,
    LengthCounts,
    StreamedDocuments,
    split_bucket,
)
from keras_adl.text import DocumentTokenizer
from keras_adl.training.rundir import RecipeError
from tests.peak_memory import script_peak_kb

WORDS = ["été", "Ёлка", "东京", "naïve", "café", "😀", "Œuvre", "mot", "ball", "bread"]


def _documents(count, seed=0, words=WORDS):
    """``count`` distinct random documents of 1 to 6 sentences of 1 to 9 words."""
    rng = np.random.default_rng(seed)
    texts = []
    for i in range(count):
        sentences = [
            " ".join(rng.choice(words, size=int(rng.integers(1, 10))))
            for _ in range(int(rng.integers(1, 7)))
        ]
        texts.append(". ".join(sentences) + f" n{i}.")
    return texts


def _tsv(path, labelled):
    path.write_text("".join(f"{label}\t{text}\n" for label, text in labelled), encoding="utf-8")
    return str(path)


def _training_texts(streamed):
    """The training documents of a `StreamedDocuments`, read back from its class files."""
    texts = {}
    for label in streamed.class_counts:
        records = tf.data.TFRecordDataset(streamed._path(label)).as_numpy_iterator()
        texts[label] = [r.decode("utf-8") for r in records]
    return texts


def test_length_counts_give_the_shape_and_the_cut_of_the_full_arrays():
    texts = _documents(300, seed=3) + ["Un. Deux trois quatre cinq six sept huit neuf dix onze."]
    probe = DocumentTokenizer([], 1, 1)
    sentences, words = probe.lengths(texts)
    counts = LengthCounts(positions=8)
    split = probe.split(tf.constant(texts))
    per_sentence = split.row_lengths(axis=2)
    counts.add(
        split.row_lengths(axis=1).numpy(),
        tf.ragged.range(per_sentence.row_lengths()).flat_values.numpy(),
        per_sentence.flat_values.numpy(),
    )
    for percentile in (50, 90, 99):
        assert counts.fitted_shape(percentile) == fitted_shape(sentences, words, percentile)
    for shape in [(1, 1), (2, 5), (4, 9), (8, 3), (8, 20)]:
        expected = cut_shares(sentences, words, *shape)
        assert counts.cut_shares(*shape) == pytest.approx(expected)


def test_the_split_is_a_keyed_hash_of_the_text_and_never_trains_on_tested_documents(tmp_path):
    texts = _documents(400)
    labelled = [(("ham", "spam")[i % 2], t) for i, t in enumerate(texts)]
    labelled += labelled[:50]  # repeated documents: their copies share a split
    streamed = StreamedDocuments(_tsv(tmp_path / "d.tsv", labelled), 10**6)
    training = _training_texts(streamed)
    train = [t for texts in training.values() for t in texts]
    development = streamed.development[0]
    assert streamed.documents == 450
    assert len(train) == streamed.train_documents == sum(streamed.class_counts.values())
    assert not set(train) & set(streamed.test_docs) and not set(train) & set(development)
    assert not set(development) & set(streamed.test_docs)
    assert all(split_bucket(t) < TEST for t in streamed.test_docs)
    assert 50 <= len(set(streamed.test_docs)) <= 110  # a fifth of 400 distinct documents
    in_development = sum(t in set(development) for _, t in labelled)  # copies counted once
    assert len(train) + in_development + len(streamed.test_docs) == 450
    # labels travel with their documents
    label_of = dict((t, label) for label, t in labelled)
    assert all(label_of[t] == label for label, ts in training.items() for t in ts)
    names = streamed.class_names
    assert [names[i] for i in streamed.test_labels] == [label_of[t] for t in streamed.test_docs]
    again = StreamedDocuments(str(tmp_path / "d.tsv"), 10**6)  # a resumed run's split
    assert again.test_docs == streamed.test_docs and again.development[0] == development


def test_vocabulary_and_shape_are_those_of_the_training_documents(tmp_path):
    texts = _documents(300, seed=1)
    labelled = [(("a", "b", "c")[i % 3], t) for i, t in enumerate(texts)]
    streamed = StreamedDocuments(_tsv(tmp_path / "d.tsv", labelled), 10**6)
    train = [t for ts in _training_texts(streamed).values() for t in ts]
    tokenizer = streamed.tokenizer()
    sentences, words = DocumentTokenizer([], 1, 1).lengths(train)
    shape = fitted_shape(sentences, words)
    expected = DocumentTokenizer.build(train, *shape, max_size=MAX_VOCABULARY)
    assert tokenizer.vocabulary == expected.vocabulary  # Unicode kept as written, lower-cased
    assert (tokenizer.max_sentences, tokenizer.max_words) == shape
    assert "ёлка" in tokenizer.vocabulary and "œuvre" in tokenizer.vocabulary
    assert streamed.tokenizer(3, 4).max_sentences == 3


def test_batches_mix_the_classes_of_a_file_sorted_by_label(tmp_path, monkeypatch):
    monkeypatch.setattr(streaming, "SHUFFLE_DOCUMENTS", 1)  # the classes' draw alone mixes
    texts = _documents(600, seed=2)
    labelled = [("first", t) for t in texts[:400]] + [("second", t) for t in texts[400:]]
    streamed = StreamedDocuments(_tsv(tmp_path / "sorted.tsv", labelled), 10**6)
    dataset, steps = streamed.dataset(streamed.tokenizer(), batch_size=32, seed=0)
    assert steps == streamed.train_documents // 32
    first = [y.numpy() for _, y in dataset.take(3)]
    for labels in first:  # about a third of each batch from the second class, from the start
        assert 4 <= (labels == 1).sum() <= 20
    seen = np.concatenate([y.numpy() for _, y in dataset])
    assert len(seen) == steps * 32
    counts = streamed.class_counts
    assert np.bincount(seen).sum() <= counts["first"] + counts["second"]


def test_samples_caps_the_training_documents_and_the_test_split_is_kept(tmp_path):
    texts = _documents(500, seed=4)
    labelled = [(("x", "y")[i % 2], t) for i, t in enumerate(texts)]
    path = _tsv(tmp_path / "d.tsv", labelled)
    full, capped = StreamedDocuments(path, 10**6), StreamedDocuments(path, 40)
    assert capped.train_documents == 40
    assert capped.test_docs == full.test_docs  # every test document is still read


def test_two_documents_give_one_to_train_and_one_to_test(tmp_path):
    streamed = StreamedDocuments(_tsv(tmp_path / "d.tsv", [("a", "Un mot."), ("b", "Deux.")]), 10)
    assert streamed.train_documents == 1 and len(streamed.test_docs) == 1
    assert streamed.development is None


@pytest.mark.parametrize(
    "content, message",
    [
        (b"a\tok\nb\tfine\nc\t\xff\xfe bad\n", "d.tsv:3: not valid UTF-8"),
        (b"a\tone\na\ttwo\n", "at least 2 classes"),
        (b"a\tone\nb\x00\ttwo\n", "d.tsv:2: a NUL byte"),
        (b"\n\n", "no documents found"),
    ],
)
def test_bad_files_give_one_line_naming_the_file_and_line(tmp_path, content, message):
    path = tmp_path / "d.tsv"
    path.write_bytes(content)
    with pytest.raises(RecipeError, match=message) as error:
        StreamedDocuments(str(path), 10)
    assert "\n" not in str(error.value)


def test_a_document_tree_streams_with_its_classes(tmp_path):
    texts = _documents(60, seed=5)
    for i, text in enumerate(texts):
        directory = tmp_path / "tree" / ("ham", "spam")[i % 2]
        directory.mkdir(parents=True, exist_ok=True)
        (directory / f"{i:03d}.txt").write_text(text, encoding="utf-8")
    streamed = StreamedDocuments(str(tmp_path / "tree"), 10**6)
    assert streamed.class_names == ["ham", "spam"]
    training = _training_texts(streamed)
    assert set(training["ham"]) <= set(texts[0::2]) and set(training["spam"]) <= set(texts[1::2])


def _corpus_file(path, documents, seed=0):
    """``documents`` lines of 3 labels, each of 16 sentences drawn from a pool (about 1 KB)."""
    words = np.array([f"w{i}" for i in range(500)])
    rng = np.random.default_rng(seed)
    pool = [" ".join(rng.choice(words, size=12)) + "." for _ in range(2000)]
    with open(path, "w", encoding="utf-8") as f:
        for i, picks in enumerate(rng.integers(0, len(pool), size=(documents, 16))):
            f.write(f"{('alpha', 'beta', 'gamma')[i % 3]}\t{' '.join(pool[j] for j in picks)}\n")
    return str(path)


# What a run holds of its data: the pass, the tokenizer, one epoch of batches.
_DATA_PATH = """
from keras_adl.recipes.documents.streaming import StreamedDocuments
streamed = StreamedDocuments(sys.argv[1], 10**6)
dataset, steps = streamed.dataset(streamed.tokenizer(), 64)
assert sum(1 for _ in dataset) == steps
print("DOCUMENTS", streamed.train_documents, file=sys.stderr)
"""


@pytest.mark.slow  # two passes over 20 and 80 MB in fresh processes, ~40 s
def test_documents_peak_memory_barely_moves_when_the_corpus_grows_four_times(tmp_path):
    peaks = []
    for documents in (20_000, 80_000):
        path = _corpus_file(tmp_path / f"d{documents}.tsv", documents)
        peaks.append(script_peak_kb(_DATA_PATH, path))
    # held as Python strings, the 60,000 more documents (about 1 KB each) would add 60 MB
    assert peaks[1] - peaks[0] < 20_000, peaks

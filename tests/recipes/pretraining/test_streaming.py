"""pretrain_lm and pretrain_mlm on a corpus streamed from disk: splits by a seeded hash of each document, the
tokenizer's bounded sample, the pieces written once and cut into `lm_windows`' windows, and
memory that stays flat when the corpus grows."""

import json

import numpy as np
import pytest
import tensorflow as tf

from keras_adl import recipes
from keras_adl.data.pretraining import lm_windows
from keras_adl.data.text_corpora import LINES_PER_BLOCK
from keras_adl.data.text_streams import document_texts
from keras_adl.recipes.pretraining import data
from keras_adl.recipes.pretraining.streaming import HELD, StreamedCorpus, split_buckets
from tests.peak_memory import cli_peak_kb

TINY = dict(
    num_layers=1, model_dim=16, num_heads=2, intermediate_dim=32, vocab_size=120, jit_compile=False
)


def _corpus(path, count, seed=0, repeats=1):
    words = "cat dog bird fish tree rock river cloud stone leaf été Москва 東京".split()
    rng = np.random.default_rng(seed)
    paragraphs = [
        " ".join(rng.choice(words, 30)) + f" number {i}.\n\u00a0" + " ".join(rng.choice(words, 30))
        for i in range(count)
    ]
    path.write_text(("\n\n".join(paragraphs) + "\n\n") * repeats, encoding="utf-8")
    return str(path)


def test_documents_are_the_readers_paragraphs_and_lines():
    block = tf.constant("Un  été\u00a0chaud,\n  sur deux lignes.\n\n\nL'hiver.\n")
    texts = document_texts(block, tf.constant(True)).numpy().tolist()
    assert [t.decode() for t in texts] == ["Un été\u00a0chaud, sur deux lignes.", "L'hiver."]
    lines = document_texts(tf.constant("a  b\n\nc\n"), tf.constant(False)).numpy().tolist()
    assert lines == [b"a b", b"c"]


def test_splits_follow_the_text_and_the_pieces_are_lm_windows(tmp_path):
    path = _corpus(tmp_path / "corpus.txt", 400, repeats=2)  # every document twice
    streamed = StreamedCorpus(path, 10**6)
    assert streamed.documents == 800
    held, development = set(streamed.held_out), set(streamed.development)
    assert 0 < len(held) and 2 <= len(development) <= 500
    # a document's split is its text's: both copies land in it, never in training
    trained = [t.decode() for batch in streamed.training_texts() for t in batch.numpy()]
    assert not (held | development) & set(trained)
    assert len(trained) == streamed.train_documents == 800 - 2 * len(held | development)
    buckets = split_buckets(tf.constant(sorted(held))).numpy()
    assert (buckets < HELD).all()
    assert set(streamed.sample) == set(trained)  # distinct, in order, under the sample's cap

    tokenizer = data.learn_tokenizer(streamed.sample, 200)
    encoded = streamed.encode(tokenizer, str(tmp_path / "pieces.ids"))
    expected_inputs, expected_targets = lm_windows(data.token_lists(tokenizer, trained), 16)
    assert encoded.windows(16) == len(expected_inputs)
    ids = np.fromfile(str(tmp_path / "pieces.ids"), dtype="<i4")
    np.testing.assert_array_equal(encoded.counts, np.bincount(ids, minlength=tokenizer.size))
    # one epoch of windows, unshuffled, is lm_windows' windows
    windows = list(encoded.windows_dataset(16).take(len(expected_inputs)).as_numpy_iterator())
    np.testing.assert_array_equal(np.array(windows)[:, :-1], expected_inputs)
    np.testing.assert_array_equal(np.array(windows)[:, 1:], expected_targets)
    inputs, targets = next(iter(encoded.dataset(16, 8)))
    assert inputs.shape == targets.shape == (8, 16)
    np.testing.assert_array_equal(inputs[:, 1:], targets[:, :-1])


def test_a_small_corpus_still_holds_one_document_out_and_a_tiny_one_is_refused(tmp_path):
    streamed = StreamedCorpus(_corpus(tmp_path / "small.txt", 12), 10**6)
    assert len(streamed.held_out) >= 1 and not streamed.development
    assert streamed.train_documents == 12 - len(streamed.held_out)
    (tmp_path / "two.txt").write_text("one line\nanother\n")
    with pytest.raises(recipes.RecipeError, match="the corpus holds 2 documents, 1 to train"):
        StreamedCorpus(str(tmp_path / "two.txt"), 10**6)
    (tmp_path / "bad.txt").write_bytes(b"fine\n\xff\n")
    with pytest.raises(recipes.RecipeError, match=r"bad.txt:2: not valid UTF-8"):
        StreamedCorpus(str(tmp_path / "bad.txt"), 10**6)


def test_sentence_pairs_of_line_groups_count_the_in_memory_pairs(tmp_path):
    lines = [f"Ligne {i}, été\u00a0{i}. Москва {i} 東京 🙂" for i in range(400)]
    path = tmp_path / "lines.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    streamed = StreamedCorpus(str(path), 10**6, pairs=True)
    # the in-memory reader's documents: groups of LINES_PER_BLOCK lines, a sentence per line
    # and one more at each ". "
    assert streamed.documents == 400 // LINES_PER_BLOCK
    trained = [t.decode() for batch in streamed.training_texts() for t in batch.numpy()]
    assert len(trained) == streamed.train_documents
    in_memory = [d.replace("\u2028", "\n") for d in trained]
    assert streamed.train_pairs == data.mlm_examples(in_memory, "pairs")
    assert streamed.train_pairs == streamed.train_documents * (2 * LINES_PER_BLOCK - 1)
    held = streamed.held_out[0]
    assert held.count("\n") == LINES_PER_BLOCK - 1 and "\u2028" not in held
    assert data.sentences_of(held)[1].startswith("Москва")

    tokenizer = data.learn_tokenizer(streamed.sample, 300)
    batches = data.mlm_dataset(tokenizer, streamed.shuffled_documents(), 8, 32, 0, "pairs")
    features, labels, _ = next(iter(batches))
    assert features["token_ids"].shape == (8, 32)
    assert set(np.unique(labels["nsp"])) == {0, 1}
    documents = data.mlm_dataset(tokenizer, streamed.shuffled_documents(), 4, 32, 0, "documents")
    features, _, _ = next(iter(documents))
    assert features["token_ids"].shape == (4, 32) and "is_next" not in features


@pytest.mark.slow  # 10 s; the fast suite trains pretrain_lm --data in test_development_split
def test_pretrain_lm_trains_on_a_streamed_corpus(tmp_path):
    path = _corpus(tmp_path / "corpus.txt", 300)
    out = tmp_path / "run"
    recipes.train(
        "pretrain_lm", str(out), epochs=1, batch_size=4, data=path, steps=3, seed=0, **TINY
    )
    with open(out / "run.json") as f:
        record = json.load(f)
    assert record["streamed"] and record["status"] == "finished"
    assert record["documents"] == 300 and record["train_windows"] > 0
    figures = record["metrics"]
    assert np.isfinite(figures["held_out_perplexity"]) and figures["unigram_perplexity"] > 1


@pytest.mark.slow  # 10 s
@pytest.mark.parametrize("segments", ["documents", "pairs"])
def test_pretrain_mlm_trains_on_a_streamed_corpus(tmp_path, segments):
    path = _corpus(tmp_path / "corpus.txt", 300)
    out = tmp_path / "run"
    recipes.train(
        "pretrain_mlm",
        str(out),
        epochs=1,
        batch_size=4,
        data=path,
        steps=3,
        seed=0,
        segments=segments,
        **TINY,
    )
    with open(out / "run.json") as f:
        record = json.load(f)
    assert record["streamed"] and record["status"] == "finished"
    # each paragraph: two sentences, one pair
    assert record["examples"] == record["train_documents"]
    assert record["metrics"]["held_out_masked_accuracy"] >= 0


@pytest.mark.slow  # two pretrain_lm runs in fresh processes, ~1.5 min
def test_pretrain_lm_peak_memory_barely_moves_when_the_corpus_grows_four_times(tmp_path):
    peaks, records = [], []
    for repeats in (4, 16):  # 0.7 M and 2.9 M words
        path = _corpus(tmp_path / f"corpus{repeats}.txt", 3000, seed=1, repeats=repeats)
        out = tmp_path / f"run{repeats}"
        options = ["--epochs", 1, "--steps", 20, "--num-layers", 1, "--out", out]
        peaks.append(cli_peak_kb("train", "pretrain_lm", "--data", path, *options))
        with open(out / "run.json") as f:
            records.append(json.load(f))
    assert records[1]["train_pieces"] > 3.9 * records[0]["train_pieces"]
    # Held in memory (documents, their pieces as Python lists, the windows), the larger corpus
    # would add an estimated 110 MB; the peaks of two runs of one size differ by up to about
    # 50 MB here.
    assert peaks[1] - peaks[0] < 80_000, peaks


@pytest.mark.slow  # two one-trial searches, ~35 s
@pytest.mark.parametrize("task", ["pretrain_lm", "pretrain_mlm"])
def test_tune_streams_the_corpus_as_train_does(tmp_path, monkeypatch, capsys, task):
    from keras_adl.cli import main

    def in_memory(*args):
        raise AssertionError("tune read --data into memory")

    monkeypatch.setattr(data, "corpus", in_memory)
    path = _corpus(tmp_path / "corpus.txt", 400)
    argv = ["tune", task, "--data", path, "--trials", "1", "--epochs", "1", "--steps", "3"]
    assert main([*argv, "--vocab-size", "120", "--out", str(tmp_path / "tune")]) == 0
    assert '"best_hyperparameters"' in capsys.readouterr().out


def test_a_corpus_cut_by_samples_says_so(tmp_path, capsys):
    path = _corpus(tmp_path / "corpus.txt", 300)
    assert StreamedCorpus(path, 10**6).documents == 300
    assert "--samples" not in capsys.readouterr().out
    assert StreamedCorpus(path, 120).documents == 120
    assert "read the first 120 documents (--samples)" in capsys.readouterr().out

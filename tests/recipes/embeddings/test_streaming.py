"""word2vec on a corpus streamed from disk: the recipe's vectors on a small corpus against
gensim's, and memory that stays flat when the corpus grows."""

import json

import numpy as np
import pytest

from keras_adl.data.text_corpora import topic_corpus
from keras_adl.embeddings import Embeddings
from keras_adl.recipes.embeddings.evaluate import word_embeddings
from keras_adl.recipes.embeddings.tasks import RECIPES
from tests.peak_memory import cli_peak_kb

WORD2VEC = RECIPES["word2vec"]
TOPICS = 6


def _topic_agreement(embeddings, vocabulary_size):
    """The share of words whose nearest neighbour belongs to their topic (`topic_corpus`'s
    groups of the vocabulary)."""
    groups = np.array_split(np.arange(vocabulary_size), TOPICS)
    topic = {f"w{i}": t for t, group in enumerate(groups) for i in group}
    hits = [
        topic[embeddings.most_similar(word, k=1)[0][0]] == topic[word]
        for word in embeddings.words
        if word in topic
    ]
    return float(np.mean(hits))


@pytest.mark.slow  # ours and gensim on the same small corpus, ~30 s
def test_small_corpus_neighbours_share_their_topic_as_gensims_do(tmp_path):
    gensim = pytest.importorskip("gensim", reason="gensim comes with the bench extra")
    size = 60
    path = tmp_path / "topics.txt"
    path.write_text(topic_corpus(size, 4000, topics=TOPICS, seed=1))
    corpus, vocabulary, _ = WORD2VEC.corpus(str(path), 10**6, 5)
    assert len(vocabulary.words) == size
    settings = WORD2VEC.settings("skipgram", {"dim": 32})
    epochs, batch = 3, 256
    steps = WORD2VEC.steps_per_epoch("skipgram", vocabulary, settings, batch)
    model = WORD2VEC.build_model(
        "skipgram", vocabulary.size, batch_size=batch, total_steps=steps * epochs, **settings
    )
    data = WORD2VEC.dataset("skipgram", corpus, vocabulary, settings, batch, seed=0)
    model.fit(data, epochs=epochs, steps_per_epoch=steps, verbose=0, shuffle=False)
    ours = _topic_agreement(word_embeddings(model, vocabulary), size)

    sentences = [line.split() for line in path.read_text().splitlines()]
    reference = gensim.models.Word2Vec(
        sentences,
        vector_size=32,
        window=settings["window"],
        negative=settings["negatives"],
        sample=settings["subsample"],
        min_count=5,
        sg=1,
        epochs=epochs,
        workers=1,
        seed=0,
    )
    words = list(reference.wv.index_to_key)
    theirs = _topic_agreement(Embeddings(words, [reference.wv[w] for w in words]), size)
    assert ours >= theirs and ours >= 0.9, (ours, theirs)


def _peak_kb(tmp_path, corpus, name):
    out = tmp_path / name
    peak = cli_peak_kb(
        "train", "word2vec", "--data", corpus, "--epochs", 1, "--min-count", 1, "--out", out
    )
    with open(out / "run.json") as f:
        return peak, json.load(f)


@pytest.mark.slow  # two word2vec runs in fresh processes, ~1 min
def test_peak_memory_barely_moves_when_the_corpus_grows_four_times(tmp_path):
    pytest.importorskip("gensim", reason="the analogy files come with the bench extra")
    base = topic_corpus(20_000, 20_000, topics=40, seed=0)  # about 180 k words
    small, large = tmp_path / "small.txt", tmp_path / "large.txt"
    small.write_text(base * 2)
    large.write_text(base * 8)
    small_peak, small_record = _peak_kb(tmp_path, small, "small")
    large_peak, large_record = _peak_kb(tmp_path, large, "large")
    assert large_record["corpus_words"] == 4 * small_record["corpus_words"]
    assert large_record["vocabulary"] == small_record["vocabulary"]
    # the corpus held as Python words would add about 100 bytes a word: here 100 MB
    assert large_peak - small_peak < 40_000, (small_peak, large_peak)

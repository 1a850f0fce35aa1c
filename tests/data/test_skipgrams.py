"""word2vec examples (`keras_adl.data.skipgrams`): negatives never equal their context,
subsampling keeps words at the word2vec.c rate, windows stay inside documents and within their
drawn size, and the batches have fixed shapes."""

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.conventions import NUM_SPECIAL_TOKENS
from keras_adl.data.skipgrams import (
    WordVocabulary,
    alias_table,
    keep_probabilities,
    negative_distribution,
    sample_negatives,
    skipgram_dataset,
    skipgram_stream,
    window_pairs,
)
from keras_adl.data.text_streams import TextStream, count_words


def _zipf_documents(count=2000, seed=0):
    rng = np.random.default_rng(seed)
    return [
        [f"w{int(x)}" for x in rng.zipf(1.3, size=rng.integers(3, 30)) if x < 300]
        for _ in range(count)
    ]


def test_negatives_never_equal_their_context_and_follow_the_unigram_power_law():
    counts = np.array([5000, 2000, 500, 100, 10, 1])  # a very frequent first word
    probabilities = negative_distribution(counts)
    rng = np.random.default_rng(0)
    contexts = rng.choice(len(counts), size=100_000, p=probabilities) + NUM_SPECIAL_TOKENS
    drawn = sample_negatives(contexts, 5, probabilities, seed=[1, 2]).numpy()
    assert drawn.shape == (100_000, 5)
    assert not (drawn == contexts[:, None]).any()  # 5·10⁵ negatives, none equal the positive
    assert drawn.min() >= NUM_SPECIAL_TOKENS and drawn.max() < len(counts) + NUM_SPECIAL_TOKENS
    # Given the context c, negatives follow p(w) / (1 - p(c)) over w ≠ c.
    for c in (0, 3):
        rows = drawn[contexts == c + NUM_SPECIAL_TOKENS].ravel() - NUM_SPECIAL_TOKENS
        expected = np.where(np.arange(len(counts)) == c, 0.0, probabilities)
        expected /= expected.sum()
        observed = np.bincount(rows, minlength=len(counts)) / len(rows)
        np.testing.assert_allclose(observed, expected, atol=0.01)
    assert probabilities[0] / probabilities[1] == pytest.approx(2.5**0.75)


def test_subsampling_keeps_each_frequency_bucket_at_the_formula_rate():
    documents = _zipf_documents(6000)
    vocabulary = WordVocabulary.build(documents, min_count=1)
    t = 1e-3
    keep = keep_probabilities(vocabulary.counts, t)
    ids = np.concatenate([vocabulary.encode(d) for d in documents])
    total = np.zeros(vocabulary.size)
    np.add.at(total, ids, 1)
    kept = np.zeros(vocabulary.size)
    for step in range(5):
        _, _, _, kept_ids = window_pairs(ids, np.zeros_like(ids), 2, keep, seed=[step, 7])
        np.add.at(kept, kept_ids.numpy(), 1)
    frequency = vocabulary.counts / vocabulary.counts.sum()
    buckets = np.digitize(frequency, [1e-3, 3e-3, 1e-2, 3e-2])
    word_total = total[NUM_SPECIAL_TOKENS:] * 5
    word_kept = kept[NUM_SPECIAL_TOKENS:]
    checked = 0
    for bucket in np.unique(buckets):
        inside = buckets == bucket
        measured = word_kept[inside].sum() / word_total[inside].sum()
        expected = (keep[inside] * word_total[inside]).sum() / word_total[inside].sum()
        assert abs(measured - expected) < 0.01, (bucket, measured, expected)
        checked += 1
    assert checked >= 4 and keep.min() < 0.2  # frequent words really are subsampled


def test_formula_is_word2vec_c_and_t_zero_keeps_everything():
    counts = np.array([900, 90, 10])
    f = counts / counts.sum()
    np.testing.assert_allclose(
        keep_probabilities(counts, 1e-2), np.minimum(1, np.sqrt(1e-2 / f) + 1e-2 / f)
    )
    assert keep_probabilities(counts, 0).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="`t` must be >= 0; received -1"):
        keep_probabilities(counts, -1)


def test_windows_stay_inside_documents_and_within_the_drawn_size():
    # Every token unique, so a pair's positions are known; no subsampling.
    lengths = [1, 7, 3, 12, 2, 9]
    positions, documents = [], []
    for number, length in enumerate(lengths):
        positions += list(range(length))
        documents += [number] * length
    ids = np.arange(len(positions)) + NUM_SPECIAL_TOKENS
    window = 3
    distances = []
    for step in range(40):
        centres, contexts, _, _ = window_pairs(
            ids, np.array(documents), window, np.ones(len(ids)), seed=[step, 0]
        )
        c = centres.numpy() - NUM_SPECIAL_TOKENS
        x = contexts.numpy() - NUM_SPECIAL_TOKENS
        assert (np.array(documents)[c] == np.array(documents)[x]).all()  # never across
        gap = np.abs(np.array(positions)[c] - np.array(positions)[x])
        assert gap.min() >= 1 and gap.max() <= window
        distances.append(gap)
    gaps = np.concatenate(distances)
    # Dynamic window: a centre reaches distance d with probability (W - d + 1) / W, and the
    # words at distance d inside its document are those it can reach.
    expected = np.zeros(window)
    for length in lengths:
        for p in range(length):
            for d in range(1, window + 1):
                inside = (p - d >= 0) + (p + d < length)
                expected[d - 1] += inside * (window - d + 1) / window
    share = np.bincount(gaps, minlength=window + 1)[1:] / len(gaps)
    np.testing.assert_allclose(share, expected / expected.sum(), atol=0.02)


def test_dataset_batches_have_fixed_shapes_and_are_reproducible():
    documents = _zipf_documents(500)
    vocabulary = WordVocabulary.build(documents, min_count=2)
    dataset = skipgram_dataset(documents, vocabulary, 64, window=2, negatives=3, chunk_tokens=500)
    batches = list(dataset.take(30))
    for inputs, labels in batches:
        assert inputs["centre"].shape == (64,) and inputs["contexts"].shape == (64, 4)
        assert labels.numpy().tolist() == [[1.0, 0.0, 0.0, 0.0]] * 64
        contexts = inputs["contexts"].numpy()
        assert not (contexts[:, 1:] == contexts[:, :1]).any()
    again = list(skipgram_dataset(documents, vocabulary, 64, 2, 3, chunk_tokens=500).take(30))
    for (a, _), (b, _) in zip(batches, again):
        np.testing.assert_array_equal(a["contexts"], b["contexts"])
    cbow = skipgram_dataset(documents, vocabulary, 64, window=2, negatives=3, cbow=True)
    inputs, labels = next(iter(cbow))
    assert inputs["contexts"].shape == (64, 4) and inputs["targets"].shape == (64, 4)
    grid = inputs["contexts"].numpy()
    assert (grid > 0).any(axis=1).all()  # every centre has a context
    assert not (inputs["targets"].numpy()[:, 1:] == inputs["targets"].numpy()[:, :1]).any()


def test_vocabulary_counts_min_count_and_errors():
    vocabulary = WordVocabulary.build([["b", "a", "b"], ["c", "a", "b", "é"]], min_count=2)
    assert vocabulary.words == ["b", "a"] and vocabulary.counts.tolist() == [3, 2]
    assert vocabulary.encode(["a", "c", "b"]) == [5, 4]  # rare words are dropped
    restored = WordVocabulary.from_config(vocabulary.to_config())
    assert restored.words == vocabulary.words
    with pytest.raises(ValueError, match="at least 2 words"):
        WordVocabulary(["a"], [3])
    with pytest.raises(ValueError, match="must be positive; received 0, 5 and 8"):
        skipgram_dataset([["a", "b"]], WordVocabulary(["a", "b"], [1, 1]), 8, window=0)
    with pytest.raises(ValueError, match="no document holds a word of the vocabulary"):
        skipgram_dataset([["x"]], WordVocabulary(["a", "b"], [1, 1]), 8)


def test_runs_inside_a_compiled_function():
    @tf.function(jit_compile=False)
    def draw(contexts):
        return sample_negatives(contexts, 2, negative_distribution([3, 2, 1]), seed=[0, 1])

    out = draw(tf.constant([4, 5, 6])).numpy()
    assert out.shape == (3, 2) and not (out == np.array([[4], [5], [6]])).any()


def test_chunks_smaller_than_a_batch_still_fill_batches():
    documents = _zipf_documents(300)
    vocabulary = WordVocabulary.build(documents, min_count=1)
    # 40-token chunks give far fewer than 512 pairs each: the remainders carry over.
    dataset = skipgram_dataset(documents, vocabulary, 512, window=2, negatives=2, chunk_tokens=40)
    inputs, _ = next(iter(dataset))
    assert inputs["centre"].shape == (512,)
    with pytest.raises(ValueError, match="no document holds two words of the vocabulary"):
        skipgram_dataset([["a"], ["b"]], WordVocabulary(["a", "b"], [1, 1]), 8)


def test_alias_table_represents_the_distribution_exactly():
    probabilities = negative_distribution(np.random.default_rng(3).integers(1, 10_000, 500))
    accept, alias = alias_table(probabilities)
    # Cell j gives j with probability accept[j] / V and alias[j] with (1 - accept[j]) / V.
    implied = accept.copy()
    np.add.at(implied, alias, 1.0 - accept)
    np.testing.assert_allclose(implied / len(probabilities), probabilities, rtol=1e-9)
    assert ((accept >= 0) & (accept <= 1 + 1e-12)).all()


def test_a_streamed_corpus_gives_pairs_inside_its_documents(tmp_path):
    # each line draws its words from its own group: a pair across two lines would mix groups
    rng = np.random.default_rng(0)
    groups = [[f"g{g}w{i}" for i in range(6)] for g in range(4)]
    lines = [" ".join(rng.choice(groups[i % 4], 8)) for i in range(400)]
    (tmp_path / "lines.txt").write_text("\n".join(lines) + "\n")
    stream = TextStream(str(tmp_path / "lines.txt"), block_bytes=256)
    counted = count_words(stream, encode_to=str(tmp_path / "corpus.ids"))
    vocabulary = WordVocabulary(
        sorted(counted.counts), [counted.counts[w] for w in sorted(counted.counts)]
    )
    group_of = {vocabulary.id(w): g for g, words in enumerate(groups) for w in words}
    for source in (stream, counted.encoded):
        dataset = skipgram_stream(source, vocabulary, 128, window=3, negatives=2, t=0)
        for inputs, _ in dataset.take(20):
            centre, contexts = inputs["centre"].numpy(), inputs["contexts"].numpy()
            assert all(group_of[c] == group_of[x] for c, x in zip(centre, contexts[:, 0]))
            assert not (contexts[:, 1:] == contexts[:, :1]).any()  # negatives ≠ the positive

"""word2vec: the skip-gram / CBOW model's math, gradients and saving, the `Embeddings` queries
and benchmark readers, and a small model recovering planted topics."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.data.skipgrams import WordVocabulary, skipgram_dataset
from keras_adl.embeddings import (
    Embeddings,
    evaluate_analogies,
    evaluate_word_pairs,
    gensim_test_file,
)
from keras_adl.models.word2vec import (
    skipgram_negative_sampling,
    word2vec_optimizer,
    word_vectors,
)


def _tables(model):
    return (
        model.get_layer("input_embedding").embeddings.numpy(),
        model.get_layer("output_embedding").embeddings.numpy(),
    )


def _randomize(model, seed=0):
    rng = np.random.default_rng(seed)
    for layer in ("input_embedding", "output_embedding"):
        table = model.get_layer(layer).embeddings
        table.assign(rng.normal(size=table.shape).astype("float32"))


def test_skipgram_logits_are_input_dot_output_vectors_and_gradients_reach_both_tables():
    model = skipgram_negative_sampling(20, dim=6, negatives=3)
    _randomize(model)
    centre = np.array([4, 9])
    contexts = np.array([[5, 6, 7, 8], [10, 4, 19, 11]])
    logits = model({"centre": centre, "contexts": contexts}).numpy()
    inputs, outputs = _tables(model)
    expected = np.einsum("bd,bkd->bk", inputs[centre], outputs[contexts])
    np.testing.assert_allclose(logits, expected, rtol=1e-5)
    with tf.GradientTape() as tape:
        loss = keras.losses.BinaryCrossentropy(from_logits=True)(
            np.array([[1.0, 0, 0, 0]] * 2), model({"centre": centre, "contexts": contexts})
        )
    for gradient in tape.gradient(loss, model.trainable_variables):
        assert float(tf.reduce_sum(tf.abs(tf.convert_to_tensor(gradient)))) > 0


def test_cbow_scores_the_mean_of_the_window_and_ignores_padding():
    model = skipgram_negative_sampling(20, dim=6, negatives=2, window=2, cbow=True)
    _randomize(model, 1)
    contexts = np.array([[5, 6, 0, 0], [7, 0, 0, 0]])
    targets = np.array([[4, 8, 9], [10, 11, 12]])
    logits = model({"contexts": contexts, "targets": targets}).numpy()
    inputs, outputs = _tables(model)
    hidden = np.stack([inputs[[5, 6]].mean(0), inputs[7]])
    np.testing.assert_allclose(logits, np.einsum("bd,bkd->bk", hidden, outputs[targets]), rtol=1e-5)


def test_initialisation_as_word2vec_c_and_saving_round_trip(tmp_path):
    model = skipgram_negative_sampling(30, dim=10, negatives=2)
    inputs, outputs = _tables(model)
    assert np.abs(inputs).max() <= 0.05 and inputs.std() > 0 and not outputs.any()
    _randomize(model)
    path = str(tmp_path / "w2v.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    batch = {"centre": np.array([4, 5]), "contexts": np.array([[6, 7, 8], [9, 10, 11]])}
    np.testing.assert_allclose(restored(batch), model(batch), rtol=1e-6)
    vectors = word_vectors(model)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    with pytest.raises(ValueError, match="`dim` must be a positive integer; received 0"):
        skipgram_negative_sampling(30, dim=0)


def _topic_corpus(seed=0, topics=4, members=6, documents=1500):
    """Sentences that each draw words from one topic and a few shared fillers."""
    rng = np.random.default_rng(seed)
    fillers = [f"filler{i}" for i in range(8)]
    groups = [[f"t{t}w{m}" for m in range(members)] for t in range(topics)]
    corpus = []
    for _ in range(documents):
        group = groups[rng.integers(topics)]
        words = list(rng.choice(group, 6)) + list(rng.choice(fillers, 3))
        rng.shuffle(words)
        corpus.append(words)
    return corpus, groups


@pytest.mark.parametrize("optimizer", [("sgd", 0.05), ("adam", 0.02)], ids=["word2vec_sgd", "adam"])
def test_learns_planted_topics(optimizer):
    keras.utils.set_random_seed(0)
    corpus, groups = _topic_corpus()
    vocabulary = WordVocabulary.build(corpus, min_count=1)
    model = skipgram_negative_sampling(vocabulary.size, dim=16, negatives=4, window=3)
    name, rate = optimizer
    model.compile(
        word2vec_optimizer(name, rate, examples_per_step=256 * 5, total_steps=150),
        keras.losses.BinaryCrossentropy(from_logits=True),
        jit_compile=True,
        steps_per_execution=10,
    )
    dataset = skipgram_dataset(corpus, vocabulary, 256, window=3, negatives=4, t=0, seed=0)
    model.fit(dataset, steps_per_epoch=150, epochs=1, verbose=0, shuffle=False)
    vectors = word_vectors(model)[4:]
    embeddings = Embeddings(vocabulary.words, vectors)
    hits = []
    for group in groups:
        for word in group:
            neighbours = [w for w, _ in embeddings.most_similar(word, k=len(group) - 1)]
            hits.append(np.mean([n in group for n in neighbours]))
    assert np.mean(hits) > 0.9  # untrained vectors: about 6 / 31 ≈ 0.2


def test_embeddings_queries_exclude_the_question_and_restrict_the_vocabulary():
    words = ["a", "b", "c", "d", "e"]
    vectors = [[1, 0], [0.9, 0.1], [0, 1], [0.1, 0.9], [-1, 0]]
    e = Embeddings(words, vectors)
    assert [w for w, _ in e.most_similar("a", k=2)] == ["b", "d"]
    assert [w for w, _ in e.most_similar("a", k=2, restrict_vocab=3)] == ["b", "c"]
    assert e.analogy("a", "b", "c")[0][0] == "d"  # a, b and c themselves are excluded
    assert e.similarity("a", "e") == pytest.approx(-1.0, abs=1e-6)
    with pytest.raises(KeyError, match="'zz' is not in the vocabulary"):
        e.most_similar("zz")
    with pytest.raises(ValueError, match=r"must be \[len\(words\), dim\] = \[5, D\]"):
        Embeddings(words, np.zeros((4, 2)))
    zero = Embeddings(["x", "y"], np.zeros((2, 3)))  # epsilon: zeros stay finite
    assert np.isfinite(zero.vectors).all()


def test_analogy_and_word_pair_files_are_read_in_the_standard_formats(tmp_path):
    words = ["man", "king", "woman", "queen", "paris", "france", "rome", "italy"]
    vectors = [
        [1, 0, 0, 0],
        [1, 1, 0, 0],
        [0, 0, 1, 0],
        [0, 1, 1, 0],
        [0, 0, 0, 1],
        [0.6, 0, 0, 1],
        [0, 0.1, 0, 1.1],
        [0.6, 0.1, 0, 1.1],
    ]
    e = Embeddings(words, vectors)
    questions = tmp_path / "questions.txt"
    questions.write_text(
        ": royal\nMan King Woman Queen\nman king woman paris\n: capitals\n"
        "paris france rome italy\nparis france berlin germany\n"
    )
    result = evaluate_analogies(e, str(questions))
    assert (result["correct"], result["asked"], result["unknown"]) == (2, 3, 1)
    assert result["sections"]["royal"]["accuracy"] == 0.5
    assert result["sections"]["capitals"] == {
        "correct": 1,
        "asked": 1,
        "unknown": 1,
        "accuracy": 1.0,
    }
    (tmp_path / "bad.txt").write_text(": s\na b c\n")
    with pytest.raises(ValueError, match=r"bad.txt:2: expected ': section' or 4 words"):
        evaluate_analogies(e, str(tmp_path / "bad.txt"))
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(
        "# Word 1\tWord 2\tHuman (mean)\nking\tqueen\t8\nman\tking\t6\nparis\trome\t5\n"
        "man\tparis\t1\nking\tzebra\t3\n"
    )
    scores = evaluate_word_pairs(e, str(pairs))
    assert scores["pairs"] == 4 and scores["unknown"] == 1
    from scipy import stats

    model = [
        e.similarity(*p)
        for p in [("king", "queen"), ("man", "king"), ("paris", "rome"), ("man", "paris")]
    ]
    assert scores["spearman"] == pytest.approx(stats.spearmanr([8, 6, 5, 1], model).statistic)
    (tmp_path / "bad.tsv").write_text("a\tb\tlots\n")
    with pytest.raises(ValueError, match=r"bad.tsv:1: expected 'word1<TAB>word2<TAB>score'"):
        evaluate_word_pairs(e, str(tmp_path / "bad.tsv"))


def test_the_standard_files_come_from_the_installed_gensim():
    pytest.importorskip("gensim", reason="gensim comes with the bench extra")
    for name in ("questions-words.txt", "wordsim353.tsv", "simlex999.txt"):
        assert os.path.isfile(gensim_test_file(name))
    analogies = evaluate_analogies(
        Embeddings(["athens", "greece"], np.eye(2)), gensim_test_file("questions-words.txt")
    )
    assert (
        analogies["asked"] == 0
        and analogies["unknown"] == 19544
        and len(analogies["sections"]) == 14
    )
    with pytest.raises(FileNotFoundError, match="nothing.txt not found in the installed gensim"):
        gensim_test_file("nothing.txt")


def test_sgd_step_is_word2vec_c_update_and_moves_only_the_rows_read():
    """One example, k = 2: word2vec.c moves the output vector of each candidate by
    alpha (label - sigmoid(logit)) h and the centre's vector by the sum of alpha (label -
    sigmoid) times the old output vectors; no other row moves."""
    model = skipgram_negative_sampling(12, dim=4, negatives=2)
    _randomize(model, 2)
    alpha = 0.025
    model.compile(
        word2vec_optimizer("sgd", alpha, examples_per_step=1 * 3),
        keras.losses.BinaryCrossentropy(from_logits=True),
        jit_compile=True,
    )
    inputs, outputs = _tables(model)
    centre, candidates, labels = 5, np.array([7, 9, 10]), np.array([1.0, 0.0, 0.0])
    model.train_on_batch({"centre": np.array([centre]), "contexts": candidates[None]}, labels[None])
    new_inputs, new_outputs = _tables(model)
    logits = outputs[candidates] @ inputs[centre]
    g = alpha * (labels - 1 / (1 + np.exp(-logits)))  # [3]
    expected_outputs = outputs.copy()
    expected_outputs[candidates] += g[:, None] * inputs[centre]
    expected_inputs = inputs.copy()
    expected_inputs[centre] += g @ outputs[candidates]
    np.testing.assert_allclose(new_outputs, expected_outputs, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(new_inputs, expected_inputs, rtol=1e-4, atol=1e-6)


def test_sgd_learning_rate_decays_linearly_and_bad_names_are_refused():
    optimizer = word2vec_optimizer("sgd", 0.02, examples_per_step=10, total_steps=100)
    schedule = optimizer._learning_rate
    np.testing.assert_allclose(float(schedule(0)), 0.2, rtol=1e-6)
    np.testing.assert_allclose(float(schedule(50)), 0.2 * (1 + 1e-4) / 2, rtol=1e-5)
    np.testing.assert_allclose(float(schedule(100)), 0.2 * 1e-4, rtol=1e-5)
    assert isinstance(word2vec_optimizer("adam", 1e-3), keras.optimizers.Adam)
    with pytest.raises(ValueError, match="`name` must be 'sgd' or 'adam'; received 'rmsprop'"):
        word2vec_optimizer("rmsprop")
    with pytest.raises(ValueError, match="`learning_rate` must be positive; received 0"):
        word2vec_optimizer("sgd", 0)


def test_analogies_scored_at_once_answer_as_each_question_alone(tmp_path):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(300)]
    embeddings = Embeddings(words, rng.normal(size=(300, 8)))
    questions = rng.integers(0, 300, size=(600, 4))
    path = tmp_path / "questions.txt"
    lines = [": first"] + [" ".join(words[i] for i in q) for q in questions[:300]]
    lines += [": second"] + [" ".join(words[i] for i in q) for q in questions[300:]]
    path.write_text("\n".join(lines) + "\n")
    for restrict in (300, 120):
        figures = evaluate_analogies(embeddings, str(path), restrict_vocab=restrict)
        alone = [
            embeddings.analogy(*(words[i] for i in q[:3]), k=1, restrict_vocab=restrict)
            for q in questions
            if (q < restrict).all()
        ]
        answers = [words[i] for q in questions if (q < restrict).all() for i in q[3:]]
        correct = sum(bool(g) and g[0][0] == a for g, a in zip(alone, answers))
        assert figures["asked"] == len(alone) > 20 and figures["correct"] == correct

"""The word2vec recipe on a user's own corpus: stable on a small vocabulary, whole compiled
calls per epoch, the picture's words, ``--learning-rate`` as SGD's per-example rate."""

import math

import keras
import numpy as np
import pytest

from keras_adl.data.text_corpora import text_documents, tokenize_documents, topic_corpus
from keras_adl.embeddings import Embeddings
from keras_adl.models.word2vec import repeated_row_scale
from keras_adl.recipes.embeddings import (
    BATCH_SIZE,
    PICTURE_WORDS,
    RECIPE,
    STEPS_PER_EXECUTION,
    picture_words,
)


def _losses(tokenized, vocabulary, max_row_updates, steps, epochs=3):
    """The mean training loss of each epoch of ``steps`` steps."""
    settings = dict(RECIPE.settings("word2vec", "skipgram"), max_row_updates=max_row_updates)
    keras.utils.set_random_seed(0)
    model = RECIPE.build_model(
        "word2vec", "skipgram", vocabulary.size, total_steps=steps * epochs, **settings
    )
    model.steps_per_execution = 1
    losses = []

    class Record(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            losses.append(float(logs["loss"]))

    data = RECIPE.dataset(tokenized, vocabulary, settings, BATCH_SIZE)
    model.fit(
        data, epochs=epochs, steps_per_epoch=steps, verbose=0, shuffle=False, callbacks=[Record()]
    )
    return losses


def test_a_small_vocabulary_trains_to_finite_losses_with_the_row_cap():
    from keras_adl.data.skipgrams import WordVocabulary

    tokenized = tokenize_documents(text_documents(topic_corpus(50, 3000)))
    vocabulary = WordVocabulary.build(tokenized, min_count=5)
    assert len(vocabulary.words) == 50
    cap = RECIPE.settings("word2vec", "skipgram")["max_row_updates"]
    capped = _losses(tokenized, vocabulary, cap, 10)
    assert all(map(math.isfinite, capped))
    assert capped[-1] < 0.6 < capped[0]  # it learns (log 2 = 0.693 at the start)
    # Without the cap the same run explodes: every row is read hundreds of times per batch.
    uncapped = _losses(tokenized, vocabulary, None, 10)
    assert not math.isfinite(uncapped[-1]) or uncapped[-1] > 100


def test_repeated_row_scale_caps_each_rows_total_update():
    ids = np.array([[3, 3, 3], [3, 5, 3]])
    factors = keras.ops.convert_to_numpy(repeated_row_scale(ids, 8, 2))
    # Row 3 occurs 5 times: each occurrence counts 2/5, so the row moves as 2 occurrences.
    np.testing.assert_allclose(factors, [[0.4, 0.4, 0.4], [0.4, 1.0, 0.4]])
    np.testing.assert_allclose(factors[ids == 3].sum(), 2.0)


def test_the_row_cap_leaves_the_forward_pass_and_scales_the_gradient():
    from keras_adl.models.word2vec import skipgram_negative_sampling

    x = {"centre": np.array([4, 4, 4, 5]), "contexts": np.array([[6, 7, 8]] * 4)}
    plain = skipgram_negative_sampling(20, dim=4, negatives=2)
    capped = skipgram_negative_sampling(20, dim=4, negatives=2, max_row_updates=1)
    capped.set_weights([np.random.default_rng(0).normal(size=w.shape) for w in plain.weights])
    plain.set_weights(capped.get_weights())
    np.testing.assert_allclose(plain(x), capped(x), rtol=1e-6)
    import tensorflow as tf

    def gradient(model):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        grad = tape.gradient(loss, model.get_layer("input_embedding").embeddings)
        return tf.convert_to_tensor(grad).numpy()

    # Row 4 is read 3 times: its gradient is the mean of the three, not their sum.
    np.testing.assert_allclose(gradient(capped)[4], gradient(plain)[4] / 3, rtol=1e-5)
    np.testing.assert_allclose(gradient(capped)[5], gradient(plain)[5], rtol=1e-6)


def test_an_epoch_is_whole_compiled_calls():
    from keras_adl.data.skipgrams import WordVocabulary

    settings = RECIPE.settings("word2vec", "skipgram")
    tokenized = tokenize_documents(text_documents(topic_corpus(500, 20_000)))
    vocabulary = WordVocabulary.build(tokenized, min_count=5)
    steps = [RECIPE.steps_per_epoch(vocabulary, settings, b) for b in (64, 256, 16_384)]
    assert steps[0] > steps[1] > STEPS_PER_EXECUTION > steps[2]
    assert steps[0] % STEPS_PER_EXECUTION == steps[1] % STEPS_PER_EXECUTION == 0


def test_the_picture_shows_content_words_from_distinct_groups():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(10, 16))
    # 1,000 words, most frequent first; the first 20 are "stop words" near every group.
    words = [f"stop{i}" for i in range(20)] + [f"мир{chr(0x4E00 + i)}" for i in range(980)]
    vectors = np.concatenate(
        [
            rng.normal(size=(20, 16)) * 0.01 + centres.mean(0),
            centres[np.arange(980) % 10] + 0.05 * rng.normal(size=(980, 16)),
        ]
    )
    embeddings = Embeddings(words, vectors)
    chosen = picture_words(embeddings)
    assert len(chosen) == len(PICTURE_WORDS)
    assert not any(w.startswith("stop") for w in chosen)
    groups = {words.index(w) % 10 for w in chosen}  # index - 20 ≡ index (mod 10)
    assert len(groups) == len(chosen)  # each brings its own group of neighbours
    english = Embeddings(list(PICTURE_WORDS[:5]) + ["the", "a"], rng.normal(size=(7, 16)))
    assert picture_words(english) == list(PICTURE_WORDS[:5])


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_learning_rate_is_sgds_per_example_rate(tmp_path, optimizer):
    from keras_adl import recipes

    corpus = tmp_path / "corpus.txt"
    corpus.write_text(topic_corpus(60, 2000), encoding="utf-8")
    model, _, _ = recipes.train(
        "word2vec",
        str(tmp_path / "run"),
        epochs=1,
        data=str(corpus),
        optimizer=optimizer,
        learning_rate=0.01,
        min_count=1,
    )
    import json

    with open(tmp_path / "run" / "run.json") as f:
        record = json.load(f)
    assert record["learning_rate"] == pytest.approx(0.01)
    assert record["status"] == "finished"
    from keras_adl.training.divergence import peak_learning_rate

    # SGD's step rate is alpha times the logits of a batch (word2vec.c's rule, batched).
    per_step = BATCH_SIZE * (RECIPE.settings("word2vec", "skipgram")["negatives"] + 1)
    expected = 0.01 * per_step if optimizer == "sgd" else 0.01
    assert peak_learning_rate(model.optimizer) == pytest.approx(expected)

"""The word2vec model of the embeddings family: stable on a small vocabulary thanks to the cap
on a table row's update per batch (`repeated_row_scale`)."""

import math

import keras
import numpy as np

from keras_adl.data.text_corpora import topic_corpus
from keras_adl.models.word2vec import repeated_row_scale, skipgram_negative_sampling
from keras_adl.recipes.embeddings.spec import BATCH_SIZE
from keras_adl.recipes.embeddings.tasks import RECIPES

WORD2VEC = RECIPES["word2vec"]


def _losses(corpus, vocabulary, max_row_updates, steps, epochs=3):
    """The mean training loss of each epoch of ``steps`` steps."""
    settings = dict(WORD2VEC.spec.preset("skipgram"), max_row_updates=max_row_updates)
    keras.utils.set_random_seed(0)
    model = WORD2VEC.build_model(
        "skipgram", vocabulary.size, total_steps=steps * epochs, **settings
    )
    model.steps_per_execution = 1
    losses = []

    class Record(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            losses.append(float(logs["loss"]))

    data = WORD2VEC.dataset("skipgram", corpus, vocabulary, settings, BATCH_SIZE)
    model.fit(
        data, epochs=epochs, steps_per_epoch=steps, verbose=0, shuffle=False, callbacks=[Record()]
    )
    return losses


def test_a_small_vocabulary_trains_to_finite_losses_with_the_row_cap(tmp_path):
    (tmp_path / "topics.txt").write_text(topic_corpus(50, 3000))
    corpus, vocabulary, _ = WORD2VEC.corpus(str(tmp_path / "topics.txt"), 10**6, 5)
    assert len(vocabulary.words) == 50
    cap = WORD2VEC.spec.preset("skipgram")["max_row_updates"]
    capped = _losses(corpus, vocabulary, cap, 10)
    assert all(map(math.isfinite, capped))
    assert capped[-1] < 0.6 < capped[0]  # it learns (log 2 = 0.693 at the start)
    # Without the cap the same run explodes: every row is read hundreds of times per batch.
    uncapped = _losses(corpus, vocabulary, None, 10)
    assert not math.isfinite(uncapped[-1]) or uncapped[-1] > 100


def test_repeated_row_scale_caps_each_rows_total_update():
    ids = np.array([[3, 3, 3], [3, 5, 3]])
    factors = keras.ops.convert_to_numpy(repeated_row_scale(ids, 8, 2))
    # Row 3 occurs 5 times: each occurrence counts 2/5, so the row moves as 2 occurrences.
    np.testing.assert_allclose(factors, [[0.4, 0.4, 0.4], [0.4, 1.0, 0.4]])
    np.testing.assert_allclose(factors[ids == 3].sum(), 2.0)


def test_the_row_cap_leaves_the_forward_pass_and_scales_the_gradient():
    import tensorflow as tf

    x = {"centre": np.array([4, 4, 4, 5]), "contexts": np.array([[6, 7, 8]] * 4)}
    plain = skipgram_negative_sampling(20, dim=4, negatives=2)
    capped = skipgram_negative_sampling(20, dim=4, negatives=2, max_row_updates=1)
    capped.set_weights([np.random.default_rng(0).normal(size=w.shape) for w in plain.weights])
    plain.set_weights(capped.get_weights())
    np.testing.assert_allclose(plain(x), capped(x), rtol=1e-6)

    def gradient(model):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(model(x))
        grad = tape.gradient(loss, model.get_layer("input_embedding").embeddings)
        return tf.convert_to_tensor(grad).numpy()

    # Row 4 is read 3 times: its gradient is the mean of the three, not their sum.
    np.testing.assert_allclose(gradient(capped)[4], gradient(plain)[4] / 3, rtol=1e-5)
    np.testing.assert_allclose(gradient(capped)[5], gradient(plain)[5], rtol=1e-6)

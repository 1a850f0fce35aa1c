"""`SparseAdam`: Adam on the rows a sparse gradient touches, the others left alone."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.training.sparse_adam import SparseAdam


def _sparse(values, rows, shape):
    return tf.IndexedSlices(tf.constant(values, tf.float32), tf.constant(rows), tf.constant(shape))


def test_touched_rows_follow_adam_and_the_others_do_not_move():
    rng = np.random.default_rng(0)
    start = rng.normal(size=(6, 3)).astype("float32")
    sparse_table, dense_table = keras.Variable(start), keras.Variable(start)
    sparse, dense = SparseAdam(0.05), keras.optimizers.Adam(0.05)
    for _ in range(3):
        values = rng.normal(size=(3, 3)).astype("float32")
        rows = [1, 4, 1]  # row 1 twice: its gradients add up
        gradient = np.zeros((6, 3), "float32")
        np.add.at(gradient, rows, values)
        sparse.apply([_sparse(values, rows, [6, 3])], [sparse_table])
        dense.apply([tf.constant(gradient)], [dense_table])
        # Rows 1 and 4 get a gradient every step, so lazy and dense Adam agree on them.
        np.testing.assert_allclose(
            sparse_table.numpy()[[1, 4]], dense_table.numpy()[[1, 4]], rtol=1e-5, atol=1e-6
        )
    untouched = [0, 2, 3, 5]
    np.testing.assert_array_equal(sparse_table.numpy()[untouched], start[untouched])
    assert not np.allclose(sparse_table.numpy()[[1, 4]], start[[1, 4]])


def test_dense_gradients_get_the_ordinary_update_and_the_config_round_trips():
    start = np.ones((2, 2), "float32")
    a, b = keras.Variable(start), keras.Variable(start)
    SparseAdam(0.1).apply([tf.ones((2, 2))], [a])
    keras.optimizers.Adam(0.1).apply([tf.ones((2, 2))], [b])
    np.testing.assert_allclose(a.numpy(), b.numpy())
    config = keras.saving.serialize_keras_object(SparseAdam(0.01, beta_1=0.8))
    restored = keras.saving.deserialize_keras_object(config)
    assert isinstance(restored, SparseAdam) and restored.beta_1 == 0.8
    with pytest.raises(ValueError, match="`amsgrad` is not supported"):
        SparseAdam(amsgrad=True)


def test_trains_an_embedding_model_and_reloads_with_it(tmp_path):
    keras.utils.set_random_seed(0)
    ids = keras.Input((2,), dtype="int32")
    logits = keras.layers.Dense(1)(keras.layers.Flatten()(keras.layers.Embedding(50, 4)(ids)))
    model = keras.Model(ids, logits)
    model.compile(SparseAdam(0.05), keras.losses.BinaryCrossentropy(from_logits=True))
    x = np.random.default_rng(0).integers(0, 50, size=(256, 2))
    y = (x[:, :1] < 25).astype("float32")
    history = model.fit(x, y, epochs=5, batch_size=32, verbose=0)
    assert history.history["loss"][-1] < 0.5 * history.history["loss"][0]
    path = str(tmp_path / "m.keras")
    model.save(path)
    assert isinstance(keras.saving.load_model(path).optimizer, SparseAdam)

"""Adam for embedding tables: only the rows a batch touches are updated ("lazy" Adam).

A word2vec batch touches a few thousand rows of tables with tens of thousands; Keras' Adam
updates every row of every table at every step (the moments decay everywhere), which is most of
a step's time. `SparseAdam` applies Adam's update to the rows of a sparse gradient
(``tf.IndexedSlices``, what the gradient of an ``Embedding`` lookup is) and leaves the other
rows and their moments untouched, as tensorflow-addons' ``LazyAdam`` and PyTorch's
``SparseAdam`` do. Dense gradients get the ordinary Adam update.

TensorFlow only (``tf.unique`` and scatter updates; TensorFlow is imported on its own backend
only, so that registering the class on another backend loads none), and not under XLA (``tf.unique`` has a dynamic
shape): compile a model that uses it with ``jit_compile=False``.
"""

import keras

# TensorFlow only where it is the backend: importing this module on JAX or PyTorch loads none.
if keras.backend.backend() == "tensorflow":
    import tensorflow as tf


__all__ = ["SparseAdam"]


@keras.saving.register_keras_serializable(package="keras_adl")
class SparseAdam(keras.optimizers.Adam):
    """Adam that updates only the rows of a sparse gradient (same arguments as
    ``keras.optimizers.Adam``; ``amsgrad`` is not supported).

    Args:
        *args: the arguments of ``keras.optimizers.Adam``.
        **kwargs: the keyword arguments of ``keras.optimizers.Adam`` but ``amsgrad``.

    Example:

    >>> import tensorflow as tf
    >>> table = keras.Variable(tf.ones([4, 2]))
    >>> optimizer = SparseAdam(0.1)
    >>> gradient = tf.IndexedSlices(tf.ones([2, 2]), tf.constant([1, 1]), tf.constant([4, 2]))
    >>> optimizer.apply([gradient], [table])
    >>> table.numpy().astype("float64").round(2).tolist()  # row 1 moved (its two gradients summed); the rest kept
    [[1.0, 1.0], [0.9, 0.9], [1.0, 1.0], [1.0, 1.0]]
    """

    def __init__(self, *args, **kwargs):
        if kwargs.get("amsgrad"):
            raise ValueError("SparseAdam: `amsgrad` is not supported; received amsgrad=True.")
        super().__init__(*args, **kwargs)

    def update_step(self, gradient, variable, learning_rate):
        if not isinstance(gradient, tf.IndexedSlices):
            return super().update_step(gradient, variable, learning_rate)
        dtype = variable.dtype
        learning_rate = tf.cast(learning_rate, dtype)
        step = tf.cast(self.iterations + 1, dtype)
        beta_1 = tf.cast(self.beta_1, dtype)
        beta_2 = tf.cast(self.beta_2, dtype)
        alpha = learning_rate * tf.sqrt(1 - tf.pow(beta_2, step)) / (1 - tf.pow(beta_1, step))
        # Duplicate rows (a word twice in the batch) are summed first, as a dense gradient is.
        rows, position = tf.unique(gradient.indices)
        values = tf.math.unsorted_segment_sum(
            tf.cast(gradient.values, dtype), position, tf.shape(rows)[0]
        )
        index = self._get_variable_index(variable)
        m, v = self._momentums[index], self._velocities[index]
        m_rows = beta_1 * tf.gather(m.value, rows) + (1 - beta_1) * values
        v_rows = beta_2 * tf.gather(v.value, rows) + (1 - beta_2) * tf.square(values)
        shape = tf.shape(m.value, out_type=rows.dtype)
        self.assign(m, tf.IndexedSlices(m_rows, rows, shape))
        self.assign(v, tf.IndexedSlices(v_rows, rows, shape))
        update = alpha * m_rows / (tf.sqrt(v_rows) + tf.cast(self.epsilon, dtype))
        self.assign_sub(variable, tf.IndexedSlices(update, rows, shape))

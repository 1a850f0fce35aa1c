"""Distribution helpers: choose a ``tf.distribute`` strategy, build under it, train across workers.

On one machine, ``model.fit`` works under ``MirroredStrategy`` in Keras 3.15: build and compile
the model inside ``strategy.scope()`` (see `build_in_scope`). Across machines Keras 3.15's
``fit`` fails under ``MultiWorkerMirroredStrategy``, so `custom_train_loop` is the supported
path there. Notes for this stack: leave ``jit_compile`` off under ``MirroredStrategy`` on
logical CPUs (XLA fails there), and feed token ids, not strings, to a distributed ``fit``.
"""

import tensorflow as tf

# One MirroredStrategy per device set and process: a second instance over the same devices
# reuses the first one's collective instance keys, and its all-reduces of differently shaped
# gradients then fail ("Shape mismatch in the collective instance 100").
_MIRRORED = {}


def get_strategy(strategy="auto", devices=None):
    """Resolves a strategy.

    ``"mirrored"`` (and ``"auto"`` on several GPUs) returns one shared ``MirroredStrategy`` per
    device set in a process: TensorFlow's collective all-reduce breaks when two instances over
    the same devices train different models in one process.

    Args:
        strategy: ``"auto"`` (``MirroredStrategy`` over all GPUs when there are two or more,
            else the default strategy), ``"mirrored"`` (``MirroredStrategy`` over ``devices``,
            or all GPUs, or the CPU), ``"default"`` (no distribution), or a
            ``tf.distribute.Strategy`` instance, returned as is.
        devices: optional explicit device names for ``"mirrored"``, e.g.
            ``["/cpu:0", "/cpu:1"]`` for logical CPUs.

    Returns:
        A ``tf.distribute.Strategy``.

    Example:

    >>> get_strategy("default").num_replicas_in_sync
    1
    """
    if isinstance(strategy, tf.distribute.Strategy):
        return strategy
    gpus = tf.config.list_logical_devices("GPU")
    if strategy == "auto":
        if devices is None and len(gpus) < 2:
            return tf.distribute.get_strategy()
        strategy = "mirrored"
    if strategy == "mirrored":
        if devices is None:
            devices = [g.name for g in gpus] or ["/cpu:0"]
        key = tuple(devices)
        if key not in _MIRRORED:
            _MIRRORED[key] = tf.distribute.MirroredStrategy(devices=list(devices))
        return _MIRRORED[key]
    if strategy == "default":
        return tf.distribute.get_strategy()
    raise ValueError(
        "`strategy` must be 'auto', 'mirrored', 'default' or a tf.distribute.Strategy; "
        f"received {strategy!r}."
    )


def build_in_scope(strategy, build_fn, *args, **kwargs):
    """Calls ``build_fn(*args, **kwargs)`` (e.g. a builder, then ``compile``) in the scope."""
    with strategy.scope():
        return build_fn(*args, **kwargs)


def custom_train_loop(model, dataset, loss_fn, optimizer, strategy, steps):
    """A minimal synchronous training loop that works under any strategy, including
    ``MultiWorkerMirroredStrategy``.

    The model and optimizer must have been created under ``strategy.scope()``. The per-example
    losses are averaged over the *global* batch (``tf.nn.compute_average_loss``), so gradients
    summed across replicas equal the single-device gradient of the global batch.

    Args:
        model: a built ``keras.Model``.
        dataset: a ``tf.data.Dataset`` of ``(inputs, targets)`` global batches (it is
            distributed with ``strategy.experimental_distribute_dataset``).
        loss_fn: ``(targets, predictions) -> per-example losses [batch]``.
        optimizer: a Keras optimizer created in the scope.
        strategy: the strategy.
        steps: number of steps to run.

    Returns:
        The list of global mean losses, one per step (Python floats).
    """
    distributed = iter(strategy.experimental_distribute_dataset(dataset))

    @tf.function
    def step(batch):
        def replica_step(inputs, targets):
            with tf.GradientTape() as tape:
                predictions = model(inputs, training=True)
                per_example = loss_fn(targets, predictions)
                loss = tf.nn.compute_average_loss(per_example)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        per_replica = strategy.run(replica_step, args=batch)
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)

    return [float(step(next(distributed))) for _ in range(steps)]

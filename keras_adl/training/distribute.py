"""Distribution helpers: choose a ``tf.distribute`` strategy, build under it, and correct Keras
3.15 where it gets distribution wrong.

On one machine, ``model.fit`` runs under ``MirroredStrategy``: build and compile the model
inside ``strategy.scope()`` (see `build_in_scope`). Across machines, Keras 3.15's ``fit`` fails
under ``MultiWorkerMirroredStrategy`` (keras-team/keras#20585), and under any strategy with
several replicas it clips each replica's gradient instead of the global batch's. `get_strategy`
installs `fix_keras_distribution`, three small corrections, so that ``fit``, ``evaluate`` and
``predict`` run across workers with every callback, metric and progress bar, and train as on
one device. Notes for this stack: leave ``jit_compile`` off under a distributed strategy on
CPUs (XLA fails under ``MirroredStrategy`` on logical CPUs), and feed token ids, not strings,
to a distributed ``fit``.
"""

import tensorflow as tf
from keras.src import tree
from keras.src.backend.tensorflow import trainer
from keras.src.backend.tensorflow.optimizer import TFOptimizer
from keras.src.optimizers.base_optimizer import BaseOptimizer
from tensorflow.compiler.xla.tsl.protobuf import coordination_config_pb2
from tensorflow.python.eager import context

from keras_adl.training.cluster import read_tf_config

__all__ = [
    "get_strategy",
    "build_in_scope",
    "multi_worker_strategy",
    "is_multi_worker",
    "worker_info",
    "gather_from_workers",
    "is_worker_failure",
]


# One MirroredStrategy per device set and process: a second instance over the same devices
# reuses the first one's collective instance keys, and its all-reduces of differently shaped
# gradients then fail ("Shape mismatch in the collective instance 100").
_MIRRORED = {}


def get_strategy(strategy="auto", devices=None):
    """Resolves a strategy.

    ``"multi_worker"`` returns this process's one `multi_worker_strategy` (created on first
    use, from ``TF_CONFIG``). ``"mirrored"`` (and ``"auto"`` on several GPUs) returns one shared ``MirroredStrategy`` per
    device set in a process: TensorFlow's collective all-reduce breaks when two instances over
    the same devices train different models in one process.

    Args:
        strategy: ``"auto"`` (``MirroredStrategy`` over all GPUs when there are two or more,
            else the default strategy), ``"multi_worker"`` (``MultiWorkerMirroredStrategy`` over
            the ``TF_CONFIG`` cluster), ``"mirrored"`` (``MirroredStrategy`` over ``devices``,
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
        if strategy.num_replicas_in_sync > 1:
            fix_keras_distribution()
        return strategy
    if strategy == "multi_worker":  # before anything starts TensorFlow's runtime
        return multi_worker_strategy()
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
        fix_keras_distribution()
        return _MIRRORED[key]
    if strategy == "default":
        return tf.distribute.get_strategy()
    raise ValueError(
        "`strategy` must be 'auto', 'mirrored', 'multi_worker', 'default' or a "
        "tf.distribute.Strategy; "
        f"received {strategy!r}."
    )


def build_in_scope(strategy, build_fn, *args, **kwargs):
    """Calls ``build_fn(*args, **kwargs)`` (e.g. a builder, then ``compile``) in the scope.

    Args:
        strategy: a ``tf.distribute.Strategy`` (`get_strategy`).
        build_fn: a function that builds (and compiles) a model.
        *args: positional arguments of ``build_fn``.
        **kwargs: keyword arguments of ``build_fn``.

    Returns:
        What ``build_fn`` returns; its variables belong to ``strategy``.

    Example:

    >>> import keras
    >>> def build(units):
    ...     model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(units)])
    ...     model.compile(optimizer="sgd", loss="mse")
    ...     return model
    >>> strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    >>> model = build_in_scope(strategy, build, units=2)
    >>> model.distribute_strategy is strategy, [tuple(w.shape) for w in model.weights]
    (True, [(3, 2), (2,)])
    """
    with strategy.scope():
        return build_fn(*args, **kwargs)


# Seconds without a heartbeat after which the coordination service declares a worker dead and
# the survivors' collectives fail (``UnavailableError``) instead of waiting for ever.
HEARTBEAT_TIMEOUT = 10
_MULTI_WORKER = []


def multi_worker_strategy(heartbeat_timeout=HEARTBEAT_TIMEOUT, collective_timeout=None):
    """This process's ``MultiWorkerMirroredStrategy`` over the ``TF_CONFIG`` cluster, with
    failure detection, and `fix_keras_distribution` installed.

    Call it before TensorFlow runs any operation (TensorFlow configures collective ops once, at
    start-up); every worker calls it, and each blocks until all have. Later calls return the
    same instance.

    Failure detection: TensorFlow's coordination service, configured with
    ``heartbeat_timeout`` seconds. With the defaults TensorFlow 2.21 chooses, a survivor whose
    peer was killed can wait in its next all-reduce for ever; with a heartbeat timeout the
    all-reduce fails within seconds with ``tf.errors.UnavailableError`` (see
    `is_worker_failure`).

    Args:
        heartbeat_timeout: seconds before a silent worker is declared dead.
        collective_timeout: optional seconds after which any one collective operation fails
            with ``DeadlineExceededError`` (``CommunicationOptions.timeout_seconds``; TensorFlow
            spends a thread per collective for it, so it is off unless asked for).

    Returns:
        A ``tf.distribute.MultiWorkerMirroredStrategy``.

    Raises:
        ValueError: ``TF_CONFIG`` is missing or malformed (`cluster.ClusterError`).
    """
    if _MULTI_WORKER:
        return _MULTI_WORKER[0]
    config = read_tf_config()
    cluster = config["cluster"]
    leader = "chief" if "chief" in cluster else "worker"
    context.context().configure_coordination_service(
        service_type="standalone",
        service_leader=f"/job:{leader}/replica:0/task:0",
        heartbeat_timeout_in_ms=int(heartbeat_timeout * 1000),
        coordinated_jobs=[
            coordination_config_pb2.CoordinatedJob(name=job, num_tasks=len(cluster[job]))
            for job in ("chief", "worker")
            if job in cluster
        ],
    )
    options = tf.distribute.experimental.CommunicationOptions(timeout_seconds=collective_timeout)
    fix_keras_distribution()
    _MULTI_WORKER.append(tf.distribute.MultiWorkerMirroredStrategy(communication_options=options))
    return _MULTI_WORKER[0]


def is_multi_worker(strategy):
    """Whether ``strategy`` spans several processes."""
    return isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy) or (
        getattr(strategy.extended, "_num_workers", 1) > 1
    )


def worker_info(strategy):
    """``(index, count, is_chief)`` of this process among the workers of ``strategy``
    (``(0, 1, True)`` on one machine)."""
    resolver = getattr(strategy, "cluster_resolver", None)
    if not is_multi_worker(strategy) or resolver is None or resolver.task_type is None:
        return 0, 1, True  # one machine (a multi-worker strategy without TF_CONFIG too)
    chief_job = "chief" in resolver.cluster_spec().jobs
    if resolver.task_type == "chief":
        index = 0
    else:
        index = resolver.task_id + int(chief_job)
    return index, strategy.extended._num_workers, bool(strategy.extended.should_checkpoint)


def gather_from_workers(strategy, value):
    """Every worker's integer ``value``, in worker order (a collective: all workers call it).

    Args:
        strategy: the strategy.
        value: this worker's Python integer.

    Returns:
        A list of ints, one per replica (each worker's value repeated for its local replicas).
    """

    @tf.function
    def gather(value):
        per_replica = strategy.run(lambda: tf.reshape(value, [1]))
        return strategy.gather(per_replica, axis=0)

    return [int(v) for v in gather(tf.constant(int(value), tf.int64)).numpy()]


def is_worker_failure(error):
    """Whether ``error`` is TensorFlow reporting a lost worker or an aborted collective
    (``UnavailableError``, ``DeadlineExceededError``, ``CancelledError``, ``AbortedError``)."""
    return isinstance(
        error,
        (
            tf.errors.UnavailableError,
            tf.errors.DeadlineExceededError,
            tf.errors.CancelledError,
            tf.errors.AbortedError,
        ),
    )


_PATCHED = []


def fix_keras_distribution():
    """Lets Keras 3.15's ``fit`` / ``evaluate`` / ``predict`` run under
    ``MultiWorkerMirroredStrategy``, and clip gradients as on one device under any
    distribution strategy (idempotent; `get_strategy` calls it).

    Keras 3.15 fails under ``MultiWorkerMirroredStrategy`` twice, in
    ``keras/src/backend/tensorflow/trainer.py``:

    1. ``TensorFlowTrainer._maybe_symbolic_build`` takes the first distributed batch and calls
       ``strategy.reduce("MEAN", batch, axis=None)`` on the whole ``(x, y)`` structure, only to
       read its shapes. ``Strategy.reduce`` does not take a structure (its own TODO says so);
       on one machine ``MirroredStrategy`` happens to return it unchanged, but with several
       workers ``CollectiveAllReduceExtended._reduce_to`` sends it to the cross-device
       all-reduce, which tries ``convert_to_tensor`` on it: "Attempt to convert a value
       (PerReplica:{...}) with an unsupported type". Drawing that batch has a second cost:
       ``fit`` then restarts the data with a new iterator, and a dataset that reshuffles on
       every iteration (a seeded ``shuffle``) starts training on its second order, not the
       order one device sees. Corrected: the build reads the dataset's ``element_spec``;
       shapes are all it needs, no batch is drawn and no collective is spent on data.
    2. ``reduce_per_replica`` (the step's logs) reduces across workers with
       ``strategy.reduce("MEAN", v, axis=0)``, which fails on the scalar losses and metrics
       ("Invalid reduction dimension 0 for input with 0 dimensions") and, for any tensor,
       would also average over its first axis. Corrected: the mean across replicas that the
       one-machine branch of the same function computes, with all of the step's logs packed
       into one all-reduce (one collective per metric per step would add latency to every
       step).

    And under every strategy with several replicas (``MirroredStrategy`` too), the optimizer
    clips too early:

    3. ``BaseOptimizer._backend_apply_gradients`` calls ``_clip_gradients`` on each replica's
       own gradient, and only then ``_backend_update_step`` sums the gradients across replicas
       (``TFOptimizer._all_reduce_sum_gradients``). ``global_clipnorm`` (the library's
       recipe), ``clipnorm`` and ``clipvalue`` therefore bound each replica's share of the
       gradient rather than the gradient of the global batch: training differs from one
       device's whenever the clip is active. Corrected: clipping is skipped there and done
       right after the all-reduce, on the summed gradient, identically on every replica.

    Everything else (metrics, callbacks, checkpoints of weights) already works across workers.
    """
    if _PATCHED:
        return
    original_reduce = trainer.reduce_per_replica

    def _maybe_symbolic_build(self, iterator=None, data_batch=None):
        if self._distribute_strategy is None:
            return
        if iterator is not None and data_batch is None:  # shapes only: no batch is drawn
            data_batch = iterator.data_adapter.get_tf_dataset().element_spec
        with self.distribute_strategy.scope():
            self._symbolic_build(data_batch=data_batch)

    def reduce_per_replica(values, strategy, reduction):
        if reduction in ("auto", "mean") and trainer._collective_all_reduce_multi_worker(strategy):
            return _mean_across_replicas(values, strategy)
        return original_reduce(values, strategy, reduction)

    trainer.TensorFlowTrainer._maybe_symbolic_build = _maybe_symbolic_build
    trainer.reduce_per_replica = reduce_per_replica
    _clip_after_all_reduce()
    _PATCHED.append(True)


def _mean_across_replicas(values, strategy):
    """The mean across replicas of every value of ``values`` (a structure of per-replica
    tensors), in ONE all-reduce when they are all floating point: each of a step's logs
    reduced on its own would cost a collective per metric per step."""
    flat = tree.flatten(values)
    local = [strategy.experimental_local_results(v)[0] for v in flat]
    if not local or not all(v.dtype.is_floating for v in local):
        return tree.map_structure(lambda v: strategy.reduce("MEAN", v, axis=None), values)

    def pack(*parts):
        return tf.concat([tf.reshape(tf.cast(p, tf.float32), [-1]) for p in parts], axis=0)

    packed = strategy.run(pack, args=tuple(flat))
    mean = strategy.reduce("MEAN", packed, axis=None)
    sizes = [tf.size(v) for v in local]
    pieces = tf.split(mean, sizes)
    results = [tf.cast(tf.reshape(piece, tf.shape(v)), v.dtype) for piece, v in zip(pieces, local)]
    return tree.pack_sequence_as(values, results)


def _replicated():
    """In a replica context of a strategy with several replicas."""
    if not tf.distribute.has_strategy() or tf.distribute.in_cross_replica_context():
        return False
    return tf.distribute.get_replica_context().num_replicas_in_sync > 1


def _clip_after_all_reduce():
    clip = BaseOptimizer._clip_gradients
    all_reduce = TFOptimizer._all_reduce_sum_gradients

    def _clip_gradients(self, grads):
        if _replicated():
            return grads  # clipped after the all-reduce
        return clip(self, grads)

    def _all_reduce_sum_gradients(self, grads_and_vars):
        reduced = all_reduce(self, grads_and_vars)
        if not _replicated() or not (self.clipnorm or self.global_clipnorm or self.clipvalue):
            return reduced
        present = [i for i, (g, _) in enumerate(reduced) if g is not None]
        clipped = clip(self, [reduced[i][0] for i in present])
        reduced = list(reduced)
        for i, g in zip(present, clipped):
            reduced[i] = (g, reduced[i][1])
        return reduced

    TFOptimizer._clip_gradients = _clip_gradients
    TFOptimizer._all_reduce_sum_gradients = _all_reduce_sum_gradients

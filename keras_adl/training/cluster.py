"""The cluster of a multi-worker run, read from ``TF_CONFIG`` (standard library only).

``TF_CONFIG`` is the JSON that ``tf.distribute.MultiWorkerMirroredStrategy`` reads: the
cluster's addresses by job, and which task this process is::

    {"cluster": {"worker": ["host1:12345", "host2:12345"]},
     "task": {"type": "worker", "index": 0}}

The chief (``task.type == "chief"``, or worker 0 when the cluster has no ``chief`` job) writes
the run directory; the other workers write only to temporary directories. This module answers
those questions before TensorFlow loads (``keras-adl train`` checks its ``--out`` first), and
starts local rehearsal clusters: several processes on 127.0.0.1, for tests and benchmarks.
"""

import json
import os
import random
import socket
import subprocess

__all__ = [
    "ClusterError",
    "read_tf_config",
    "is_chief",
    "free_ports",
    "local_tf_configs",
    "start_local_workers",
]


TRAINING_JOBS = ("chief", "worker")


class ClusterError(ValueError):
    """``TF_CONFIG`` is missing or malformed."""


def read_tf_config(environ=None):
    """The ``TF_CONFIG`` of this process, checked.

    Args:
        environ: the environment to read (default ``os.environ``).

    Returns:
        ``{"cluster": {job: [address, ...]}, "task": {"type": job, "index": i}}``.

    Raises:
        ClusterError: naming what is missing or wrong, and what was received.
    """
    text = (os.environ if environ is None else environ).get("TF_CONFIG")
    if not text:
        raise ClusterError(
            "multi-worker training reads the cluster from the TF_CONFIG environment variable, "
            'e.g. {"cluster": {"worker": ["host1:12345", "host2:12345"]}, '
            '"task": {"type": "worker", "index": 0}}; TF_CONFIG is not set'
        )
    try:
        config = json.loads(text)
    except json.JSONDecodeError as error:
        raise ClusterError(f"TF_CONFIG is not valid JSON ({error}); received {text!r}") from None
    cluster = config.get("cluster") if isinstance(config, dict) else None
    task = config.get("task") if isinstance(config, dict) else None
    if not isinstance(cluster, dict) or not any(cluster.get(job) for job in TRAINING_JOBS):
        raise ClusterError(
            f"TF_CONFIG needs a 'cluster' with a 'worker' (or 'chief') list of host:port "
            f"addresses; received {text!r}"
        )
    for job, addresses in cluster.items():
        if not isinstance(addresses, list) or not all(
            isinstance(a, str) and ":" in a for a in addresses
        ):
            raise ClusterError(
                f"TF_CONFIG cluster job {job!r} must be a list of 'host:port' strings; "
                f"received {addresses!r}"
            )
    if not isinstance(task, dict) or task.get("type") not in cluster:
        raise ClusterError(
            f"TF_CONFIG needs a 'task' whose 'type' is one of the cluster's jobs "
            f"{sorted(cluster)}; received {task!r}"
        )
    index = task.get("index", 0)
    if not isinstance(index, int) or not 0 <= index < len(cluster[task["type"]]):
        raise ClusterError(
            f"TF_CONFIG task index must be an integer in [0, {len(cluster[task['type']])}) for "
            f"job {task['type']!r}; received {index!r}"
        )
    return {"cluster": cluster, "task": {"type": task["type"], "index": index}}


def is_chief(config):
    """Whether this task writes the run directory: the ``chief``, or worker 0 without one."""
    task = config["task"]
    if "chief" in config["cluster"]:
        return task["type"] == "chief"
    return task["type"] == "worker" and task["index"] == 0


# Ports for a local cluster are drawn below Linux's ephemeral range (32768-60999 by default):
# a port that bind(0) hands out may be taken by another process's outgoing connection in the
# seconds before TensorFlow binds it, and two clusters started together could then share one.
_LOCAL_PORTS = (20000, 32768)


def free_ports(count, host="127.0.0.1", seed=None):
    """``count`` distinct TCP ports free on ``host`` right now (for a local rehearsal
    cluster), drawn at random below the ephemeral range so that no outgoing connection takes
    one before the workers bind it.

    Args:
        count: the ports wanted.
        host: the address they are free on.
        seed: the seed of the draw (``None``: the system's randomness).

    Returns:
        A list of ``count`` distinct ints.

    Raises:
        OSError: no ``count`` free ports were found in 1,000 tries.
    """
    rng = random.Random(seed)
    ports = []
    for _ in range(1000):
        if len(ports) == count:
            break
        port = rng.randrange(*_LOCAL_PORTS)
        if port in ports:
            continue
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                continue  # in use
        ports.append(port)
    if len(ports) < count:
        raise OSError(f"no {count} free ports found on {host} in {_LOCAL_PORTS}")
    return ports


def local_tf_configs(count):
    """``TF_CONFIG`` strings of a ``count``-worker cluster on 127.0.0.1 (free ports)."""
    workers = [f"127.0.0.1:{port}" for port in free_ports(count)]
    return [
        json.dumps({"cluster": {"worker": workers}, "task": {"type": "worker", "index": i}})
        for i in range(count)
    ]


def start_local_workers(argv, count, env=None, cores=None, **popen_kwargs):
    """Starts ``count`` processes running ``argv`` as the workers of one local cluster.

    Args:
        argv: the command every worker runs (e.g. ``["keras-adl", "train", "dates", ...]``),
            or a function ``index -> argv``.
        count: workers.
        env: extra environment variables.
        cores: optional list of CPU core lists, one per worker; each worker is pinned to its
            cores (``os.sched_setaffinity``) and its TensorFlow thread pools sized to match.
        **popen_kwargs: passed to ``subprocess.Popen`` (e.g. ``stdout``).

    Returns:
        The ``subprocess.Popen`` objects, worker 0 (the chief) first.
    """
    processes = []
    for index, tf_config in enumerate(local_tf_configs(count)):
        worker_env = {**os.environ, **(env or {}), "TF_CONFIG": tf_config}
        preexec = None
        if cores is not None:
            mine = list(cores[index])
            worker_env["TF_NUM_INTRAOP_THREADS"] = str(len(mine))
            worker_env["TF_NUM_INTEROP_THREADS"] = str(len(mine))

            def preexec(mine=mine):
                os.sched_setaffinity(0, mine)

        command = argv(index) if callable(argv) else argv
        processes.append(
            subprocess.Popen(command, env=worker_env, preexec_fn=preexec, **popen_kwargs)
        )
    return processes

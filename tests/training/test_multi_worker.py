"""Multi-worker training: TF_CONFIG, Keras' fit under MultiWorkerMirroredStrategy (two worker
processes on 127.0.0.1), the chief's run directory, and recovery from a killed worker."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl import recipes
from keras_adl.cli import WORKER_LOST
from keras_adl.training.cluster import (
    ClusterError,
    is_chief,
    local_tf_configs,
    read_tf_config,
    start_local_workers,
)
from tests.mirrored import assert_mirrored_fit_matches_one_device, assert_weights_close

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# A cluster run takes under 90 s here; a hung one is killed well before CI's limit.
TIMEOUT = 300
# The clusters of this module run one at a time (`make test-slow` runs with --dist loadgroup):
# two clusters of two processes each at once on two cores starve each other's heartbeats.
pytestmark = pytest.mark.xdist_group("clusters")


def _cli(*args):
    return [sys.executable, "-m", "keras_adl.cli", *map(str, args)]


def _env():
    return {"PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3"}


def _run_workers(argv, count=2):
    """Runs ``argv`` as every worker of a local cluster; returns ``[(code, out, err)]``."""
    workers = start_local_workers(
        argv, count, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        results = [w.communicate(timeout=TIMEOUT) for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
    return [(w.returncode, out, err) for w, (out, err) in zip(workers, results)]


def _weights(path):
    return keras.saving.load_model(path).get_weights()


# -- TF_CONFIG -------------------------------------------------------------------------------


def test_read_tf_config_checks_and_names_the_problem():
    good = {"cluster": {"worker": ["a:1", "b:2"]}, "task": {"type": "worker", "index": 1}}
    config = read_tf_config({"TF_CONFIG": json.dumps(good)})
    assert not is_chief(config)
    assert is_chief({**good, "task": {"type": "worker", "index": 0}})
    with_chief = {"cluster": {"chief": ["c:0"], "worker": ["a:1"]}, "task": {"type": "worker"}}
    assert not is_chief(read_tf_config({"TF_CONFIG": json.dumps(with_chief)}))
    cases = [
        ({}, "TF_CONFIG is not set"),
        ({"TF_CONFIG": "{"}, "TF_CONFIG is not valid JSON"),
        ({"TF_CONFIG": json.dumps({"task": {}})}, "needs a 'cluster'"),
        ({"TF_CONFIG": json.dumps({**good, "cluster": {"worker": ["nohost"]}})}, "host:port"),
        ({"TF_CONFIG": json.dumps({**good, "task": {"type": "ps"}})}, "'type' is one of"),
        ({"TF_CONFIG": json.dumps({**good, "task": {"type": "worker", "index": 2}})}, r"\[0, 2\)"),
    ]
    for environ, message in cases:
        with pytest.raises(ClusterError, match=message):
            read_tf_config(environ)


def test_local_tf_configs_describe_one_cluster():
    configs = [json.loads(c) for c in local_tf_configs(3)]
    assert [c["task"]["index"] for c in configs] == [0, 1, 2]
    assert all(c["cluster"] == configs[0]["cluster"] for c in configs)
    assert len(set(configs[0]["cluster"]["worker"])) == 3


def test_cli_refuses_multi_worker_without_tf_config(capsys, monkeypatch, tmp_path):
    from keras_adl.cli import main

    monkeypatch.delenv("TF_CONFIG", raising=False)
    code = main(["train", "dates", "--strategy", "multi_worker", "--out", str(tmp_path / "r")])
    assert code == 1
    assert "TF_CONFIG is not set" in capsys.readouterr().err
    code = main(["train", "dates", "--collective-timeout", "5", "--out", str(tmp_path / "r")])
    assert code == 1
    assert "--collective-timeout needs --strategy multi_worker" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


# -- the clip of the global gradient -------------------------------------------------------


def test_gradient_clipping_under_mirrored_strategy_clips_the_global_gradient():
    # Keras 3.15 clips each replica's share before the all-reduce; fixed, two replicas train
    # exactly as one device on the same global batches, with the clip active at every step.
    x = np.random.default_rng(0).normal(size=(64, 4)).astype("float32")
    y = (x @ np.array([[3.0], [-2.0], [1.0], [5.0]], "float32")) * 10.0

    def build(clip=0.5):
        keras.utils.set_random_seed(3)
        model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(1)])
        optimizer = keras.optimizers.SGD(1e-3, global_clipnorm=clip)
        model.compile(optimizer, "mse", jit_compile=False)
        return model

    dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(16)
    single = assert_mirrored_fit_matches_one_device(
        build,
        lambda m: m.fit(dataset, epochs=2, verbose=0, shuffle=False),
        weights_rtol=0.0,
    ).model

    # The clip was active: 8 steps of at most lr × 0.5 each, where unclipped ones go far.
    def moved(model):
        start = np.concatenate([w.ravel() for w in build().get_weights()])
        return np.linalg.norm(np.concatenate([w.ravel() for w in model.get_weights()]) - start)

    free = build(clip=None)
    free.fit(dataset, epochs=2, verbose=0, shuffle=False)
    assert moved(single) <= 8 * 1e-3 * 0.5 + 1e-6 and moved(free) > 10 * moved(single)


# -- two worker processes ----------------------------------------------------------------------


@pytest.mark.slow  # 15 s: two processes; the fast suite keeps the in-process clipping check
def test_two_workers_train_dates_as_one_process_on_the_same_global_batches(tmp_path):
    settings = ["--epochs", 2, "--samples", 128, "--seed", 0, "--checkpoint-every", 3]
    settings += ["--collective-timeout", 300]  # generous: only exercises the option
    out = tmp_path / "chief"
    results = _run_workers(
        _cli("train", "dates", "--strategy", "multi_worker", "--out", out, "--batch-size", 16)
        + list(map(str, settings))
    )
    for code, _, err in results:
        assert code == 0, err[-3000:]
    # Only the chief's run directory exists: the other worker wrote to a temporary one.
    assert sorted(os.listdir(tmp_path)) == ["chief"]
    assert sorted(os.listdir(out)) == ["attention.png", "model.keras", "run.json"]
    record = json.load(open(out / "run.json"))
    assert record["status"] == "finished" and record["batch_size"] == 16
    assert record["workers"] == 2 and record["global_batch_size"] == 32
    assert "held_out_exact_match" in results[0][1] and "held_out_exact_match" not in results[1][1]
    # One process, global batch 32: the same batches, the same weights.
    recipes.train(  # XLA off, as under the strategy (and no compile time)
        "dates", str(tmp_path / "single"), epochs=2, samples=128, batch_size=32, seed=0,
        jit_compile=False,
    )  # fmt: skip
    assert_weights_close(
        _weights(str(out / "model.keras")),
        _weights(str(tmp_path / "single" / "model.keras")),
        atol=2e-5,
    )


def _no_partial_files(directory):
    """Every file in the run directory is complete: no temporary names, every checkpoint
    directory whole, every JSON file parses."""
    for root, dirs, files in os.walk(directory):
        for name in dirs + files:
            assert not name.startswith(".partial-"), os.path.join(root, name)
        if os.path.basename(root).startswith("ckpt-"):
            assert sorted(files) == ["model.weights.h5", "progress.json"]
        for name in files:
            if name.endswith(".json"):
                with open(os.path.join(root, name)) as f:
                    json.load(f)


@pytest.mark.slow  # two clusters of two processes and a one-process run, ~1.5 min
def test_a_killed_worker_fails_the_job_and_the_rerun_resumes_to_the_same_weights(tmp_path, capsys):
    out = tmp_path / "run"
    command = _cli(
        "train", "dates", "--strategy", "multi_worker", "--out", out, "--batch-size", 16,
        "--epochs", 2, "--samples", 2048, "--seed", 0, "--checkpoint-every", 10,
    )  # fmt: skip
    workers = start_local_workers(
        command, 2, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    # The only bound on the waits below is the workers' timeout: past it they are killed (a
    # survivor that never noticed its peer's death would wait in an all-reduce for ever).
    watchdog = threading.Timer(TIMEOUT, lambda: [w.kill() for w in workers])
    watchdog.start()
    try:
        while not list((out / "backup").glob("ckpt-*")):  # the first complete checkpoint
            assert workers[1].poll() is None, "the worker exited before the first checkpoint"
            time.sleep(0.05)
        workers[0].send_signal(signal.SIGKILL)  # the chief, the one that writes
        _, err = workers[1].communicate(timeout=TIMEOUT)
    finally:
        watchdog.cancel()
        for w in workers:
            if w.poll() is None:
                w.kill()
    # The survivor saw its peer die (the coordination service's heartbeat) and exits with the
    # status that tells a scheduler to restart the job, not the -9 of the watchdog's kill.
    assert workers[1].returncode == WORKER_LOST, err[-3000:]
    assert "lost contact with another worker" in err
    assert "start the same command on every worker again" in err
    _no_partial_files(out)
    record = json.load(open(out / "run.json"))
    assert record["status"] == "training" and not (out / "model.keras").exists()
    steps_done = max(int(p.name[5:]) for p in (out / "backup").glob("ckpt-*"))
    assert 0 < steps_done < 128

    # A worker given its own --out (no shared storage) cannot resume: both say so in one line
    # before any collective that only the resuming chief would run, and --out is kept.
    alone = tmp_path / "worker1"
    own = [str(alone) if arg == str(out) else arg for arg in command]
    results = _run_workers(lambda index: own if index else command)
    for code, _, werr in results:
        assert code == 1, werr[-3000:]
        lines = [line for line in werr.splitlines() if line.startswith("keras-adl: error:")]
        assert len(lines) == 1 and "disagree on the checkpoint step to resume from" in lines[0]
        assert "must be one directory on storage that every worker reads" in lines[0]
    assert max(int(p.name[5:]) for p in (out / "backup").glob("ckpt-*")) == steps_done

    results = _run_workers(command)  # the same command again, on every worker
    for code, _, werr in results:
        assert code == 0, werr[-3000:]
    assert "resuming" in results[0][1]
    _no_partial_files(out)
    assert json.load(open(out / "run.json"))["status"] == "finished"
    assert not (out / "backup").exists()
    recipes.train("dates", str(tmp_path / "single"), epochs=2, samples=2048, batch_size=32, seed=0)
    assert_weights_close(
        _weights(str(out / "model.keras")),
        _weights(str(tmp_path / "single" / "model.keras")),
        atol=5e-5,
    )


FAMILIES = [
    # (task, model, per-worker batch, samples)
    ("copy", "ntm", 8, 256),
    ("translated_digits", "ram", 8, 256),
    ("needle", "han", 8, 256),
]


@pytest.mark.slow  # a two-worker run and a one-process run per family, ~40 s each
@pytest.mark.parametrize("task, model, batch, samples", FAMILIES)
def test_each_family_trains_on_two_workers_as_in_one_process(tmp_path, task, model, batch, samples):
    settings = ["--model", model, "--epochs", 2, "--samples", samples, "--seed", 0]
    out = tmp_path / "chief"
    results = _run_workers(
        _cli("train", task, "--strategy", "multi_worker", "--out", out, "--batch-size", batch)
        + list(map(str, settings))
    )
    for code, _, err in results:
        assert code == 0, err[-3000:]
    # XLA off as under the strategy: the RAM's samples differ under XLA.
    _, _, metrics = recipes.train(
        task, str(tmp_path / "single"), model, 2, 2 * batch, samples, seed=0, jit_compile=False
    )
    chief = keras.saving.load_model(str(out / "model.keras"))
    assert_weights_close(
        chief.get_weights(), _weights(str(tmp_path / "single" / "model.keras")), atol=5e-5
    )
    assert json.load(open(out / "run.json"))["metrics"].keys() == metrics.keys()
    inputs = [np.zeros([2, *[d or 4 for d in i.shape[1:]]], i.dtype) for i in chief.inputs]
    inputs = inputs if len(inputs) > 1 else inputs[0]
    for output in tf.nest.flatten(chief.predict(inputs, verbose=0)):
        assert np.all(np.isfinite(output))


@pytest.mark.slow  # a two-worker run, ~30 s
def test_a_time_budget_stops_every_worker_at_the_chiefs_step(tmp_path):
    out = tmp_path / "run"
    command = _cli(
        "train", "dates", "--strategy", "multi_worker", "--out", out, "--batch-size", 16,
        "--epochs", 2, "--samples", 2048, "--seed", 0, "--checkpoint-every", 10,
        "--minutes", 0.0001,
    )  # fmt: skip
    results = _run_workers(command)
    for code, _, err in results:
        assert code == 0, err[-3000:]
    record = json.load(open(out / "run.json"))
    assert record["status"] == "finished" and record["ended_by"] == "minutes"
    assert (out / "model.keras").exists() and not (out / "backup").exists()

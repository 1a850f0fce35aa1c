"""Multi-worker scaling on this machine: steps per second with one and two worker processes,
each pinned to its own CPU core, for one model of each family, and where a step's time goes.

    python benchmarks/multi_worker.py --out runs/bench_multi_worker        # ~10 min

Each measurement starts a local cluster (`keras_adl.training.cluster.start_local_workers`) whose
workers train through ``keras_adl.recipes.train(..., strategy="multi_worker")`` — the path of
``keras-adl train --strategy multi_worker`` — with ``--batch-size`` examples per worker, and
time every training step (the first ``WARM_UP`` steps, tracing included, are left out). The one
worker runs are ``MultiWorkerMirroredStrategy`` over a one-worker cluster, so both settings run
the same code (XLA off). Reported per model:

- step time (median, ms) and examples per second with 1 and 2 workers;
- scaling efficiency: (examples/s with 2 workers) / (2 × examples/s with 1 worker); 1.0 is
  perfect data parallelism;
- the all-reduce: the median time of one all-reduce of a gradient-sized list of tensors
  between the two workers (timed alone after training), against the one-worker step time
  (compute).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WARM_UP = 3
# (task, model, examples per worker per step, steps timed)
MODELS = (
    ("dates", "attention_seq2seq", 32, 40),
    ("copy", "ntm", 16, 25),
    ("translated_digits", "ram", 32, 20),
    ("needle", "han", 32, 40),
)


def worker(args):
    """One worker: train ``args.steps`` steps, time them and one all-reduce, write JSON."""
    from keras_adl.training.distribute import get_strategy

    strategy = get_strategy("multi_worker")
    import keras
    import tensorflow as tf

    from keras_adl import recipes
    from keras_adl.training.distribute import worker_info

    index, workers, _ = worker_info(strategy)

    class Times(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.ends = []

        def on_train_batch_end(self, batch, logs=None):
            self.ends.append(time.perf_counter())

    times = Times()
    samples = args.batch * workers * (args.steps + WARM_UP)
    out = tempfile.mkdtemp(prefix="bench-multi-worker-")
    model, _, _ = recipes.train(
        args.task,
        out,
        args.model,
        epochs=1,
        batch_size=args.batch,
        samples=samples,
        strategy="multi_worker",
        callbacks=[times],
        checkpoint_every=10**9,
        seed=0,
        overwrite=True,
    )
    steps = [b - a for a, b in zip(times.ends[WARM_UP:], times.ends[WARM_UP + 1 :])]
    variables = model.trainable_variables

    @tf.function
    def all_reduce():
        def replica():
            grads = [tf.zeros_like(v) for v in variables]
            return tf.distribute.get_replica_context().all_reduce("sum", grads)

        return strategy.run(replica)

    all_reduce()
    reduce_times = []
    for _ in range(20):
        start = time.perf_counter()
        all_reduce()
        reduce_times.append(time.perf_counter() - start)
    result = {
        "index": index,
        "workers": workers,
        "step_ms": 1000 * statistics.median(steps),
        "steps_timed": len(steps),
        "all_reduce_ms": 1000 * statistics.median(reduce_times),
        "parameters": int(sum(int(tf.size(v)) for v in variables)),
    }
    with open(args.result, "w") as f:
        json.dump(result, f)


def measure(task, model, batch, steps, workers):
    """Runs a ``workers``-process cluster, each pinned to one core; returns the chief's
    result."""
    from keras_adl.training.cluster import start_local_workers

    scratch = tempfile.mkdtemp(prefix="bench-multi-worker-")
    results = [os.path.join(scratch, f"worker{i}.json") for i in range(workers)]

    def argv(index):
        return [
            sys.executable, os.path.abspath(__file__), "--worker", "--task", task,
            "--model", model, "--batch", str(batch), "--steps", str(steps),
            "--result", results[index],
        ]  # fmt: skip

    cores = sorted(os.sched_getaffinity(0))
    processes = start_local_workers(
        argv,
        workers,
        env={"PYTHONPATH": ROOT, "TF_CPP_MIN_LOG_LEVEL": "3"},
        cores=[[cores[i % len(cores)]] for i in range(workers)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    for p in processes:
        _, err = p.communicate()
        if p.returncode:
            raise RuntimeError(f"{task}/{model} with {workers} workers failed:\n{err[-3000:]}")
    with open(results[0]) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="runs/bench_multi_worker")
    parser.add_argument("--tasks", nargs="*", default=[m[0] for m in MODELS])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    for flag in ("--task", "--model", "--result"):
        parser.add_argument(flag, help=argparse.SUPPRESS)
    for flag in ("--batch", "--steps"):
        parser.add_argument(flag, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for task, model, batch, steps in MODELS:
        if task not in args.tasks:
            continue
        one = measure(task, model, batch, steps, 1)
        two = measure(task, model, batch, steps, 2)
        row = {
            "task": task,
            "model": model,
            "batch_per_worker": batch,
            "parameters": one["parameters"],
            "step_ms_1": round(one["step_ms"], 1),
            "step_ms_2": round(two["step_ms"], 1),
            "examples_per_s_1": round(1000 * batch / one["step_ms"], 1),
            "examples_per_s_2": round(1000 * 2 * batch / two["step_ms"], 1),
            "all_reduce_ms": round(two["all_reduce_ms"], 2),
        }
        row["scaling_efficiency"] = round(
            row["examples_per_s_2"] / (2 * row["examples_per_s_1"]), 2
        )
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(os.path.join(args.out, "multi_worker.json"), "w") as f:
        json.dump(rows, f, indent=2)
    print(f"\n{'task/model':<30}{'ms/step 1w':>11}{'2w':>8}{'ex/s 1w':>9}{'2w':>8}"
          f"{'efficiency':>11}{'all-reduce ms':>15}")  # fmt: skip
    for r in rows:
        print(
            f"{r['task'] + '/' + r['model']:<30}{r['step_ms_1']:>11}{r['step_ms_2']:>8}"
            f"{r['examples_per_s_1']:>9}{r['examples_per_s_2']:>8}"
            f"{r['scaling_efficiency']:>11}{r['all_reduce_ms']:>15}"
        )


if __name__ == "__main__":
    main()

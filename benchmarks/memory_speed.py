"""Training-step time of the NTM and DNC cells: XLA against plain TensorFlow, and DNC vs N.

One step = forward + backward + Adam update of the model ``keras-adl train copy`` trains
(`keras_adl.recipes.memory`: the paper's sizes, controller LSTM-100, memory 128 × 20; the DNC
with 4 read heads) on a copy batch of length 20 (41 time steps). Each figure is the median of
``--repeats`` timed steps after two warm-up steps (which compile). Target: XLA
(``jit_compile=True``) ≥ 2× faster than without. Then the DNC step time as ``memory_size``
grows 16 → 256: the temporal link matrix is ``N × N`` per example, so the cost grows
~quadratically once it dominates.

    python benchmarks/memory_speed.py
    python benchmarks/memory_speed.py --smoke
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from keras_adl.recipes.memory import RECIPE  # noqa: E402
from keras_adl.tasks.algorithmic import copy_batch  # noqa: E402

TASK = "copy"
# --smoke: tiny sizes (replacing the recipe's), one repeat, sequences of 3 vectors.
SMOKE_OVERRIDES = dict(controller_units=8, memory_size=8, memory_width=4)
SMOKE = dict(repeats=1, batch_sizes=[2], memory_sizes=[8, 16], length=3)


def build_model(args, cell="ntm", jit_compile=True, **overrides):
    """The compiled model ``keras-adl train copy --model CELL`` trains (with
    `SMOKE_OVERRIDES` under ``--smoke``), ``overrides`` replacing settings (``memory_size``)."""
    sizes = dict(SMOKE_OVERRIDES if args.smoke else {}, **overrides)
    return RECIPE.build_model(TASK, cell, jit_compile=jit_compile, **sizes)


def step_time(args, cell, batch_size, jit, **overrides):
    keras.utils.set_random_seed(0)
    model = build_model(args, cell, jit, **overrides)
    x, y, w = copy_batch(batch_size, args.length, args.length, seed=0)
    for _ in range(2):
        model.train_on_batch(x, y, sample_weight=w)
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        model.train_on_batch(x, y, sample_weight=w)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--memory-sizes", nargs="+", type=int, default=[16, 32, 64, 128, 256])
    parser.add_argument("--length", type=int, default=20, help="vectors per copy sequence")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat")
    args = parser.parse_args(argv)
    if args.smoke:
        vars(args).update(SMOKE)
    return args


def main(argv=None):
    args = parse_args(argv)
    results = {"jit": [], "memory_size": []}
    print("| cell | batch | step, no XLA (ms) | step, XLA (ms) | XLA speed-up (target ≥ 2×) |")
    print("|---|---|---|---|---|")
    for cell in ("ntm", "dnc"):
        for batch in args.batch_sizes:
            plain = step_time(args, cell, batch, False)
            xla = step_time(args, cell, batch, True)
            results["jit"].append((cell, batch, plain, xla))
            print(
                f"| {cell} | {batch} | {plain * 1e3:.1f} | {xla * 1e3:.1f} | {plain / xla:.2f}× |",
                flush=True,
            )

    batch = args.batch_sizes[-1]
    print(f"\nDNC step time (XLA, batch {batch}) against memory size N")
    print("| N | step (ms) | ratio to the previous N |")
    print("|---|---|---|")
    previous = None
    for n in args.memory_sizes:
        seconds = step_time(args, "dnc", batch, True, memory_size=n)
        results["memory_size"].append((n, seconds))
        ratio = "—" if previous is None else f"{seconds / previous:.2f}×"
        print(f"| {n} | {seconds * 1e3:.1f} | {ratio} |", flush=True)
        previous = seconds
    return results


if __name__ == "__main__":
    main()

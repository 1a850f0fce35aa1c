"""Training-step time of the NTM and DNC cells: XLA against plain TensorFlow, and DNC vs N.

One step = forward + backward + Adam update of `memory_sequence_model` on a copy batch of
length 20 (41 time steps), the paper's sizes (controller LSTM-100, memory 128 × 20; the DNC
with 4 read heads). Each figure is the median of ``--repeats`` timed steps after two warm-up
steps (which compile). Target: XLA (``jit_compile=True``) ≥ 2× faster than without. Then the
DNC step time as ``memory_size`` grows 16 → 256: the temporal link matrix is ``N × N`` per
example, so the cost grows ~quadratically once it dominates.

    python benchmarks/memory_speed.py
    python benchmarks/memory_speed.py --smoke
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from keras_adl.models.memory import compile_memory_model, memory_sequence_model  # noqa: E402
from keras_adl.tasks.algorithmic import copy_batch  # noqa: E402


def step_time(cell, batch_size, jit, repeats, length=20, **kwargs):
    keras.utils.set_random_seed(0)
    model = compile_memory_model(memory_sequence_model(9, 8, cell=cell, **kwargs),
                                 jit_compile=jit)
    x, y, w = copy_batch(batch_size, length, length, seed=0)
    for _ in range(2):
        model.train_on_batch(x, y, sample_weight=w)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        model.train_on_batch(x, y, sample_weight=w)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch-sizes", nargs="+", type=int, default=[1, 32])
    parser.add_argument("--memory-sizes", nargs="+", type=int, default=[16, 32, 64, 128, 256])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat")
    args = parser.parse_args(argv)
    sizes = {}
    if args.smoke:
        args.repeats, args.batch_sizes, args.memory_sizes = 1, [2], [8, 16]
        sizes = dict(controller_units=8, memory_size=8, memory_width=4)
        length = 3
    else:
        length = 20

    results = {"jit": [], "memory_size": []}
    print("| cell | batch | step, no XLA (ms) | step, XLA (ms) | XLA speed-up (target ≥ 2×) |")
    print("|---|---|---|---|---|")
    for cell in ("ntm", "dnc"):
        for batch in args.batch_sizes:
            plain = step_time(cell, batch, False, args.repeats, length, **sizes)
            xla = step_time(cell, batch, True, args.repeats, length, **sizes)
            results["jit"].append((cell, batch, plain, xla))
            print(f"| {cell} | {batch} | {plain * 1e3:.1f} | {xla * 1e3:.1f} | "
                  f"{plain / xla:.2f}× |", flush=True)

    batch = args.batch_sizes[-1]
    print(f"\nDNC step time (XLA, batch {batch}) against memory size N")
    print("| N | step (ms) | ratio to the previous N |")
    print("|---|---|---|")
    previous = None
    for n in args.memory_sizes:
        kwargs = {**sizes, "memory_size": n}
        seconds = step_time("dnc", batch, True, args.repeats, length, **kwargs)
        results["memory_size"].append((n, seconds))
        ratio = "—" if previous is None else f"{seconds / previous:.2f}×"
        print(f"| {n} | {seconds * 1e3:.1f} | {ratio} |", flush=True)
        previous = seconds
    return results


if __name__ == "__main__":
    main()

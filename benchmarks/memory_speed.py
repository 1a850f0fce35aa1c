"""Training-step time of the NTM and DNC cells: XLA against plain TensorFlow, and the DNC's
dense against its sparse temporal link as the memory grows.

One step = forward + backward + Adam update of the model ``keras-adl train copy`` trains
(`keras_adl.recipes.memory`: the paper's sizes, controller LSTM-100, memory 128 × 20; the DNC
with one read head, the recipe's on copy) on a copy batch of length 20 (41 time steps). Each
figure is the median of ``--repeats`` timed steps after two warm-up steps (which compile).

1. XLA (``jit_compile=True``) against graph mode for the NTM, the DNC and the DNC with sparse
   links (``sparse_links=--sparse-k``), at each ``--batch-sizes``. Target: XLA ≥ 2× at N = 128.
2. The DNC step time against ``memory_size`` (``--memory-sizes``, at ``--sweep-batch``), dense
   and sparse link, with and without XLA, drawn in ``--out``/``dnc_step_time.png``. The dense
   link is ``N × N`` per example, so its cost grows ~quadratically; the sparse link keeps
   ``K`` entries per row. Target: sparse ≥ 5× faster than dense at N = 1024.

    python benchmarks/memory_speed.py --out runs/bench_memory_speed
    python benchmarks/memory_speed.py --smoke
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402

from keras_adl.data.algorithmic import copy_batch  # noqa: E402
from keras_adl.recipes.memory.tasks import RECIPES  # noqa: E402

TASK = "copy"
# --smoke: tiny sizes (replacing the recipe's), one repeat, sequences of 3 vectors.
SMOKE_OVERRIDES = dict(controller_units=8, memory_size=8, memory_width=4)
SMOKE = dict(repeats=1, batch_sizes=[2], memory_sizes=[8, 16], sweep_batch=2, length=3, sparse_k=2)
# The sweep's variants: (label, sparse link?, XLA?).
VARIANTS = (
    ("dense, XLA", False, True),
    ("sparse, XLA", True, True),
    ("dense, no XLA", False, False),
    ("sparse, no XLA", True, False),
)


def build_model(args, cell="ntm", jit_compile=True, **overrides):
    """The compiled model ``keras-adl train copy --model CELL`` trains (with
    `SMOKE_OVERRIDES` under ``--smoke``), ``overrides`` replacing settings (``memory_size``)."""
    sizes = dict(SMOKE_OVERRIDES if args.smoke else {}, **overrides)
    return RECIPES[TASK].build_model(cell, jit_compile=jit_compile, **sizes)


def step_time(args, cell, batch_size, jit, **overrides):
    """Median seconds of a training step (after two warm-up steps)."""
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
    parser.add_argument("--memory-sizes", nargs="+", type=int, default=[64, 128, 256, 512, 1024])
    parser.add_argument("--sweep-batch", type=int, default=8, help="batch of the N sweep")
    parser.add_argument("--sparse-k", type=int, default=8, help="sparse link: entries per row")
    parser.add_argument("--length", type=int, default=20, help="vectors per copy sequence")
    parser.add_argument("--out", default=None, help="directory for dnc_step_time.png")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat")
    args = parser.parse_args(argv)
    if args.smoke:
        vars(args).update(SMOKE)
    return args


def plot_sweep(rows, path, batch, k):
    """Step time against N, one line per variant, log-log."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    sizes = [n for n, _ in rows]
    for j, (label, _, _) in enumerate(VARIANTS):
        ax.plot(sizes, [times[j] * 1e3 for _, times in rows], marker="o", label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes, [str(n) for n in sizes])
    ax.set_xlabel("memory slots N")
    ax.set_ylabel("training step (ms)")
    ax.set_title(f"DNC step time, batch {batch}, 41 steps; sparse link K = {k}")
    ax.grid(alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main(argv=None):
    args = parse_args(argv)
    results = {"jit": [], "memory_size": [], "picture": None}
    print("| cell | batch | step, no XLA (ms) | step, XLA (ms) | XLA speed-up (target ≥ 2×) |")
    print("|---|---|---|---|---|")
    cells = [("ntm", {}), ("dnc", {}), ("dnc", {"sparse_links": args.sparse_k})]
    for cell, extra in cells:
        label = cell if not extra else f"{cell}, sparse K = {args.sparse_k}"
        for batch in args.batch_sizes:
            plain = step_time(args, cell, batch, False, **extra)
            xla = step_time(args, cell, batch, True, **extra)
            results["jit"].append((label, batch, plain, xla))
            print(
                f"| {label} | {batch} | {plain * 1e3:.1f} | {xla * 1e3:.1f} | {plain / xla:.2f}× |",
                flush=True,
            )

    batch = args.sweep_batch
    print(f"\nDNC step time (ms, batch {batch}) against memory size N; sparse K = {args.sparse_k}")
    print("| N | " + " | ".join(label for label, _, _ in VARIANTS) + " | dense / sparse, XLA |")
    print("|---" * (len(VARIANTS) + 2) + "|")
    for n in args.memory_sizes:
        times = []
        for _, sparse, jit in VARIANTS:
            extra = {"sparse_links": min(args.sparse_k, n)} if sparse else {}
            times.append(step_time(args, "dnc", batch, jit, memory_size=n, **extra))
        results["memory_size"].append((n, times))
        cells_ms = " | ".join(f"{t * 1e3:.1f}" for t in times)
        print(f"| {n} | {cells_ms} | {times[0] / times[1]:.2f}× |", flush=True)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        results["picture"] = plot_sweep(
            results["memory_size"],
            os.path.join(args.out, "dnc_step_time.png"),
            batch,
            args.sparse_k,
        )
        print(f"picture: {results['picture']}")
    return results


if __name__ == "__main__":
    main()

"""Attention that scales: time and peak memory of one training step, ours against Keras' MHA.

One fwd+bwd+SGD step (``train_on_batch``, mean squared error) of a model holding one attention
layer, D=256, 4 heads, B·T = 16,384 tokens, at T = 512, 2k, 8k and 16k, for three systems:

- ``keras_mha``: ``keras.layers.MultiHeadAttention`` (the anchor);
- ``ours``: ``MultiHeadSelfAttention`` as shipped (on TensorFlow the blocked path once the
  scores would take 1 GiB, T ≥ 4k here; on JAX and PyTorch the backend's fused attention);
- ``ours_composed``: ``MultiHeadSelfAttention`` with the backend paths switched off (the
  composed ops with their custom gradient: the layer before issue 48).

Each configuration runs in its own process, so one process's peak memory is its own. Time is
the median of ``--repeats`` timings of ``--iters`` steps after two warm-up steps. Memory is the
process's peak resident set size above the peak it had after importing and making the data
(``ru_maxrss``), so it counts the model, the step's buffers and any allocator cache. On
TensorFlow the same process also times a 4096×4096 float32 ``matmul``, the machine's matmul
peak the attention step is compared with.

Usage::

    python benchmarks/attention_memory.py                       # TensorFlow, every length
    python benchmarks/attention_memory.py --backends jax torch  # the other backends
    python benchmarks/attention_memory.py --smoke               # tiny sizes: the script runs
"""

import argparse
import json
import os
import subprocess
import sys

SYSTEMS = ("keras_mha", "ours", "ours_composed")
LENGTHS = (512, 2048, 8192, 16384)
TOKENS = 16384
DIM, HEADS = 256, 4


def peak_rss_mib():
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def step_flops(batch, length, dim):
    """Nominal FLOPs of fwd+bwd: projections 8·D² per token, attention 4·T·D per token, ×3."""
    return 3 * (8 * batch * length * dim * dim + 4 * batch * length * length * dim)


def matmul_gflops():
    import time

    import tensorflow as tf

    a = tf.random.normal((4096, 4096))
    tf.matmul(a, a).numpy()
    start = time.perf_counter()
    for _ in range(3):
        out = tf.matmul(a, a)
    out.numpy()
    return 3 * 2 * 4096**3 / (time.perf_counter() - start) / 1e9


def measure(system, length, batch, dim, heads, iters, repeats, jit, query_block=None):
    """One configuration, in this process: returns a dict of figures."""
    import statistics
    import time

    import keras
    import numpy as np

    from keras_adl.layers import MultiHeadSelfAttention
    from keras_adl.ops import _kernels
    from keras_adl.ops import attention as attention_ops

    x = np.random.default_rng(0).normal(size=(batch, length, dim)).astype("float32")
    y = np.zeros_like(x)
    idle = peak_rss_mib()
    if system == "ours_composed":
        attention_ops.backend_attention = lambda *args: None  # the path before issue 48
    if query_block:
        _kernels.QUERY_BLOCK, _kernels.BLOCKED_MIN_SCORES = query_block, 1
    inputs = keras.Input((length, dim))
    if system == "keras_mha":
        outputs = keras.layers.MultiHeadAttention(heads, dim // heads)(inputs, inputs)
    else:
        outputs = MultiHeadSelfAttention(heads)(inputs)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.SGD(1e-3), loss="mse", jit_compile=jit)
    for _ in range(2):
        model.train_on_batch(x, y)
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iters):
            loss = model.train_on_batch(x, y)
        float(np.asarray(loss).ravel()[0])
        samples.append((time.perf_counter() - start) / iters)
    seconds = statistics.median(samples)
    figures = {
        "backend": keras.backend.backend(),
        "system": system,
        "T": length,
        "B": batch,
        "jit": model.jit_compile,
        "query_block": _kernels.QUERY_BLOCK if system == "ours" else None,
        "ms": seconds * 1e3,
        "gflops": step_flops(batch, length, dim) / seconds / 1e9,
        "peak_mib": peak_rss_mib() - idle,
    }
    if keras.backend.backend() == "tensorflow" and length == min(LENGTHS):
        figures["matmul_gflops"] = matmul_gflops()
    return figures


def run_one(backend, system, length, batch, args):
    """Runs one configuration in a fresh process; returns its figures or a failure."""
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    command = [
        sys.executable,
        __file__,
        "--one",
        system,
        str(length),
        str(batch),
        "--iters",
        str(args.iters),
        "--repeats",
        str(args.repeats),
        "--dim",
        str(args.dim),
    ]
    command += ["--jit", args.jit]
    if args.query_block:
        command += ["--query-block", str(args.query_block)]
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=args.timeout
        )
    except subprocess.TimeoutExpired:
        return {"backend": backend, "system": system, "T": length, "B": batch, "failed": "timeout"}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    reason = "killed (out of memory)" if done.returncode in (-9, 137) else "error"
    tail = (done.stderr.strip().splitlines() or [""])[-1][:160]
    return {
        "backend": backend,
        "system": system,
        "T": length,
        "B": batch,
        "failed": f"{reason}: {tail}",
    }


def table(rows):
    lines = [
        "| backend | T | B | system | ms/step | GFLOP/s | peak MiB above idle | "
        "time ratio keras/ours | memory ratio ours/keras |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    anchors = {(r["backend"], r["T"]): r for r in rows if r["system"] == "keras_mha"}
    for r in rows:
        if "failed" in r:
            lines.append(
                f"| {r['backend']} | {r['T']} | {r['B']} | {r['system']} | {r['failed']} | | | | |"
            )
            continue
        anchor = anchors.get((r["backend"], r["T"]), {})
        time_ratio = memory_ratio = ""
        if "ms" in anchor and r["system"] != "keras_mha":
            time_ratio = f"{anchor['ms'] / r['ms']:.2f}"
            memory_ratio = f"{r['peak_mib'] / max(anchor['peak_mib'], 1.0):.3f}"
        lines.append(
            f"| {r['backend']} | {r['T']} | {r['B']} | {r['system']} | {r['ms']:.1f} | "
            f"{r['gflops']:.0f} | {r['peak_mib']:.0f} | {time_ratio} | {memory_ratio} |"
        )
    peaks = [r["matmul_gflops"] for r in rows if "matmul_gflops" in r]
    if peaks:
        lines.append("")
        lines.append(
            f"float32 4096² matmul in the same processes: {min(peaks):.0f}–{max(peaks):.0f} GFLOP/s"
        )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backends", nargs="+", default=["tensorflow"])
    parser.add_argument("--lengths", nargs="+", type=int, default=list(LENGTHS))
    parser.add_argument("--systems", nargs="+", default=list(SYSTEMS), choices=SYSTEMS)
    parser.add_argument("--iters", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dim", type=int, default=DIM)
    parser.add_argument(
        "--jit",
        choices=["auto", "true", "false"],
        default="auto",
        help="jit_compile: auto is Keras' choice (XLA on JAX, none on TensorFlow's CPU and PyTorch)",
    )
    parser.add_argument(
        "--query-block", type=int, help="blocked path at every length, with this block size"
    )
    parser.add_argument("--timeout", type=int, default=900, help="seconds per configuration")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat")
    parser.add_argument("--one", nargs=3, metavar=("SYSTEM", "T", "B"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        system, length, batch = args.one[0], int(args.one[1]), int(args.one[2])
        figures = measure(
            system,
            length,
            batch,
            args.dim,
            HEADS,
            args.iters,
            args.repeats,
            {"auto": "auto", "true": True, "false": False}[args.jit],
            args.query_block,
        )
        print(json.dumps(figures), flush=True)
        return
    if args.smoke:
        args.lengths, args.iters, args.repeats, args.dim = [128, 1024], 1, 1, 32
    rows = []
    for backend in args.backends:
        for length in args.lengths:
            batch = max(1, (128 * 8 if args.smoke else TOKENS) // length)
            for system in args.systems:
                row = run_one(backend, system, length, batch, args)
                rows.append(row)
                print(json.dumps(row), flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()

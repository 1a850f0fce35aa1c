"""Attention layer throughput: keras-adl against its anchors, measured in one process.

Rows (forward + backward unless noted), each with and without ``jit_compile=True``:

- ``MultiHeadSelfAttention`` vs ``keras.layers.MultiHeadAttention`` (B=32, D=256, 8 heads,
  T=128 and T=512). Target: ours ≥ 1.2× faster.
- ``TransformerEncoderBlock`` vs ``keras_hub.layers.TransformerEncoder`` (same sizes, FFN 1024).
  Target ≥ 1.0×.
- One ``BahdanauAttention`` decoder step (forward) with keys precomputed once per source vs
  recomputing the memory projection every step, as the TensorFlow NMT tutorial does (B=64,
  T=100, 256 units). Target ≥ 2×.

Timing: each function is warmed up (traced/compiled) first; then ``--repeats`` timings of
``--iters`` calls are taken and the median per call is reported. The ratio is anchor time / our
time (> 1 means ours is faster).

Usage::

    python benchmarks/attention.py            # full sizes
    python benchmarks/attention.py --smoke    # tiny sizes, checks the script runs
"""

import argparse
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_adl.layers import (  # noqa: E402
    BahdanauAttention,
    MultiHeadSelfAttention,
    TransformerEncoderBlock,
)


def median_seconds(fn, args, iters, repeats):
    """Median seconds per call of ``fn(*args)`` after a warm-up."""
    for _ in range(2):
        tf.nest.map_structure(lambda t: t.numpy(), fn(*args))
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(iters):
            out = fn(*args)
        tf.nest.map_structure(lambda t: t.numpy(), out)
        samples.append((time.perf_counter() - start) / iters)
    return statistics.median(samples)


def train_step(layer, call, jit):
    """A compiled forward + backward pass of ``call(layer, x)`` w.r.t. weights and input."""

    @tf.function(jit_compile=jit)
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = tf.reduce_sum(tf.square(call(layer, x)))
        return tape.gradient(loss, [x] + layer.trainable_weights)

    return step


def forward(fn, jit):
    return tf.function(fn, jit_compile=jit)


def compare(label, anchor_label, make_ours, make_anchor, target, sizes, iters, repeats):
    """Rows comparing two layers' forward + backward time at each length, jit off and on.

    ``make_ours()`` / ``make_anchor()`` return ``(layer, call)`` where ``call(layer, x)`` runs it.
    """
    batch, dim = sizes["batch"], sizes["dim"]
    rows = []
    for length in sizes["lengths"]:
        x = tf.random.normal((batch, length, dim))
        (ours, ours_call), (anchor, anchor_call) = make_ours(), make_anchor()
        ours_call(ours, x)
        anchor_call(anchor, x)
        for jit in (False, True):
            t_ours = median_seconds(train_step(ours, ours_call, jit), (x,), iters, repeats)
            t_anchor = median_seconds(train_step(anchor, anchor_call, jit), (x,), iters, repeats)
            rows.append((f"{label} T={length}", anchor_label, jit, t_ours, t_anchor, target))
    return rows


def rows_self_attention(sizes, iters, repeats):
    heads, dim = sizes["heads"], sizes["dim"]
    return compare(
        "MultiHeadSelfAttention",
        "keras MultiHeadAttention",
        lambda: (MultiHeadSelfAttention(num_heads=heads), lambda l, x: l(x)),
        lambda: (
            keras.layers.MultiHeadAttention(num_heads=heads, key_dim=dim // heads),
            lambda l, x: l(x, x),
        ),
        1.2,
        sizes,
        iters,
        repeats,
    )


def rows_encoder_block(sizes, iters, repeats):
    import keras_hub

    heads, dim = sizes["heads"], sizes["dim"]
    return compare(
        "TransformerEncoderBlock",
        "keras_hub TransformerEncoder",
        lambda: (TransformerEncoderBlock(heads, 4 * dim), lambda l, x: l(x)),
        lambda: (
            keras_hub.layers.TransformerEncoder(intermediate_dim=4 * dim, num_heads=heads),
            lambda l, x: l(x),
        ),
        1.0,
        sizes,
        iters,
        repeats,
    )


def rows_bahdanau_step(sizes, iters, repeats):
    batch, memory_length, units = sizes["step_batch"], sizes["memory"], sizes["units"]
    memory = tf.random.normal((batch, memory_length, units))
    query = tf.random.normal((batch, units))
    layer = BahdanauAttention(units)
    layer(query, memory)
    keys = layer.precompute_keys(memory)
    rows = []
    for jit in (False, True):
        precomputed = forward(lambda q: layer(q, memory, processed_keys=keys), jit)
        recomputed = forward(lambda q: layer(q, memory), jit)
        t_ours = median_seconds(precomputed, (query,), iters * 5, repeats)
        t_anchor = median_seconds(recomputed, (query,), iters * 5, repeats)
        rows.append(
            (
                f"Bahdanau step, precomputed keys T={memory_length}",
                "memory re-projected each step",
                jit,
                t_ours,
                t_anchor,
                2.0,
            )
        )
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, 1 repeat")
    parser.add_argument("--iters", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    if args.smoke:
        sizes = dict(batch=2, dim=16, heads=2, lengths=[8], step_batch=2, memory=6, units=8)
        iters, repeats = 1, 1
    else:
        sizes = dict(
            batch=32, dim=256, heads=8, lengths=[128, 512], step_batch=64, memory=100, units=256
        )
        iters, repeats = args.iters, args.repeats

    rows = (
        rows_self_attention(sizes, iters, repeats)
        + rows_encoder_block(sizes, iters, repeats)
        + rows_bahdanau_step(sizes, iters, repeats)
    )
    header = f"{'figure':44} {'anchor':32} {'jit':5} {'ours ms':>9} {'anchor ms':>10} {'ratio':>6} {'target':>7}"
    print(header)
    print("-" * len(header))
    for name, anchor, jit, t_ours, t_anchor, target in rows:
        ratio = t_anchor / t_ours
        mark = "ok" if ratio >= target else "MISS"
        print(
            f"{name:44} {anchor:32} {str(jit):5} {1e3 * t_ours:9.2f} {1e3 * t_anchor:10.2f} "
            f"{ratio:6.2f} {'≥' + str(target):>5} {mark}"
        )
    return rows


if __name__ == "__main__":
    main()

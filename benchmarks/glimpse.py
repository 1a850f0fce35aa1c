"""Glimpse extraction throughput: `keras_adl.ops.extract_glimpses` against the TensorFlow anchor.

The anchor is what a Keras user would write without us: per scale, ``tf.image.extract_glimpse``
(``centered=True, normalized=True, noise="zero"``) of the wide patch, then
``tf.image.resize(..., method="area")`` down to ``g×g``, stacked. Both run inside a
``tf.function`` on the same batch (B=256 by default); ours also with ``jit_compile=True``
(the anchor has no XLA kernel). Each figure is the median of ``--repeats`` timed calls after a
warm-up. The table gives glimpses per second and the ratio ours / anchor (> 1: we are faster).
Also the time of a forward + backward pass to the images, which only ours supports.

    python benchmarks/glimpse.py
    python benchmarks/glimpse.py --smoke
"""

import argparse
import os
import platform
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_adl.ops.glimpse import extract_glimpses, glimpse_widths  # noqa: E402


def anchor_glimpses(images, locations, patch_size, num_scales, scale_factor=2.0):
    patches = []
    for width in glimpse_widths(patch_size, num_scales, scale_factor):
        side = int(round(width))
        patch = tf.image.extract_glimpse(
            images, [side, side], locations, centered=True, normalized=True, noise="zero"
        )
        patches.append(tf.image.resize(patch, [patch_size, patch_size], method="area"))
    return tf.stack(patches, axis=1)


def median_time(fn, args, repeats):
    fn(*args)  # warm-up (traces and compiles)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        out = fn(*args)
        np.asarray(out)  # wait for the result
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one repeat")
    args = parser.parse_args(argv)
    settings = [(28, 8, 1), (32, 8, 3), (60, 12, 3)]  # (image size, g, scales)
    if args.smoke:
        args.batch_size, args.repeats, settings = 4, 1, [(16, 4, 2)]
    print(
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"TF {tf.__version__}; B={args.batch_size}, median of {args.repeats}"
    )
    print(
        "| image | g × scales | anchor (glimpses/s) | ours (glimpses/s) | ours, XLA (glimpses/s)"
        " | ratio ours/anchor | ratio ours XLA/anchor | ours fwd+bwd, XLA (ms) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    results = []
    for size, g, scales in settings:
        images = tf.constant(rng.random((args.batch_size, size, size, 1)), tf.float32)
        locations = tf.constant(rng.uniform(-1, 1, (args.batch_size, 2)), tf.float32)
        anchor = tf.function(lambda x, l: anchor_glimpses(x, l, g, scales))
        ours = tf.function(lambda x, l: extract_glimpses(x, l, g, scales))
        ours_xla = tf.function(lambda x, l: extract_glimpses(x, l, g, scales), jit_compile=True)
        np.testing.assert_allclose(ours(images, locations), ours_xla(images, locations), atol=1e-4)

        @tf.function(jit_compile=True)
        def backward(x, l):
            with tf.GradientTape() as tape:
                tape.watch(x)
                loss = tf.reduce_sum(tf.square(extract_glimpses(x, l, g, scales)))
            return tape.gradient(loss, x)

        times = [
            median_time(f, (images, locations), args.repeats)
            for f in (anchor, ours, ours_xla, backward)
        ]
        rates = [args.batch_size / t for t in times[:3]]
        results.append(rates)
        print(
            f"| {size}×{size} | {g} × {scales} | {rates[0]:,.0f} | {rates[1]:,.0f} | "
            f"{rates[2]:,.0f} | {rates[1] / rates[0]:.2f} | {rates[2] / rates[0]:.2f} | "
            f"{times[3] * 1e3:.2f} |"
        )
    return results


if __name__ == "__main__":
    main()

"""A Neural Turing Machine learns to copy: train, test on longer sequences, look, export.

The NTM reads a sequence of random 8-bit vectors, then writes it back from memory. It is the
model of ``keras-adl train copy`` (`keras_adl.recipes.memory`) with the departures in
`OVERRIDES`: a 16 × 8 memory and a 64-unit controller instead of the recipe's 128 × 20 and
100 units (Adam 5e-3 is the recipe's rate for copy). The default settings (lengths 1–5, 1000 steps of 32 sequences)
take about half a minute on two CPU cores; ``--recipe --max-length 20 --steps 1500`` trains
the recipe's model, the paper's configuration (see benchmarks/memory_copy.py). The picture
shows the write and read weightings over time: the NTM writes along a diagonal, then reads the
same diagonal back.

    python examples/ntm_copy.py --out runs/ntm_copy
"""

import argparse
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_adl.data.algorithmic import copy_batch, task_dataset  # noqa: E402
from keras_adl.models import addressing_model  # noqa: E402
from keras_adl.recipes.memory.plots import plot_memory_addressing  # noqa: E402
from keras_adl.recipes.memory.spec import HELD_OUT  # noqa: E402
from keras_adl.recipes.memory.tasks import RECIPES  # noqa: E402

TASK, MODEL = "copy", "ntm"
RECIPE = RECIPES[TASK]
# The demo's departures from the recipe's settings, so that it learns in half a minute (the
# flags below replace them one by one; ``--recipe`` drops them all).
OVERRIDES = dict(memory_size=16, memory_width=8, controller_units=64)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-length", type=int, default=5)
    parser.add_argument(
        "--steps",
        type=int,
        default=1000,
        help=f"training steps of {RECIPE.spec.batch_size} sequences",
    )
    parser.add_argument(
        "--recipe", action="store_true", help="the recipe's settings, without the demo's OVERRIDES"
    )
    for flag in ("learning_rate", "controller_units", "memory_size"):
        default = OVERRIDES.get(flag, RECIPE.spec.preset(MODEL)[flag])
        parser.add_argument(
            "--" + flag.replace("_", "-"),
            type=type(default),
            help=f"(default: {default:g}"
            + ("; the recipe's with --recipe)" if flag in OVERRIDES else ", the recipe's)"),
        )
    parser.add_argument("--out", default="runs/ntm_copy")
    return parser.parse_args(argv)


def overrides(args):
    """The settings this run replaces: `OVERRIDES` (none with ``--recipe``), then the flags."""
    chosen = {} if args.recipe else dict(OVERRIDES)
    flags = dict(
        learning_rate=args.learning_rate,
        controller_units=args.controller_units,
        memory_size=args.memory_size,
    )
    chosen.update({name: value for name, value in flags.items() if value is not None})
    return chosen


def build_model(args):
    """The compiled model ``keras-adl train copy`` trains, with this run's overrides."""
    return RECIPE.build_model(MODEL, **overrides(args))


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)

    model = build_model(args)
    memory_size = {**RECIPE.spec.preset(MODEL), **overrides(args)}["memory_size"]
    train = task_dataset(
        TASK, RECIPE.spec.batch_size, seed=0, min_length=1, max_length=args.max_length
    )
    model.fit(train, steps_per_epoch=args.steps, epochs=1, shuffle=False, verbose=2)

    x, y, w = copy_batch(HELD_OUT, 1, args.max_length, seed=1)
    logs = model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
    print(
        f"held-out, lengths 1-{args.max_length}: {logs['bit_errors']:.3f} bit errors per "
        f"sequence (chance: {2 * (1 + args.max_length):.0f})"
    )
    result = {"bit_errors": logs["bit_errors"]}
    # Longer than anything seen in training (the memory has room for memory_size vectors).
    longer = min(2 * args.max_length, memory_size)
    lx, ly, lw = copy_batch(64, longer, longer, seed=2)
    long_logs = model.evaluate(lx, ly, sample_weight=lw, verbose=0, return_dict=True)
    print(f"length {longer}: {long_logs['bit_errors']:.3f} bit errors per sequence")
    result["bit_errors_longer"] = long_logs["bit_errors"]

    # The picture: addressing of one sequence, up to its last answer step.
    length = args.max_length
    px, _, _ = copy_batch(1, length, length, seed=3)
    addressing = addressing_model(model)(px[:, : 2 * length + 1])
    result["picture"] = plot_memory_addressing(
        addressing["write_weights"][0],
        addressing["read_weights"][0],
        os.path.join(args.out, "addressing.png"),
        title="NTM copying: memory addressing",
    )
    print(f"picture: {result['picture']}")

    # Export a SavedModel, reload it without keras_adl and check it computes the same logits.
    export_dir = os.path.join(args.out, "saved_model")
    shutil.rmtree(export_dir, ignore_errors=True)
    model.export(export_dir, format="tf_saved_model", verbose=False)
    reloaded = tf.saved_model.load(export_dir)  # keep a reference while calling it
    served = reloaded.serve(tf.constant(x[:8])).numpy()
    np.testing.assert_allclose(served, model.predict(x[:8], verbose=0), atol=1e-4)
    print(f"exported to {export_dir}; the reloaded SavedModel gives the same logits")
    result["export_dir"] = export_dir
    return result


if __name__ == "__main__":
    main()

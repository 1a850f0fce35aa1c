"""The Deep Recurrent Attention Model reads digit strips, against Show, Attend and Tell.

On the strips of ``benchmarks/captioning.py`` (3 scikit-learn digits side by side, 16×48
pixels; the same training digits, the same 500 held-out strips), each seed trains:

- ``dram``: the model of ``keras-adl train digit_strips_glimpses`` (`keras_adl.recipes.vision`:
  3 glimpses of 8×8 per symbol, 3 digits then END, a 4×12 context view, the symbols read
  from the bottom RNN, the policy's σ = 0.2, Adam 3e-3 decaying over the run);
- ``dram_random``: the same network with uniformly random glimpses;
- ``show_attend_tell``: the anchor, ``keras-adl train digit_strips``'s model trained as
  ``benchmarks/captioning.py`` trains it (λ = the recipe's, batch 32, ``--sat-epochs``).

Reported per seed: held-out exact match (every digit and END right) and digit accuracy; for
DRAM the fraction of the strip's pixels inside a glimpse (the widest patch; the context view
sees the whole strip at a quarter of its resolution besides), how often the glimpses of digit
``t+1`` lie right of digit ``t``'s (reading order), and a picture of one glimpse path.

``--data DIR`` draws the strips from MNIST / Fashion-MNIST IDX files instead (28×28 items,
84-pixel strips, 16×16 glimpses read by two 3×3 convolutions; held-out strips from the test
images), ``--samples N`` from the first N training images.

    python benchmarks/dram_strips.py                        # 3 seeds, 200 DRAM epochs
    python benchmarks/dram_strips.py --data /usr/share/datasets/fashion-mnist --samples 6000 \\
        --epochs 100 --seeds 0 1                            # strips of Fashion-MNIST items
    python benchmarks/dram_strips.py --seeds 0 --epochs 5 --sat-epochs 1   # smoke run
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import captioning  # noqa: E402
import keras  # noqa: E402
import numpy as np  # noqa: E402
from _overrides import add_set_argument  # noqa: E402

from keras_adl.data.digit_strips import caption_arrays, digit_strips  # noqa: E402
from keras_adl.recipes.vision.data import load_digits  # noqa: E402
from keras_adl.recipes.vision.data import strips as digit_strip_batches  # noqa: E402
from keras_adl.recipes.vision.evaluate import (  # noqa: E402
    exact_match,
    glimpse_coverage,
    reading_order,
)
from keras_adl.recipes.vision.plots import plot_glimpse_path  # noqa: E402
from keras_adl.recipes.vision.spec import CAPTION_LENGTH  # noqa: E402
from keras_adl.recipes.vision.tasks import RECIPES  # noqa: E402

TASK = "digit_strips_glimpses"
RECIPE = RECIPES[TASK]
HELD_OUT_SEED = 10_000  # the strips of benchmarks/captioning.py
MODELS = ("dram", "dram_random", "show_attend_tell")


def build_model(args, model_name="dram", seed=0, steps=None, digit_size=16):
    """The compiled model ``keras-adl train digit_strips_glimpses --model MODEL`` trains on
    strips of ``digit_size``-pixel items for ``steps`` optimizer steps (its learning rate
    decays over them; default: the recipe's epochs), with the run's ``seed`` (the recipe's is
    0) and ``--set``'s overrides (``learning_rate_decay=none`` for a constant rate)."""
    return RECIPE.build_model(
        model_name, digit_size, total_steps=steps, **dict(args.set, seed=seed)
    )


def load_items(args, num_train):
    """``(train, test)`` image/label pairs the strips are drawn from: scikit-learn's digits
    split as ``benchmarks/captioning.py`` splits them (``num_train`` for training), or with
    ``--data`` the IDX files' training images (the first ``--samples``) and test images."""
    if not args.data:
        return captioning.split_digits(num_train)
    (train_x, train_y), test = load_digits(args.data)
    return (train_x[: args.samples], train_y[: args.samples]), test


def run_dram(model_name, seed, train, test, args):
    keras.utils.set_random_seed(seed)
    data = digit_strip_batches(*train, args.batch_size, teacher_forcing=False, seed=seed)
    steps = args.epochs * len(data)
    model = build_model(args, model_name, seed, steps, digit_size=int(train[0].shape[1]))
    start = time.perf_counter()
    model.fit(data, epochs=args.epochs, verbose=0)
    seconds = time.perf_counter() - start
    strips, captions, _ = digit_strips(*test, args.test_strips, CAPTION_LENGTH, rng=HELD_OUT_SEED)
    _, targets = caption_arrays(captions)
    outputs = model.predict(strips, verbose=0)
    tokens = outputs["probabilities"].argmax(-1)
    layer = model.get_layer("deep_recurrent_attention")
    locations = outputs["locations"]
    if args.pictures:
        os.makedirs(args.pictures, exist_ok=True)
        plot_glimpse_path(
            strips[0],
            locations[0],
            layer.patch_size,
            layer.num_scales,
            os.path.join(args.pictures, f"{model_name}_seed{seed}.png"),
            title=f"{model_name}, seed {seed}",
        )
    return {
        "exact_match": exact_match(tokens, targets),
        "token_accuracy": float(np.mean(tokens[:, :CAPTION_LENGTH] == targets[:, :CAPTION_LENGTH])),
        "pixels_seen": glimpse_coverage(
            locations, strips.shape[1:3], layer.patch_size, layer.num_scales, layer.scale_factor
        ),
        "reading_order": reading_order(locations, layer.glimpses_per_symbol, CAPTION_LENGTH),
        "seconds": seconds,
        "steps": args.epochs * len(data),
    }


def _figure(result, key, digits=3):
    """``result[key]`` with ``digits`` decimals, or "–" for a model not run."""
    return f"{result[key]:.{digits}f}" if key in result else "–"


def _ratio(a, b):
    return f"{a / max(b, 1e-9):.2f}" if a is not None and b is not None else "–"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=200, help="DRAM epochs (batch 64)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--sat-epochs", type=int, default=10, help="captioning.py's default")
    parser.add_argument("--test-strips", type=int, default=500)
    parser.add_argument("--data", help="a directory of MNIST/Fashion-MNIST IDX files")
    parser.add_argument("--samples", type=int, help="with --data: the first N training images")
    parser.add_argument("--pictures", help="a directory for one glimpse path per model and seed")
    parser.add_argument(
        "--models", nargs="+", default=list(MODELS), choices=MODELS, help="(default: all)"
    )
    add_set_argument(parser, "the DRAM's settings, e.g. glimpses_per_symbol=3 num_scales=1")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    sat_args = captioning.parse_args(["--epochs", str(args.sat_epochs)])
    sat_args.test_strips = args.test_strips
    train, test = load_items(args, sat_args.num_train)
    print(f"Command: `{' '.join(['python'] + sys.argv)}`")
    print(f"Machine: {captioning.machine()}")
    print(
        "| seed | DRAM exact | DRAM random exact | SAT exact | DRAM / SAT | DRAM digits "
        "| pixels seen | reading order (random) | train s DRAM / random / SAT |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---|---|")
    rows = []
    for seed in args.seeds:
        row = {
            name: (
                captioning.run(sat_args.lambdas[0], seed, train, test, sat_args)
                if name == "show_attend_tell"
                else run_dram(name, seed, train, test, args)
            )
            for name in args.models
        }
        rows.append(row)
        learned, random, sat = (row.get(name, {}) for name in MODELS)
        print(
            f"| {seed} | {_figure(learned, 'exact_match')} | {_figure(random, 'exact_match')} | "
            f"{_figure(sat, 'exact_match')} | "
            f"{_ratio(learned.get('exact_match'), sat.get('exact_match'))} | "
            f"{_figure(learned, 'token_accuracy')} | {_figure(learned, 'pixels_seen', 2)} | "
            f"{_figure(learned, 'reading_order', 2)} ({_figure(random, 'reading_order', 2)}) | "
            + " / ".join(_figure(r, "seconds", 0) for r in (learned, random, sat))
            + " |",
            flush=True,
        )
    medians = {
        name: float(np.median([row[name]["exact_match"] for row in rows])) for name in args.models
    }
    print(
        "Median exact match: "
        + ", ".join(f"{name} {value:.3f}" for name, value in medians.items())
        + f"; DRAM {args.epochs} epochs of batch {args.batch_size}, "
        f"SAT {sat_args.epochs} epochs of batch {sat_args.batch_size}; "
        f"DRAM overrides: {dict(args.set) or 'none'}; items: "
        f"{args.data or 'sklearn digits'} ({len(train[0])} training images)."
    )
    return rows


if __name__ == "__main__":
    main()

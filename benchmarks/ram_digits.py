"""The Recurrent Attention Model against random glimpses and whole-image baselines.

Every model trains on the same data with the same budget (the task's schedule: Adam 3e-3
decaying along a cosine on translated digits, a constant 1e-3 on the cluttered canvases; batch
64, digits placed afresh every epoch, the task's epochs unless ``--epochs``): the models,
layouts and training of
``keras-adl train translated_digits|cluttered_digits|cluttered_digits_100 --model MODEL``
(`keras_adl.recipes.vision`), each run's seed replacing the recipe's. Models: ``ram`` (learned
glimpses), ``ram_random`` (the same network, uniformly random glimpses 2…n), and the paper's
whole-image baselines ``mlp`` (2 layers of 256 ReLUs) and ``convnet`` (8 filters of 10×10,
stride 5, then 256 ReLUs). Settings:

- ``translated``: scikit-learn's digits at 16×16 on a 32×32 canvas, 4 glimpses of 2 scales
  of an 8×8 patch;
- ``cluttered``: the digits at 28×28 on a 60×60 canvas with 4 pieces of 8×8 clutter,
  8 glimpses of 2 scales of 12×12, like the paper's cluttered setting (MNIST there, and 3
  scales: here, 3 scales see most of the canvas from anywhere and random glimpses did as well
  as learned ones);
- ``cluttered_100``: the digits at 28×28 on a 100×100 canvas with 8 pieces of clutter, 8
  glimpses of 3 scales of 12×12.

``--data DIR`` reads MNIST / Fashion-MNIST IDX files instead (``--data
/usr/share/datasets/fashion-mnist`` after ``make data``), ``--samples N`` the first N training
images of them. Reports held-out error (the test images at fixed random places; the RAM's
policy deterministic) per model and seed, the fraction of the RAM's glimpses 2…n centred on
the object, and with ``--eval-every E`` the held-out error every E epochs (error against
steps).

    python benchmarks/ram_digits.py --settings translated --seeds 0 1 2
    python benchmarks/ram_digits.py --settings cluttered --epochs 150 --seeds 0 1 2
    python benchmarks/ram_digits.py --settings cluttered --models ram convnet --scales 3
    python benchmarks/ram_digits.py --settings cluttered --set num_scales=2 --decay
    python benchmarks/ram_digits.py --settings translated --models ram mlp --epochs 150 \\
        --set learning_rate=1e-3 learning_rate_decay=none \\
        --baseline-set learning_rate=1e-3 learning_rate_decay=none
    python benchmarks/ram_digits.py --settings cluttered --samples 12000 --epochs 20 \\
        --data /usr/share/datasets/fashion-mnist
"""

import argparse
import os
import platform
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from _overrides import add_set_argument  # noqa: E402

from keras_adl.data.image_sources import load_sklearn_digits  # noqa: E402
from keras_adl.data.splits import split_dataset  # noqa: E402
from keras_adl.recipes.vision.data import (  # noqa: E402
    held_out_canvases,
    load_digits,
    translated_digits,
)
from keras_adl.recipes.vision.evaluate import glimpses_on_digit  # noqa: E402
from keras_adl.recipes.vision.spec import BASELINE_MODELS, RAM_MODELS  # noqa: E402
from keras_adl.recipes.vision.tasks import RECIPES  # noqa: E402

# Each setting is a recipe task, and the size of scikit-learn's digits it reads: the cluttered
# settings upscale them to 28×28, MNIST's size (the recipe reads them at 16).
SETTINGS = {
    "translated": ("translated_digits", 16),
    "cluttered": ("cluttered_digits", 28),
    "cluttered_100": ("cluttered_digits_100", 28),
}
MODELS = RAM_MODELS + BASELINE_MODELS


def digits(data, size):
    """``((train_x, train_y), (test_x, test_y))``: the recipe's digits, or scikit-learn's at
    ``size`` pixels split as the recipe splits them."""
    if data or size == 16:
        return load_digits(data)
    images, labels = load_sklearn_digits(size)
    return split_dataset(images, labels, 0.2, seed=0)


def build_model(args, setting=None, model_name="ram", seed=0, digit_size=None):
    """The compiled model ``keras-adl train TASK --model MODEL`` trains for a setting (the first
    of ``--settings`` by default), with ``seed``, (RAM) ``--scales`` and ``--decay``; a
    decaying rate decays over ``args.total_steps`` (default: the recipe's)."""
    task, size = SETTINGS[setting or args.settings[0]]
    if digit_size is None:
        digit_size = int(digits(args.data, size)[0][0].shape[1])
    overrides = dict(args.baseline_set)
    if model_name in RAM_MODELS:
        overrides = dict(args.set, seed=seed)
        if args.scales:
            overrides["num_scales"] = args.scales
    if args.decay:
        overrides["learning_rate_decay"] = "cosine"
    return RECIPES[task].build_model(
        model_name, digit_size, total_steps=args.total_steps, **overrides
    )


def held_out_error(model, canvases, labels):
    """Error of ``model`` on the held-out canvases, and the RAM's glimpse locations."""
    outputs = model.predict(canvases, batch_size=256, verbose=0)
    if isinstance(outputs, dict):
        return float(np.mean(outputs["probabilities"].argmax(-1) != labels)), outputs["locations"]
    return float(np.mean(outputs.argmax(-1) != labels)), None


class ErrorCurve(keras.callbacks.Callback):
    """Held-out error every ``every`` epochs, as ``(step, error)`` pairs."""

    def __init__(self, canvases, labels, every, steps_per_epoch):
        super().__init__()
        self.canvases, self.labels = canvases, labels
        self.every, self.steps_per_epoch = every, steps_per_epoch
        self.points = []

    def on_epoch_end(self, epoch, logs=None):
        if (epoch + 1) % self.every == 0:
            error, _ = held_out_error(self.model, self.canvases, self.labels)
            self.points.append(((epoch + 1) * self.steps_per_epoch, error))


def run(args, setting, model_name, seed):
    """``(error, on_digit or None, seconds, curve)`` for one model and seed."""
    task, size = SETTINGS[setting]
    (train_x, train_y), (test_x, test_y) = digits(args.data, size)
    if args.samples:
        train_x, train_y = train_x[: args.samples], train_y[: args.samples]
    digit = int(train_x.shape[1])
    recipe = RECIPES[task]
    layout = recipe.layout.of(digit)
    canvas = layout["canvas_size"]
    test = test_x[: args.test_samples], test_y[: args.test_samples]
    canvases, labels, offsets = held_out_canvases(test, layout)
    epochs = args.epochs or recipe.spec.epochs
    keras.utils.set_random_seed(seed)
    train = translated_digits(train_x, train_y, recipe.spec.batch_size, layout, seed=seed)
    curve = ErrorCurve(canvases, labels, args.eval_every or epochs + 1, len(train))
    start = time.perf_counter()
    args.total_steps = epochs * len(train)
    model = build_model(args, setting, model_name, seed, digit)
    model.fit(train, epochs=epochs, verbose=0, callbacks=[curve])
    seconds = time.perf_counter() - start
    error, locations = held_out_error(model, canvases, labels)
    on_digit = None if locations is None else glimpses_on_digit(locations, offsets, digit, canvas)
    return error, on_digit, seconds, curve.points


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--settings", nargs="+", default=["translated"], choices=sorted(SETTINGS))
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument(
        "--epochs", type=int, help="training epochs (default: the task's, as the CLI's)"
    )
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--data", help="a directory of MNIST/Fashion-MNIST IDX files")
    parser.add_argument("--samples", type=int, help="train on the first N training images")
    parser.add_argument(
        "--test-samples", type=int, default=2000, help="held-out images (default: %(default)s)"
    )
    parser.add_argument("--scales", type=int, help="override the RAM's number of scales")
    parser.add_argument("--eval-every", type=int, help="held-out error every E epochs too")
    add_set_argument(parser, "the RAM's settings, e.g. num_scales=2 location_std=0.2")
    add_set_argument(parser, "the whole-image baselines' settings", "--baseline-set")
    parser.add_argument(
        "--decay",
        action="store_true",
        help="cosine learning-rate decay to 1%% of the initial rate over the run, for every "
        "model (the translated task's schedule has it; --set learning_rate_decay=none removes it)",
    )
    args = parser.parse_args(argv)
    args.total_steps = None
    return args


def _median(values):
    return float(np.median(values)) if values else float("nan")


def main(argv=None):
    args = parse_args(argv)
    print(
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"{args.epochs or 'each task’s'} epochs; data: {args.data or 'sklearn digits'}; "
        f"samples: {args.samples or 'all'}; RAM overrides: {dict(args.set) or 'none'}; "
        f"baseline overrides: {dict(args.baseline_set) or 'none'}; "
        f"learning-rate decay: {'cosine for every model' if args.decay else 'the task’s'}"
    )
    for setting in args.settings:
        task = SETTINGS[setting][0]
        ram = RECIPES[task].settings("ram")
        print(
            f"{setting}: {args.epochs or RECIPES[task].spec.epochs} epochs; recipe's rate "
            f"{ram['learning_rate']:g}, decay {ram['learning_rate_decay'] or 'none'}"
        )
    header = " | ".join(f"{m} error" for m in args.models)
    print(f"| setting | seed | {header} | on object (RAM models) | train s |")
    print("|---|---|" + "---:|" * len(args.models) + "---|---|")
    results = {}
    for setting in args.settings:
        for seed in args.seeds:
            row = {m: run(args, setting, m, seed) for m in args.models}
            results[(setting, seed)] = row
            on_object = " / ".join(
                f"{m} {row[m][1]:.2f}" for m in args.models if row[m][1] is not None
            )
            print(
                f"| {setting} | {seed} | "
                + " | ".join(f"{row[m][0]:.3f}" for m in args.models)
                + f" | {on_object or '–'} | "
                + " / ".join(f"{row[m][2]:.0f}" for m in args.models)
                + " |",
                flush=True,
            )
            for m in args.models:
                if row[m][3]:
                    points = ", ".join(f"{step}: {error:.3f}" for step, error in row[m][3])
                    print(f"  curve {setting} seed {seed} {m} (step: error): {points}", flush=True)
        medians = {
            m: _median([results[(setting, s)][m][0] for s in args.seeds]) for m in args.models
        }
        print(
            f"Medians over seeds {args.seeds}, {setting}: "
            + ", ".join(f"{m} {v:.3f}" for m, v in medians.items())
        )
        if "ram" in medians:
            for other in ("ram_random", "convnet", "mlp"):
                if other in medians and medians[other] > 0:
                    print(f"  ram / {other} median error: {medians['ram'] / medians[other]:.2f}")
    return results


if __name__ == "__main__":
    main()

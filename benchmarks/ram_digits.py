"""The Recurrent Attention Model against its random-glimpse baseline on translated digits.

Both policies use the same network and training (Adam 1e-3, batch 64, digits placed afresh
every epoch): the models, layouts and training of ``keras-adl train translated_digits`` /
``cluttered_digits`` (`keras_adl.recipes.vision`), each run's seed replacing the recipe's; only
where glimpses 2…n look differs. Settings:

- ``translated``: scikit-learn's digits at 16×16 on a 32×32 canvas, 4 glimpses of one 8×8
  patch (the issue's figure: the learned policy beats random glimpses by ≥ 10 points);
- ``cluttered``: the digits at 28×28 on a 60×60 canvas with 4 pieces of 8×8 clutter,
  8 glimpses of 2 scales of 12×12, like the paper's cluttered setting (MNIST there, and 3
  scales: here, 3 scales see most of the canvas from anywhere and random glimpses did as well
  as learned ones; ``--data DIR`` reads MNIST / Fashion-MNIST IDX files instead).

Reports held-out error (the test digits at fixed random places, deterministic policy) and the
fraction of glimpses 2…n centred on the digit, per seed, and the difference random − learned.

    python benchmarks/ram_digits.py --settings translated --epochs 150 --seeds 0 1
    python benchmarks/ram_digits.py --settings cluttered --epochs 150 --seeds 0
    python benchmarks/ram_digits.py --settings cluttered --scales 3   # the paper's 3 scales
"""

import argparse
import os
import platform
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_adl.metrics import glimpses_on_digit  # noqa: E402
from keras_adl.recipes.vision import PLACEMENT_SEED, RECIPE, load_digits, ram_layout  # noqa: E402
from keras_adl.tasks.image_sources import load_sklearn_digits  # noqa: E402
from keras_adl.tasks.splits import split_dataset  # noqa: E402
from keras_adl.tasks.translated_digits import TranslatedDigits, translate_digits  # noqa: E402

# Each setting is a recipe task, and the size of scikit-learn's digits it reads: the cluttered
# setting upscales them to 28×28, MNIST's size (the recipe reads them at 16).
SETTINGS = {"translated": ("translated_digits", 16), "cluttered": ("cluttered_digits", 28)}
MODELS = {"learned": "ram", "random": "ram_random"}


def digits(data, size):
    """``((train_x, train_y), (test_x, test_y))``: the recipe's digits, or scikit-learn's at
    ``size`` pixels split as the recipe splits them."""
    if data or size == 16:
        return load_digits(data)
    images, labels = load_sklearn_digits(size)
    return split_dataset(images, labels, 0.2, seed=0)


def build_model(args, setting=None, policy="learned", seed=0, digit_size=None):
    """The compiled model ``keras-adl train TASK --model MODEL`` trains for a setting (the first
    of ``--settings`` by default) and policy, with ``seed`` and ``--scales``."""
    task, size = SETTINGS[setting or args.settings[0]]
    if digit_size is None:
        digit_size = int(digits(args.data, size)[0][0].shape[1])
    scales = {"num_scales": args.scales} if args.scales else {}
    return RECIPE.build_model(task, MODELS[policy], digit_size, seed=seed, **scales)


def run(args, setting, policy, seed):
    task, size = SETTINGS[setting]
    (train_x, train_y), (test_x, test_y) = digits(args.data, size)
    digit = int(train_x.shape[1])
    layout = ram_layout(task, digit)
    canvas, clutter = layout["canvas_size"], layout["num_clutter"]
    canvases, labels, offsets = translate_digits(
        test_x, test_y, canvas, num_clutter=clutter, rng=PLACEMENT_SEED
    )
    keras.utils.set_random_seed(seed)
    model = build_model(args, setting, policy, seed, digit)
    train = TranslatedDigits(
        train_x,
        train_y,
        RECIPE.task(task).batch_size,
        canvas_size=canvas,
        num_clutter=clutter,
        seed=seed,
    )
    start = time.perf_counter()
    model.fit(train, epochs=args.epochs, verbose=0)
    seconds = time.perf_counter() - start
    outputs = model.predict(canvases, verbose=0)
    error = float(np.mean(outputs["probabilities"].argmax(-1) != labels))
    return error, glimpses_on_digit(outputs["locations"], offsets, digit, canvas), seconds


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--settings", nargs="+", default=["translated"], choices=sorted(SETTINGS))
    parser.add_argument("--epochs", type=int, default=150)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--data", help="a directory of MNIST/Fashion-MNIST IDX files")
    parser.add_argument("--scales", type=int, help="override the setting's number of scales")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    print(
        f"Machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs; "
        f"{args.epochs} epochs; data: {args.data or 'sklearn digits'}"
    )
    print(
        "| setting | seed | learned error | random error | random − learned (target ≥ 0.10) "
        "| on digit, learned | on digit, random | train time learned / random (s) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    results = []
    for setting in args.settings:
        for seed in args.seeds:
            learned = run(args, setting, "learned", seed)
            random = run(args, setting, "random", seed)
            results.append((setting, seed, learned, random))
            print(
                f"| {setting} | {seed} | {learned[0]:.3f} | {random[0]:.3f} | "
                f"{random[0] - learned[0]:+.3f} | {learned[1]:.2f} | {random[1]:.2f} | "
                f"{learned[2]:.0f} / {random[2]:.0f} |",
                flush=True,
            )
    return results


if __name__ == "__main__":
    main()

"""The Deep Recurrent Attention Model reads digit strips glimpse by glimpse, left to right.

Three of scikit-learn's digits (upscaled to 16×16) side by side make a 16×48 strip. DRAM sees
the strip at a quarter of its resolution (its context network), then takes 3 glimpses of
8×8 per symbol and emits the three digits and END, one symbol after each 3 glimpses;
REINFORCE teaches it where to look. The model, data and held-out figures are those of
``keras-adl train digit_strips_glimpses`` (`keras_adl.recipes.vision`); the default 40 epochs
take about a minute on two CPU cores (benchmarks/dram_strips.py trains 200 for the figures of
benchmarks/RESULTS.md). It prints held-out exact match, the fraction of pixels the glimpses saw
and the reading order, draws one glimpse path, exports a SavedModel that reads image batches
and checks the reloaded one. ``--policy random`` trains the random-glimpse baseline.

    python examples/dram_strips.py --out runs/dram_strips
"""

import argparse
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_adl.data.digit_strips import digit_strips  # noqa: E402
from keras_adl.recipes.vision.data import load_digits  # noqa: E402
from keras_adl.recipes.vision.serving import make_dram_serving_fn  # noqa: E402
from keras_adl.recipes.vision.spec import (  # noqa: E402
    CAPTION_LENGTH,
    PLACEMENT_SEED,
    SKLEARN_TRAIN_DIGITS,
)
from keras_adl.recipes.vision.tasks import RECIPES  # noqa: E402
from keras_adl.training.export import export_serving_fn  # noqa: E402

TASK = "digit_strips_glimpses"
RECIPE = RECIPES[TASK]
MODELS = {"learned": "dram", "random": "dram_random"}  # --policy → the recipe's model
EPOCHS = 40  # the demo's departure from the recipe's 60 epochs, to take about a minute


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=EPOCHS, help="(default: %(default)s)")
    parser.add_argument("--policy", choices=sorted(MODELS), default="learned")
    parser.add_argument(
        "--units",
        type=int,
        default=RECIPE.settings("dram")["units"],
        help="both RNNs (default: the recipe's, %(default)s)",
    )
    parser.add_argument("--out", default="runs/dram_strips")
    return parser.parse_args(argv)


def build_model(args, digit_size=16, num_train=SKLEARN_TRAIN_DIGITS):
    """The compiled model ``keras-adl train digit_strips_glimpses --epochs E`` trains on
    ``num_train`` digits (its learning rate decays over the E epochs), with ``--units``."""
    steps = args.epochs * (num_train // RECIPE.spec.batch_size)
    return RECIPE.build_model(MODELS[args.policy], digit_size, total_steps=steps, units=args.units)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)

    (train_x, train_y), test = load_digits()
    digit_size = int(train_x.shape[1])
    model = build_model(args, digit_size, len(train_x))
    data = RECIPE.training_data(train_x, train_y, RECIPE.spec.batch_size, digit_size)
    model.fit(data, epochs=args.epochs, verbose=2)

    # The recipe's held-out strips of the test digits, and its picture of one glimpse path.
    metrics = RECIPE.figures(model, MODELS[args.policy], test, args.out)
    result = {
        "exact_match": metrics["held_out_exact_match"],
        "pixels_seen": metrics["held_out_pixels_seen"],
        "reading_order": metrics["held_out_reading_order"],
        "picture": os.path.join(args.out, "glimpses.png"),
    }
    print(
        f"held-out: exact match {result['exact_match']:.3f}, pixels seen "
        f"{result['pixels_seen']:.2f}, digit t+1 read right of digit t: "
        f"{result['reading_order']:.2f}"
    )
    print(f"picture: {result['picture']}")

    # A SavedModel from image batches to the reading and its glimpses, reloaded.
    export_dir = os.path.join(args.out, "saved_model")
    shutil.rmtree(export_dir, ignore_errors=True)
    export_serving_fn(model, export_dir, make_dram_serving_fn(model))
    reloaded = tf.saved_model.load(export_dir)
    strips, _, _ = digit_strips(*test, 8, num_digits=CAPTION_LENGTH, rng=PLACEMENT_SEED)
    served = reloaded.signatures["serving_default"](images=tf.constant(strips))
    expected = model.predict(strips, verbose=0)["probabilities"].argmax(-1)
    np.testing.assert_array_equal(served["tokens"].numpy(), expected)
    print(
        f"exported to {export_dir}; the reloaded SavedModel reads "
        f"{served['caption'].numpy()[0].decode()!r}"
    )
    result["export_dir"] = export_dir
    return result


if __name__ == "__main__":
    main()

"""The Recurrent Attention Model learns where to look: translated digits, 4 glimpses.

scikit-learn's digits (upscaled to 16×16) are placed at random on a 32×32 canvas, afresh every
epoch. RAM sees the canvas only through 4 glimpses, each an 8×8 patch and a 16×16 one
downsampled to 8×8: the first at the centre, the next three where its policy, trained by
REINFORCE, chooses to look. The same network with
uniformly random glimpses is the baseline (``--policy random``). Model, data, training and
held-out figures are those of ``keras-adl train translated_digits``
(`keras_adl.recipes.vision`): 300 epochs at Adam 3e-3 decaying along a cosine, the figures
of benchmarks/RESULTS.md (about 2 minutes on two CPU cores). With ``--data DIR`` it reads
MNIST / Fashion-MNIST IDX files instead (28×28 digits, 60×60 canvas).

    python examples/ram_digits.py --out runs/ram_digits
"""

import argparse
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_adl.data.translated_digits import translate_digits  # noqa: E402
from keras_adl.recipes.vision.data import load_digits  # noqa: E402
from keras_adl.recipes.vision.spec import PLACEMENT_SEED  # noqa: E402
from keras_adl.recipes.vision.tasks import RECIPES  # noqa: E402

TASK = "translated_digits"
RECIPE = RECIPES[TASK]
MODELS = {"learned": "ram", "random": "ram_random"}  # --policy → the recipe's model


def unit_overrides(units):
    """``--units U``: a core of U units, the glimpse network scaled with it (U/2 for the
    glimpse and location layers, U for their output), replacing the recipe's sizes."""
    return dict(
        glimpse_units=units // 2, location_units=units // 2, glimpse_output_units=units, units=units
    )


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--epochs", type=int, default=RECIPE.spec.epochs, help="(default: %(default)s)"
    )
    parser.add_argument("--policy", choices=sorted(MODELS), default="learned")
    parser.add_argument(
        "--units",
        type=int,
        help="core units, the glimpse network scaled with them (default: the "
        f"recipe's sizes, a core of {RECIPE.settings('ram')['units']})",
    )
    parser.add_argument("--data", help="a directory of MNIST/Fashion-MNIST IDX files")
    parser.add_argument("--out", default="runs/ram_digits")
    return parser.parse_args(argv)


def build_model(args, digit_size=None, steps_per_epoch=None):
    """The compiled model ``keras-adl train translated_digits`` trains for digits of
    ``digit_size`` pixels (default: those of the data), with ``--units`` if given; its rate
    decays over ``--epochs`` of ``steps_per_epoch`` (default: the recipe's length)."""
    if digit_size is None:
        digit_size = int(load_digits(args.data)[0][0].shape[1])
    overrides = {} if args.units is None else unit_overrides(args.units)
    total_steps = steps_per_epoch and args.epochs * steps_per_epoch
    return RECIPE.build_model(MODELS[args.policy], digit_size, total_steps=total_steps, **overrides)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)

    (train_x, train_y), test = load_digits(args.data)
    digit = int(train_x.shape[1])
    layout = RECIPE.layout.of(digit)
    canvas = layout["canvas_size"]
    train = RECIPE.training_data(train_x, train_y, RECIPE.spec.batch_size, digit)
    model = build_model(args, digit, len(train))
    model.fit(train, epochs=args.epochs, verbose=2)

    # Held out: the test digits at the recipe's fixed random places; the policy is
    # deterministic here. The recipe also draws one glimpse path.
    metrics = RECIPE.figures(model, MODELS[args.policy], test, args.out, digit)
    error, on_digit = metrics["held_out_error"], metrics["held_out_glimpses_on_digit"]
    print(
        f"held-out error {error:.3f}; glimpses 2-4 on the digit: {on_digit:.2f} "
        f"(uniformly random glimpses: about {(digit / canvas) ** 2:.2f})"
    )
    picture = os.path.join(args.out, "glimpses.png")
    print(f"picture: {picture}")

    # Export a SavedModel (images in, class probabilities and glimpse locations out), reload it
    # with TensorFlow only and check it computes the same probabilities.
    export_dir = os.path.join(args.out, "saved_model")
    shutil.rmtree(export_dir, ignore_errors=True)
    model.export(export_dir, format="tf_saved_model", verbose=False)
    reloaded = tf.saved_model.load(export_dir)
    canvases, _, _ = translate_digits(
        test[0][:8], test[1][:8], canvas, num_clutter=layout["num_clutter"], rng=PLACEMENT_SEED
    )
    served = reloaded.serve(tf.constant(canvases))
    np.testing.assert_allclose(
        served["probabilities"].numpy(),
        model.predict(canvases, verbose=0)["probabilities"],
        atol=1e-5,
    )
    print(f"exported to {export_dir}; the reloaded SavedModel gives the same probabilities")
    return {"error": error, "on_digit": on_digit, "picture": picture, "export_dir": export_dir}


if __name__ == "__main__":
    main()

"""Show, Attend and Tell reads digit strips aloud, looking at each digit in turn.

Three of scikit-learn's digits (upscaled to 16×16) side by side make a 16×48 strip; the caption
is the three digits. A small CNN turns the strip into a 2×6 grid of regions (with a learned
position embedding per region), an LSTM decoder attends over them with Bahdanau attention and
the doubly stochastic regulariser (λ = 1). The model, data and held-out figures are those of
``keras-adl train digit_strips`` (`keras_adl.recipes.vision`); it trains for `TRAINING`'s
fewer epochs of smaller batches, about 20 s on two CPU cores. It prints held-out exact match,
token accuracy and how often step t attends inside digit t, draws the attention of one
caption, exports a SavedModel that captions image batches and checks the reloaded one.

    python examples/caption_digits.py --out runs/caption_digits
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
from keras_adl.models import caption_greedy_decode  # noqa: E402
from keras_adl.recipes.vision.data import load_digits  # noqa: E402
from keras_adl.recipes.vision.serving import export_captioning  # noqa: E402
from keras_adl.recipes.vision.spec import CAPTION_LENGTH, PLACEMENT_SEED  # noqa: E402
from keras_adl.recipes.vision.tasks import RECIPES  # noqa: E402

TASK, MODEL = "digit_strips", "show_attend_tell"
RECIPE = RECIPES[TASK]
# The demo's departure from the recipe's training (20 epochs of 64 strips), to take ~20 s.
TRAINING = dict(epochs=10, batch_size=32)


def parse_args(argv=None):
    settings = RECIPE.settings(MODEL)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--epochs", type=int, default=TRAINING["epochs"], help="(default: %(default)s)"
    )
    parser.add_argument(
        "--regularization",
        type=float,
        default=settings["regularization"],
        help="λ (default: the recipe's, %(default)s)",
    )
    parser.add_argument(
        "--units", type=int, default=settings["units"], help="(default: the recipe's, %(default)s)"
    )
    parser.add_argument("--out", default="runs/caption_digits")
    return parser.parse_args(argv)


def build_model(args):
    """The compiled model ``keras-adl train digit_strips`` trains, with ``--units`` and
    ``--regularization``."""
    return RECIPE.build_model(MODEL, units=args.units, regularization=args.regularization)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)

    (train_x, train_y), test = load_digits()
    model = build_model(args)
    digit_size = int(train_x.shape[1])
    model.fit(
        RECIPE.training_data(train_x, train_y, TRAINING["batch_size"], digit_size),
        epochs=args.epochs,
        verbose=2,
    )

    # The recipe's held-out strips of the test digits, and its picture of one caption.
    metrics = RECIPE.figures(model, MODEL, test, args.out)
    result = {
        "exact_match": metrics["held_out_exact_match"],
        "token_accuracy": metrics["held_out_token_accuracy"],
        "alignment": metrics["held_out_alignment_hit_rate"],
        "picture": os.path.join(args.out, "attention.png"),
    }
    print(
        f"held-out: exact match {result['exact_match']:.3f}, token accuracy "
        f"{result['token_accuracy']:.3f}, step t attends inside digit t: "
        f"{result['alignment']:.3f}"
    )
    print(f"picture: {result['picture']}")

    # A SavedModel from image batches to captions, reloaded with TensorFlow only.
    export_dir = os.path.join(args.out, "saved_model")
    shutil.rmtree(export_dir, ignore_errors=True)
    export_captioning(model, export_dir, max_length=CAPTION_LENGTH + 1)
    reloaded = tf.saved_model.load(export_dir)
    strips, _, _ = digit_strips(*test, 8, num_digits=CAPTION_LENGTH, rng=PLACEMENT_SEED)
    tokens = keras.ops.convert_to_numpy(caption_greedy_decode(model, strips, CAPTION_LENGTH + 1)[0])
    served = reloaded.signatures["serving_default"](images=tf.constant(strips))
    np.testing.assert_array_equal(served["tokens"].numpy(), tokens)
    print(
        f"exported to {export_dir}; the reloaded SavedModel captions "
        f"{served['caption'].numpy()[0].decode()!r}"
    )
    result["export_dir"] = export_dir
    return result


if __name__ == "__main__":
    main()

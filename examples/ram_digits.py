"""The Recurrent Attention Model learns where to look: translated digits, 4 glimpses.

scikit-learn's digits (upscaled to 16×16) are placed at random on a 32×32 canvas, afresh every
epoch. RAM sees the canvas only through 4 glimpses of 8×8 pixels: the first at the centre, the
next three where its policy, trained by REINFORCE, chooses to look. The same network with
uniformly random glimpses is the baseline (``--policy random``). About 30 s for the default 60
epochs on two CPU cores; 150 epochs give the figures of benchmarks/RESULTS.md. With
``--data DIR`` it reads MNIST / Fashion-MNIST IDX files instead (28×28 digits, 60×60 canvas).

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

from keras_adl.models import recurrent_attention_model  # noqa: E402
from keras_adl.plotting import plot_glimpse_path  # noqa: E402
from keras_adl.tasks.digits import (  # noqa: E402
    TranslatedDigits,
    glimpses_on_digit,
    load_idx_dataset,
    load_sklearn_digits,
    split_dataset,
    translate_digits,
)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=60)
    parser.add_argument("--policy", choices=["learned", "random"], default="learned")
    parser.add_argument("--units", type=int, default=128)
    parser.add_argument("--data", help="a directory of MNIST/Fashion-MNIST IDX files")
    parser.add_argument("--out", default="runs/ram_digits")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)

    if args.data:
        (train_x, train_y), (test_x, test_y) = (load_idx_dataset(args.data, "train"),
                                                load_idx_dataset(args.data, "test"))
    else:
        images, labels = load_sklearn_digits(16)
        (train_x, train_y), (test_x, test_y) = split_dataset(images, labels, 0.2, seed=0)
    digit = train_x.shape[1]
    canvas = 2 * digit if digit <= 16 else 60

    model = recurrent_attention_model(
        (canvas, canvas, 1), 10, num_glimpses=4, patch_size=8, glimpse_units=args.units // 2,
        location_units=args.units // 2, glimpse_output_units=args.units, units=args.units,
        location_std=0.1, policy=args.policy, seed=0)
    model.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=True)
    train = TranslatedDigits(train_x, train_y, batch_size=64, canvas_size=canvas, seed=0)
    model.fit(train, epochs=args.epochs, verbose=2)

    # Held out: the test digits at fixed random places; the policy is deterministic here.
    canvases, labels, offsets = translate_digits(test_x, test_y, canvas, rng=123)
    outputs = model.predict(canvases, verbose=0)
    error = float(np.mean(outputs["probabilities"].argmax(-1) != labels))
    on_digit = glimpses_on_digit(outputs["locations"], offsets, digit, canvas)
    print(f"held-out error {error:.3f}; glimpses 2-4 on the digit: {on_digit:.2f} "
          f"(uniformly random glimpses: about {(digit / canvas) ** 2:.2f})")

    picture = plot_glimpse_path(canvases[0], outputs["locations"][0], patch_size=8, num_scales=1,
                                path=os.path.join(args.out, "glimpses.png"),
                                title=f"RAM ({args.policy}): glimpse path, label {labels[0]}")
    print(f"picture: {picture}")

    # Export a SavedModel (images in, class probabilities and glimpse locations out), reload it
    # with TensorFlow only and check it computes the same probabilities.
    export_dir = os.path.join(args.out, "saved_model")
    shutil.rmtree(export_dir, ignore_errors=True)
    model.export(export_dir, format="tf_saved_model", verbose=False)
    reloaded = tf.saved_model.load(export_dir)
    served = reloaded.serve(tf.constant(canvases[:8]))
    np.testing.assert_allclose(served["probabilities"].numpy(), outputs["probabilities"][:8],
                               atol=1e-5)
    print(f"exported to {export_dir}; the reloaded SavedModel gives the same probabilities")
    return {"error": error, "on_digit": on_digit, "picture": picture, "export_dir": export_dir}


if __name__ == "__main__":
    main()

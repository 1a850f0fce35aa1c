"""Attention seq2seq on date normalisation: train, evaluate, look at the attention, export, serve.

Human-written dates in 13 formats ("tuesday, 14 may 2002", "12/31/1999", …) are translated to
ISO ``YYYY-MM-DD`` character by character by the RNN encoder-decoder with Bahdanau attention:
the model, data and training of ``keras-adl train dates`` (`keras_adl.recipes.sequences`),
evaluated on the recipe's held-out dates with greedy decoding and with beam search.

    python examples/seq2seq_dates.py --out runs/dates
"""

import argparse
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_adl.data.dates import SOURCE_VOCAB, TARGET_LENGTH, TARGET_VOCAB  # noqa: E402
from keras_adl.models import beam_search, greedy_decode  # noqa: E402
from keras_adl.recipes.sequences.plots import plot_attention  # noqa: E402
from keras_adl.recipes.sequences.serving import export_seq2seq  # noqa: E402
from keras_adl.recipes.sequences.spec import HELD_OUT  # noqa: E402
from keras_adl.recipes.sequences.tasks import RECIPES  # noqa: E402

TASK, MODEL = "dates", "attention_seq2seq"
RECIPE = RECIPES[TASK]
MAX_LENGTH = TARGET_LENGTH - 1  # 10 characters + </s>


def exact_match(tokens, texts):
    return float(np.mean([p == t for p, t in zip(TARGET_VOCAB.decode(tokens), texts)]))


def parse_args(argv=None):
    """The flags; their defaults are the recipe's (``keras-adl train dates``)."""
    task = RECIPE.spec
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--train", type=int, default=task.samples, help="training pairs (default: %(default)s)"
    )
    parser.add_argument(
        "--test", type=int, default=HELD_OUT, help="held-out pairs (default: %(default)s)"
    )
    parser.add_argument("--epochs", type=int, default=task.epochs, help="(default: %(default)s)")
    parser.add_argument(
        "--units",
        type=int,
        default=RECIPE.spec.preset(MODEL)["units"],
        help="encoder and decoder units (default: %(default)s)",
    )
    parser.add_argument("--out", default="runs/dates")
    return parser.parse_args(argv)


def build_model(args):
    """The compiled model ``keras-adl train dates`` trains, with ``--units`` units."""
    return RECIPE.build_model(MODEL, units=args.units)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)

    inputs, targets, _ = RECIPE.arrays(args.train, seed=0)
    _, _, test = RECIPE.arrays(args.test, seed=1)  # the recipe's held-out dates
    model = build_model(args)
    model.fit(inputs, targets, batch_size=RECIPE.spec.batch_size, epochs=args.epochs, verbose=2)

    tokens, attention, greedy_ll = (
        keras.ops.convert_to_numpy(x) for x in greedy_decode(model, test["source"], MAX_LENGTH)
    )
    beam_tokens, _, beam_ll = (
        keras.ops.convert_to_numpy(x)
        for x in beam_search(model, test["source"], MAX_LENGTH, beam_width=4)
    )
    greedy = exact_match(tokens, test["target_text"])
    beam = exact_match(beam_tokens, test["target_text"])
    print(f"held-out exact match ({args.test} dates): greedy {greedy:.4f}, beam-4 {beam:.4f}")
    print(
        f"held-out mean log-likelihood: greedy {greedy_ll.mean():.5f}, beam-4 "
        f"{beam_ll.mean():.5f}; beam ≥ greedy on {np.mean(beam_ll >= greedy_ll - 1e-5):.4f}"
    )
    predictions = TARGET_VOCAB.decode(tokens)
    for source, prediction in list(zip(test["source_text"], predictions))[:5]:
        print(f"  {source:30s} -> {prediction}")

    example = int(np.argmax([len(s) for s in test["source_text"][:20]]))
    picture = plot_attention(
        attention[example],
        list(test["source_text"][example]),
        list(predictions[example]) + ["</s>"],
        os.path.join(args.out, "attention.png"),
        title="Bahdanau attention: output characters × source characters",
    )
    print(f"attention heatmap: {picture}")

    export_dir = os.path.join(args.out, "saved_model")
    shutil.rmtree(export_dir, ignore_errors=True)  # this script owns its output directory
    export_seq2seq(model, export_dir, SOURCE_VOCAB, TARGET_VOCAB, MAX_LENGTH)
    import tensorflow as tf

    reloaded = tf.saved_model.load(export_dir)
    raw = [
        "3 May 1998",
        "December 25, 2024",
        "sat apr 03 2060",
        "07/04/1976",
        test["source_text"][0],
    ]
    served = reloaded.signatures["serving_default"](inputs=tf.constant(raw))
    outputs = [s.decode() for s in served["output"].numpy()]
    print(f"SavedModel {export_dir} reloaded; predictions from raw strings:")
    for text, output in zip(raw, outputs):
        print(f"  {text:30s} -> {output}")
    if outputs[-1] != predictions[0]:
        raise SystemExit("the reloaded SavedModel disagrees with the in-memory model")
    return {"greedy": greedy, "beam": beam, "picture": picture, "export_dir": export_dir}


if __name__ == "__main__":
    main()

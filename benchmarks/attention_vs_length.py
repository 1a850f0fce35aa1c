"""Attention's central claim (Bahdanau et al. 2014, Fig. 2): accuracy by input length.

`attention_seq2seq` and the no-attention `encoder_decoder` are trained identically (same units,
data, epochs, seed) to reverse random strings of length 4-32; held-out exact match and
character accuracy are reported per length group. Both are the recipe's character-level models
(`keras_adl.recipes.sequences`: the ``dates`` settings and compile recipe) on a vocabulary of
26 letters. Without attention the whole input must pass
through one fixed vector, so accuracy should fall on the longest group; with attention it should
hold.

    python benchmarks/attention_vs_length.py            # full settings (≈ 5 min on 2 cores)
    python benchmarks/attention_vs_length.py --smoke    # tiny, checks the script runs
"""

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_adl.models import greedy_decode  # noqa: E402
from keras_adl.recipes.sequences.tasks import RECIPES  # noqa: E402
from keras_adl.text.char_vocabulary import CharVocabulary  # noqa: E402

VOCAB = CharVocabulary("abcdefghijklmnopqrstuvwxyz")
GROUPS = [(4, 10), (11, 20), (21, 32)]
MODELS = ("attention_seq2seq", "encoder_decoder")
# Reversal is a task of its own vocabulary: the recipe's ``pairs`` build (vocabulary sizes
# given) with the settings of its character-level task, ``dates``.
SETTINGS_OF = "dates"
SETTINGS_TASK, PAIRS = RECIPES[SETTINGS_OF].spec, RECIPES["pairs"]
# --smoke: a tiny run that only checks the script works (``units`` replaces the recipe's).
SMOKE = dict(train=128, epochs=1, units=8)


def reversal_data(num, max_length, seed):
    rng = np.random.default_rng(seed)
    letters = np.array(list(VOCAB.chars))
    sources = [
        "".join(rng.choice(letters, size=rng.integers(4, max_length + 1))) for _ in range(num)
    ]
    targets = [s[::-1] for s in sources]
    return {
        "source": VOCAB.encode(sources, max_length),
        "decoder_input": VOCAB.encode(targets, max_length + 1, add_start=True),
        "target": VOCAB.encode(targets, max_length + 1, add_end=True),
        "sources": sources,
        "targets": targets,
    }


def evaluate(model, test, max_length):
    tokens = keras.ops.convert_to_numpy(greedy_decode(model, test["source"], max_length + 1)[0])
    predictions = VOCAB.decode(tokens)
    rows = []
    for low, high in GROUPS:
        idx = [i for i, s in enumerate(test["sources"]) if low <= len(s) <= high]
        exact = np.mean([predictions[i] == test["targets"][i] for i in idx])
        chars = np.mean(
            [
                np.mean(
                    [
                        a == b
                        for a, b in zip(
                            predictions[i].ljust(len(test["targets"][i])), test["targets"][i]
                        )
                    ]
                )
                for i in idx
            ]
        )
        rows.append((f"{low}-{high}", len(idx), exact, chars))
    return rows


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--train", type=int, default=30000)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument(
        "--units",
        type=int,
        default=SETTINGS_TASK.preset(MODELS[0])["units"],
        help="encoder and decoder units (default: the recipe's, %(default)s)",
    )
    args = parser.parse_args(argv)
    if args.smoke:
        vars(args).update(SMOKE)
    return args


def build_model(args, model_name=MODELS[0]):
    """The recipe's compiled ``model_name`` for the reversal vocabulary, with ``--units``."""
    settings = dict(SETTINGS_TASK.preset(model_name), units=args.units)
    return PAIRS.build_model(model_name, len(VOCAB), len(VOCAB), **settings)


def main(argv=None):
    args = parse_args(argv)
    max_length = 32
    train = reversal_data(args.train, max_length, seed=0)
    test = reversal_data(300 if args.smoke else 1500, max_length, seed=1)
    results = {}
    for name in MODELS:
        keras.utils.set_random_seed(0)
        model = build_model(args, name)
        start = time.perf_counter()
        model.fit(
            {"source": train["source"], "decoder_input": train["decoder_input"]},
            train["target"],
            batch_size=SETTINGS_TASK.batch_size,
            epochs=args.epochs,
            verbose=0,
        )
        results[name] = (evaluate(model, test, max_length), time.perf_counter() - start)
    print(
        f"reversal of random strings; train {args.train} × {args.epochs} epochs, units "
        f"{args.units}; held-out {len(test['sources'])}"
    )
    print(
        f"{'length':>8} {'n':>5} | {'attention exact':>15} {'chars':>6} | "
        f"{'no-attention exact':>18} {'chars':>6}"
    )
    for a, b in zip(results["attention_seq2seq"][0], results["encoder_decoder"][0]):
        print(f"{a[0]:>8} {a[1]:5d} | {a[2]:15.3f} {a[3]:6.3f} | {b[2]:18.3f} {b[3]:6.3f}")
    print(
        f"training time: attention {results['attention_seq2seq'][1]:.0f} s, "
        f"no attention {results['encoder_decoder'][1]:.0f} s"
    )
    return results


if __name__ == "__main__":
    main()

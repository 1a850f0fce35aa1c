"""Show, Attend and Tell on digit strips: the doubly stochastic regulariser on (λ = 1) and off.

`show_attend_tell` is trained identically (same seed, data, steps) with λ = 1 (the authors'
value, the recipe's) and λ = 0 on captioned strips of 3 scikit-learn digits
(`keras_adl.data.digit_strips`, 16×48 pixels, captions ``<s> d1 d2 d3 </s>``). Training
digits and held-out digits are disjoint images. Reported on held-out strips: exact match of the greedy caption, token accuracy over the
digits, the alignment hit rate (does step t's most-attended region lie in digit t? from the
teacher-forced attention) and the regulariser's value ``mean_B Σ_i (1 − Σ_t α_ti)²`` without
λ, with its floor ``L (1 − T/L)²`` for ``T`` steps over ``L`` regions. The anchor (REFERENCES.md)
is ≈0.99 token accuracy and ≈1.00 alignment with a positional embedding. The model and its
compile recipe are those of ``keras-adl train digit_strips`` (`keras_adl.recipes.vision`, whose
settings are the flags' defaults); the benchmark's own are its data split, batches of 32 and
the λ sweep.

    python benchmarks/captioning.py                       # 3 seeds, 10 epochs (≈ 3 min)
    python benchmarks/captioning.py --seeds 0 --epochs 2  # smoke run
    python benchmarks/captioning.py --encoder-filters 32 64   # the default 4×12 grid, L = 48
"""

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras  # noqa: E402
import numpy as np  # noqa: E402
from _machine import machine  # noqa: E402

from keras_adl.conventions import END  # noqa: E402
from keras_adl.data.digit_strips import caption_arrays, digit_strips  # noqa: E402
from keras_adl.data.image_sources import load_sklearn_digits  # noqa: E402
from keras_adl.models import (  # noqa: E402
    caption_attention,
    caption_greedy_decode,
    caption_grid_shape,
)
from keras_adl.ops import doubly_stochastic_penalty  # noqa: E402
from keras_adl.recipes.vision.data import strips as digit_strip_batches  # noqa: E402
from keras_adl.recipes.vision.evaluate import alignment_hit_rate, exact_match  # noqa: E402
from keras_adl.recipes.vision.spec import CAPTION_LENGTH  # noqa: E402
from keras_adl.recipes.vision.tasks import RECIPES  # noqa: E402

TASK, MODEL = "digit_strips", "show_attend_tell"
RECIPE = RECIPES[TASK]
NUM_DIGITS = CAPTION_LENGTH


def split_digits(num_train):
    images, labels = load_sklearn_digits(size=16)
    order = np.random.default_rng(0).permutation(len(images))
    train, test = order[:num_train], order[num_train:]
    return (images[train], labels[train]), (images[test], labels[test])


def build_model(args, strength=None, digit_size=16):
    """The compiled model ``keras-adl train digit_strips`` trains for digits of ``digit_size``
    pixels, with the flags' settings and λ = ``strength`` (default: the first of
    ``--lambdas``)."""
    return RECIPE.build_model(
        MODEL,
        digit_size,
        jit_compile=not args.no_jit,
        learning_rate=args.learning_rate,
        units=args.units,
        embedding_dim=args.embedding_dim,
        encoder_filters=tuple(args.encoder_filters),
        regularization=args.lambdas[0] if strength is None else strength,
    )


def run(strength, seed, train, test, args):
    keras.utils.set_random_seed(seed)
    digit_size = int(train[0].shape[1])
    model = build_model(args, strength, digit_size)
    data = digit_strip_batches(*train, args.batch_size, seed=seed)
    start = time.perf_counter()
    model.fit(data, epochs=args.epochs, verbose=0)
    seconds = time.perf_counter() - start

    strips, captions, spans = digit_strips(*test, args.test_strips, NUM_DIGITS, rng=10_000)
    decoder_input, targets = caption_arrays(captions)
    tokens = keras.ops.convert_to_numpy(caption_greedy_decode(model, strips, NUM_DIGITS + 1)[0])
    attention = caption_attention(model, {"image": strips, "decoder_input": decoder_input})
    penalty = doubly_stochastic_penalty(attention, decoder_input != 0)
    regions = model.get_layer("encoder").output.shape[1]
    grid_width = caption_grid_shape(model)[1]  # its cells cover the pixels the poolings saw
    covered = grid_width * (strips.shape[2] // grid_width)
    return {
        "lambda": strength,
        "seed": seed,
        "exact_match": exact_match(tokens, targets),
        "token_accuracy": float(np.mean(tokens[:, :NUM_DIGITS] == targets[:, :NUM_DIGITS])),
        "end_accuracy": float(np.mean(tokens[:, NUM_DIGITS] == END)),
        "alignment": alignment_hit_rate(
            keras.ops.convert_to_numpy(attention), spans, captions, grid_width, covered
        ),
        "penalty": float(np.mean(keras.ops.convert_to_numpy(penalty))),
        "regions": regions,
        "steps": int(args.epochs * len(data)),
        "seconds": seconds,
    }


def parse_args(argv=None):
    settings = RECIPE.settings(MODEL)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument(
        "--lambdas", nargs="+", type=float, default=[settings["regularization"], 0.0]
    )
    parser.add_argument("--epochs", type=int, default=10, help="epochs of 43 steps (batch 32)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--learning-rate", type=float, default=settings["learning_rate"])
    parser.add_argument("--units", type=int, default=settings["units"])
    parser.add_argument("--embedding-dim", type=int, default=settings["embedding_dim"])
    parser.add_argument(
        "--encoder-filters",
        nargs="+",
        type=int,
        default=list(settings["encoder_filters"]),
        help="one conv + 2x2 pool per entry; 3 entries give a 2x6 grid (L=12)",
    )
    parser.add_argument(
        "--num-train",
        type=int,
        default=1400,
        help="digit images for training; the rest (of 1797) are held out",
    )
    parser.add_argument("--test-strips", type=int, default=500)
    parser.add_argument("--no-jit", action="store_true")
    parser.add_argument("--out", default="runs/bench/captioning.json")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    train, test = split_digits(args.num_train)
    results = []
    for seed in args.seeds:
        for strength in args.lambdas:
            result = run(strength, seed, train, test, args)
            results.append(result)
            print(
                f"λ={strength:g} seed {seed}: exact {result['exact_match']:.3f}, tokens "
                f"{result['token_accuracy']:.3f}, alignment {result['alignment']:.3f}, "
                f"penalty {result['penalty']:.2f} ({result['seconds']:.0f} s)",
                flush=True,
            )

    regions, steps = results[0]["regions"], NUM_DIGITS + 1
    floor = regions * (1 - steps / regions) ** 2
    print(f"\nCommand: `{' '.join(['python'] + sys.argv)}`")
    print(f"Machine: {machine()}")
    print(
        f"Task: {NUM_DIGITS}-digit strips 16×{16 * NUM_DIGITS}, {args.num_train} training "
        f"digit images, {args.test_strips} held-out strips from the other "
        f"{1797 - args.num_train}; L = {regions} regions, T = {steps} steps (penalty floor "
        f"L(1 − T/L)² = {floor:.2f}); {results[0]['steps']} steps of batch "
        f"{args.batch_size}, Adam {args.learning_rate:g}, units {args.units}, filters "
        f"{tuple(args.encoder_filters)}. Anchor: ≈0.99 token accuracy, ≈1.00 alignment.\n"
    )
    print(
        "| λ | seed | exact match | token accuracy | alignment hit rate | penalty "
        "Σ_i(1−Σ_t α_ti)² | train s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        print(
            f"| {r['lambda']:g} | {r['seed']} | {r['exact_match']:.3f} | "
            f"{r['token_accuracy']:.3f} | {r['alignment']:.3f} | {r['penalty']:.2f} | "
            f"{r['seconds']:.0f} |"
        )
    if len(args.seeds) > 1:
        for strength in args.lambdas:
            runs = [r for r in results if r["lambda"] == strength]
            mean = {
                k: np.mean([r[k] for r in runs])
                for k in ("exact_match", "token_accuracy", "alignment", "penalty", "seconds")
            }
            print(
                f"| {strength:g} | mean of {len(runs)} | {mean['exact_match']:.3f} | "
                f"{mean['token_accuracy']:.3f} | {mean['alignment']:.3f} | "
                f"{mean['penalty']:.2f} | {mean['seconds']:.0f} |"
            )
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

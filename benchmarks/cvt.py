"""Cross-view training (CVT) against the same tagger on its labels alone: the date-field task.

The model, data and schedule are ``keras-adl train date_fields``'s (`keras_adl.recipes.tagging`:
a word-level 2-layer BiLSTM, 64 units per direction, prediction modules of 64 hidden units,
dropout 0.3, Adam 1e-3 with a global clip of 5, batches of 32, ``--epochs`` × 300 steps).
Every run takes the same number of steps: the supervised baseline's are all labelled batches,
CVT's alternate a labelled and an unlabelled batch (20,000 unlabelled sequences), so the
baseline sees each labelled sequence twice as often. Scores: token accuracy of the primary
module on 2,000 held-out sequences (the same for every run), at the end of training (no
held-out data is used to choose anything). The labelled and unlabelled sequences are drawn
with the seed added to their seeds, so each seed is a different labelled sample.

Parts (``--part``, default both):

``sizes``
    CVT (all four views) and supervised-only at ``--sizes`` labelled sequences, ``--seeds``
    seeds each: mean ± standard error, and the gain, mean ± standard error of the paired
    (same seed, same labelled sample) differences. Picture: ``accuracy_vs_labelled.png``.
``views``
    At the smallest size: CVT without each view in turn, and with each view alone.

    python benchmarks/cvt.py                       # both parts (≈ 40 min on 2 cores)
    python benchmarks/cvt.py --part sizes --sizes 50 --seeds 5
    python benchmarks/cvt.py --smoke               # tiny settings (seconds)
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

from keras_adl.recipes.tagging import data, spec  # noqa: E402
from keras_adl.recipes.tagging.evaluate import token_accuracy  # noqa: E402
from keras_adl.recipes.tagging.plots import plot_accuracy_against_labelled  # noqa: E402
from keras_adl.recipes.tagging.tasks import RECIPES  # noqa: E402

TASK = RECIPES["date_fields"]
MODEL = "bilstm"
SMOKE_OVERRIDES = dict(word_dim=8, units=8, hidden_units=8)


def run_once(labelled, views, seed, args):
    """``(primary accuracy, {view: accuracy}, seconds)`` of one seeded run: CVT with ``views``,
    or the labels alone for ``views=()``."""
    keras.utils.set_random_seed(seed)
    options = {
        "labelled": labelled,
        "unlabelled": "on" if views else "off",
        "views": ",".join(views) or ",".join(spec.VIEWS),
    }
    tagging_data = TASK.tagging_data(MODEL, options, args.unlabelled, seed)
    tagging_data = tagging_data._replace(test=tuple(a[: args.test] for a in tagging_data.test))
    overrides = SMOKE_OVERRIDES if args.smoke else {}
    model = TASK.build_model(MODEL, tagging_data, jit_compile=True, **overrides)
    dataset = data.training_dataset(tagging_data, TASK.spec.batch_size, seed=seed)
    start = time.perf_counter()
    model.fit(dataset, steps_per_epoch=args.steps, epochs=args.epochs, shuffle=False, verbose=0)
    seconds = time.perf_counter() - start
    words, tags = tagging_data.test
    outputs = model.predict(data.model_inputs(words), batch_size=256, verbose=0)
    accuracies = {
        key: token_accuracy(tags, np.asarray(value).argmax(-1)) for key, value in outputs.items()
    }
    primary = accuracies.pop(tagging_data.task)
    return primary, {k.split("/", 1)[1]: v for k, v in accuracies.items()}, seconds


def mean_se(values):
    """``(mean, standard error)`` of ``values`` (SE 0 for one value)."""
    values = np.asarray(values, "float64")
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else 0.0
    return float(values.mean()), float(se)


def percent(values):
    mean, se = mean_se(values)
    return f"{100 * mean:.2f} ± {100 * se:.2f}"


def sizes_part(args, results):
    """CVT and supervised-only at each size, over seeds; prints the table, draws the picture."""
    by_method = {"CVT": {}, "supervised": {}}
    for size in args.sizes:
        for method, views in (("supervised", ()), ("CVT", spec.VIEWS)):
            runs = [run_once(size, views, seed, args) for seed in range(args.seeds)]
            by_method[method][size] = [r[0] for r in runs]
            results["sizes"].append(
                {
                    "labelled": size,
                    "method": method,
                    "accuracy": [r[0] for r in runs],
                    "auxiliary_accuracy": [r[1] for r in runs],
                    "seconds": [r[2] for r in runs],
                }
            )
            print(f"  {size} labelled, {method}: {percent(by_method[method][size])}", flush=True)
    print("\n| labelled | supervised (%) | CVT (%) | gain (points, paired) | seconds per run |")
    print("|---:|---:|---:|---:|---:|")
    for size in args.sizes:
        gains = np.subtract(by_method["CVT"][size], by_method["supervised"][size])
        seconds = [s for r in results["sizes"] if r["labelled"] == size for s in r["seconds"]]
        print(
            f"| {size} | {percent(by_method['supervised'][size])} | "
            f"{percent(by_method['CVT'][size])} | {percent(gains)} | {np.median(seconds):.0f} |"
        )
    path = os.path.join(args.out, "accuracy_vs_labelled.png")
    plot_accuracy_against_labelled(
        by_method, path, title=f"date fields: CVT vs supervised ({args.seeds} seeds)"
    )
    print(f"picture: {path}")


def views_part(args, results):
    """At the smallest size: all views, each dropped, each alone."""
    size = min(args.sizes)
    settings = [("all four", spec.VIEWS)]
    settings += [(f"without {v}", tuple(w for w in spec.VIEWS if w != v)) for v in spec.VIEWS]
    settings += [(f"{v} alone", (v,)) for v in spec.VIEWS]
    if args.smoke:
        settings = settings[:2]
    print(f"\n| views ({size} labelled) | CVT (%) |")
    print("|---|---:|")
    for name, views in settings:
        accuracies = [run_once(size, views, seed, args)[0] for seed in range(args.seeds)]
        results["views"].append({"views": list(views), "labelled": size, "accuracy": accuracies})
        print(f"| {name} | {percent(accuracies)} |", flush=True)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("sizes", "views", "all"), default="all")
    parser.add_argument("--sizes", default="50,200,1000")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=TASK.spec.epochs)
    parser.add_argument("--steps", type=int, default=spec.STEPS_PER_EPOCH)
    parser.add_argument("--unlabelled", type=int, default=TASK.spec.samples)
    parser.add_argument("--test", type=int, default=spec.TEST_SEQUENCES)
    parser.add_argument("--out", default="runs/cvt")
    parser.add_argument("--smoke", action="store_true", help="tiny settings: the path only")
    args = parser.parse_args(argv)
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    if args.smoke:
        args.sizes, args.seeds, args.epochs, args.steps = [8], 2, 1, 4
        args.unlabelled, args.test = 64, 64
    os.makedirs(args.out, exist_ok=True)
    print(f"Machine: {machine()}")
    print(
        f"date_fields, {MODEL}: {args.epochs} × {args.steps} steps of {TASK.spec.batch_size}, "
        f"{args.unlabelled} unlabelled, {args.test} held-out sequences, {args.seeds} seeds"
    )
    results = {"sizes": [], "views": [], "settings": vars(args)}
    if args.part in ("sizes", "all"):
        sizes_part(args, results)
    if args.part in ("views", "all"):
        views_part(args, results)
    with open(os.path.join(args.out, "cvt.json"), "w") as f:
        json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()

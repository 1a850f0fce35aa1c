"""Cross-view training (CVT) against the same tagger on its labels alone: the date-field task.

The model, data and schedule are ``keras-adl train date_fields``'s (`keras_adl.recipes.tagging`:
a word-level 2-layer BiLSTM, 64 units per direction, prediction modules of 64 hidden units,
dropout 0.3, Adam 1e-3 with a global clip of 5, batches of 32, ``--epochs`` × ``--steps``
(300) labelled batches). Every run has the same supervised schedule: the baseline trains on the
labelled batches alone; CVT follows each with an unlabelled batch (20,000 unlabelled
sequences), twice the steps. Scores: token accuracy of the primary
module on 2,000 held-out sequences (the same for every run), at the end of training (no
held-out data is used to choose anything). The labelled and unlabelled sequences are drawn
with the seed added to their seeds, so each seed is a different labelled sample.

Parts (``--part``, one or more; default all):

``sizes``
    CVT (all four views) and supervised-only at ``--sizes`` labelled sequences, ``--seeds``
    seeds each: mean ± standard error, and the gain, mean ± standard error of the paired
    (same seed, same labelled sample) differences. Picture: ``accuracy_vs_labelled.png``.
``views``
    At the smallest size: CVT without each view in turn, and with each view alone.
``tasks``
    Multi-task against single-task on real English: sentences of Debian's fortunes
    (`keras_adl.data.english_tags`, ``make data``) with two silver taggings, part of speech
    (Lingua::EN::Tagger) and WordNet supersense (most frequent sense); ``--task-labelled``
    labelled sentences per task (disjoint), the rest unlabelled, 1,000 held out (the same for
    every seed); words seen twice in the training sentences, the rest ``<unk>``. Settings: each
    task alone (labels alone, and CVT), both tasks sharing the encoder (labels alone, and CVT:
    a labelled batch of each task in turn, each followed by an unlabelled one). Every setting
    has the same number of labelled batches, so a task gets half of them with two tasks.

    python benchmarks/cvt.py                       # all three parts (≈ 1 h on 2 cores)
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

from keras_adl.conventions import NUM_SPECIAL_TOKENS  # noqa: E402
from keras_adl.data.english_tags import english_tag_arrays, english_tag_sentences  # noqa: E402
from keras_adl.recipes.tagging import data, spec  # noqa: E402
from keras_adl.recipes.tagging.build import build_model  # noqa: E402
from keras_adl.recipes.tagging.evaluate import token_accuracy  # noqa: E402
from keras_adl.recipes.tagging.plots import plot_accuracy_against_labelled  # noqa: E402
from keras_adl.recipes.tagging.tasks import RECIPES  # noqa: E402

TASK = RECIPES["date_fields"]
MODEL = "bilstm"
SMOKE_OVERRIDES = dict(word_dim=8, units=8, hidden_units=8)


def run_once(labelled, views, seed, args):
    """``(primary accuracy, {view: accuracy}, seconds)`` of one seeded run: CVT with ``views``,
    or the labels alone for ``views=()``."""
    keras.backend.clear_session()  # each run's graphs and compiled steps go with it
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
    steps = data.steps_per_epoch(tagging_data.unlabelled, args.steps)
    model.fit(dataset, steps_per_epoch=steps, epochs=args.epochs, shuffle=False, verbose=0)
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
            each = ", ".join(f"{100 * a:.2f}" for a in by_method[method][size])
            print(f"  {size} labelled, {method}: {each}", flush=True)
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
    if args.ablation in ("drop", "both"):
        settings += [(f"without {v}", tuple(w for w in spec.VIEWS if w != v)) for v in spec.VIEWS]
    if args.ablation in ("alone", "both"):
        settings += [(f"{v} alone", (v,)) for v in spec.VIEWS]
    if args.smoke:
        settings = settings[:2]
    print(f"\n| views ({size} labelled) | CVT (%) |")
    print("|---|---:|")
    done = {  # the sizes part's CVT runs have all four views
        tuple(spec.VIEWS): r["accuracy"]
        for r in results["sizes"]
        if r["labelled"] == size and r["method"] == "CVT"
    }
    for name, views in settings:
        accuracies = done.get(tuple(views)) or [
            run_once(size, views, seed, args)[0] for seed in range(args.seeds)
        ]
        results["views"].append({"views": list(views), "labelled": size, "accuracy": accuracies})
        print(f"| {name} | {percent(accuracies)} |", flush=True)


PARTS = ("sizes", "views", "tasks")
ENGLISH_TEST = 1000
ENGLISH_SETTINGS = (  # (name, labelled tasks, views)
    ("pos alone, labels", ("pos",), ()),
    ("pos alone, CVT", ("pos",), spec.VIEWS),
    ("supersense alone, labels", ("supersense",), ()),
    ("supersense alone, CVT", ("supersense",), spec.VIEWS),
    ("both, labels", ("pos", "supersense"), ()),
    ("both, CVT", ("pos", "supersense"), spec.VIEWS),
)


def english_split(sentences, seed, args):
    """``(labelled {task: (words, tags)}, unlabelled words, test {task: (words, tags)},
    vocabulary size, tag counts)``: disjoint labelled sentences per task drawn with ``seed``,
    the held-out ones fixed."""
    test, pool = sentences[:ENGLISH_TEST], sentences[ENGLISH_TEST:]
    order = np.random.default_rng(seed).permutation(len(pool))
    n = args.task_labelled
    parts = [[pool[i] for i in order[k * n : (k + 1) * n]] for k in range(2)]
    rest = [pool[i] for i in order[2 * n : 2 * n + args.unlabelled]]
    _, _, _, tag_names = english_tag_arrays(sentences)  # every tag of the corpus
    train = parts[0] + parts[1] + rest
    _, _, vocabulary, _ = english_tag_arrays(train, min_count=2, tag_names=tag_names)
    length = max(len(s["tokens"]) for s in sentences)

    def arrays(chosen):
        words, tags, _, _ = english_tag_arrays(chosen, length, vocabulary, tag_names)
        return words, tags

    labelled = {}
    for task, chosen in zip(("pos", "supersense"), parts):
        words, tags = arrays(chosen)
        labelled[task] = (words, tags[task])
    test_words, test_tags = arrays(test)
    sizes = {task: len(names) for task, names in tag_names.items()}
    vocabulary_size = len(vocabulary) + NUM_SPECIAL_TOKENS
    return labelled, arrays(rest)[0], (test_words, test_tags), vocabulary_size, sizes


def english_run(split, tasks, views, seed, args):
    """``{task: held-out token accuracy}`` of one seeded run on ``tasks``."""
    labelled, unlabelled, (test_words, test_tags), vocabulary_size, sizes = split
    keras.backend.clear_session()
    keras.utils.set_random_seed(seed)
    overrides = SMOKE_OVERRIDES if args.smoke else {}
    preset = TASK.spec.preset(MODEL)
    model = build_model(preset, vocabulary_size, {t: sizes[t] for t in tasks}, views, **overrides)
    stream = data.stream_dataset(
        {t: labelled[t] for t in tasks},
        unlabelled if views else None,
        TASK.spec.batch_size,
        seed=seed,
    )
    steps = data.steps_per_epoch(unlabelled if views else None, args.steps)
    model.fit(stream, steps_per_epoch=steps, epochs=args.epochs, shuffle=False, verbose=0)
    outputs = model.predict({"words": test_words}, batch_size=256, verbose=0)
    return {t: token_accuracy(test_tags[t], np.asarray(outputs[t]).argmax(-1)) for t in tasks}


def tasks_part(args, results):
    """Each task alone and both together, with and without CVT, over seeds."""
    sentences = english_tag_sentences(seed=0, num=args.english_sentences)
    print(
        f"\n{len(sentences)} fortune sentences: {args.task_labelled} labelled per task, "
        f"{ENGLISH_TEST} held out, up to {args.unlabelled} unlabelled"
    )
    settings = ENGLISH_SETTINGS[-2:] if args.smoke else ENGLISH_SETTINGS
    scores = {name: {"pos": [], "supersense": []} for name, _, _ in settings}
    for seed in range(args.seeds):
        split = english_split(sentences, seed, args)
        for name, tasks, views in settings:
            for task, accuracy in english_run(split, tasks, views, seed, args).items():
                scores[name][task].append(accuracy)
            print(f"  seed {seed}, {name}: done", flush=True)
    print(f"\n| setting ({args.task_labelled} labelled per task) | pos (%) | supersense (%) |")
    print("|---|---:|---:|")
    for name, _, _ in settings:
        cells = [percent(scores[name][t]) if scores[name][t] else "" for t in ("pos", "supersense")]
        print(f"| {name} | {cells[0]} | {cells[1]} |")
    results["tasks"] = scores


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--part", nargs="+", choices=PARTS, default=list(PARTS), help="default: all three"
    )
    parser.add_argument("--sizes", default="50,200,1000")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=TASK.spec.epochs)
    parser.add_argument("--steps", type=int, default=spec.LABELLED_STEPS_PER_EPOCH)
    parser.add_argument("--unlabelled", type=int, default=TASK.spec.samples)
    parser.add_argument("--test", type=int, default=spec.TEST_SEQUENCES)
    parser.add_argument(
        "--ablation",
        choices=("drop", "alone", "both"),
        default="both",
        help="views part: drop each view, keep each alone, or both",
    )
    parser.add_argument("--task-labelled", type=int, default=200)
    parser.add_argument("--english-sentences", type=int, default=None)
    parser.add_argument("--out", default="runs/cvt")
    parser.add_argument("--smoke", action="store_true", help="tiny settings: the path only")
    args = parser.parse_args(argv)
    args.sizes = sorted(int(s) for s in args.sizes.split(","))
    if args.smoke:
        args.sizes, args.seeds, args.epochs, args.steps = [8], 2, 1, 4
        args.unlabelled, args.test = 64, 64
        args.task_labelled, args.english_sentences = 8, 1100
    os.makedirs(args.out, exist_ok=True)
    print(f"Machine: {machine()}")
    print(
        f"date_fields, {MODEL}: {args.epochs} × {args.steps} labelled batches of "
        f"{TASK.spec.batch_size} (CVT: each followed by an unlabelled one), "
        f"{args.unlabelled} unlabelled, {args.test} held-out sequences, {args.seeds} seeds"
    )
    results = {"sizes": [], "views": [], "tasks": {}, "settings": vars(args)}
    for name, part in (("sizes", sizes_part), ("views", views_part), ("tasks", tasks_part)):
        if name in args.part:
            part(args, results)
            with open(os.path.join(args.out, "cvt.json"), "w") as f:  # after each part
                json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()

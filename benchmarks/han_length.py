"""The HAN against tf-idf logistic regression as documents get longer (issue 47, item 8).

Data: Debian's man pages, 6 sections as 6 classes (``man1`` user commands, ``man2`` system
calls, ``man3`` library functions, ``man5`` file formats, ``man7`` overviews, ``man8`` admin
commands), ``--per-class`` pages drawn per section with a fixed seed. Each page is rendered to
text by ``man -l`` (man-db, groff underneath: ``MANWIDTH=100``, no overstrike), its header and
footer lines dropped (they name the section: "open(2)  System Calls Manual  open(2)").
Skipped: symbolic links and ``.so`` redirects (both duplicate another page), pages whose
rendered text repeats another's, pages of fewer than ``--min-words`` words.

Length: every document is truncated to its first L words (whitespace-separated; line and
paragraph breaks kept) for each L of ``--lengths``; shorter documents stay whole. Classes,
documents and the train/test split stay the same at every L, so only the length moves (buckets
of natural length would confound length with the kind of page: the median man3 page has 245
words, the median man7 page 1,067).

At each L, on the same split (the recipe's: `keras_adl.recipes.documents.data.user_documents`, 80/20, seed 0):

* the HAN as ``keras-adl train documents --data TREE --seed SEED`` trains it: the tree is
  written to disk and trained in-process through `keras_adl.recipes.train` (what the CLI
  calls), with the recipe's defaults (sizes from the data's 90th percentiles, 10 epochs, batch
  64); its held-out accuracy is the run's ``held_out_accuracy``. A callback also scores the
  held-out documents after every epoch (the curve shows what choosing an epoch on the test
  documents would give; the run keeps the recipe's epoch: the last, or since the development
  split of 83bae8f the one of the best development loss);
* tf-idf logistic regression: ``TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True,
  min_df=2)``, C chosen from `LR_C_GRID` on a 20% dev split of the training part (seed 1),
  then refitted on the whole training part;
* the majority class.

    python benchmarks/han_length.py                        # ≈ 15 min on 2 cores
    python benchmarks/han_length.py --smoke                # about a minute
    python benchmarks/han_length.py --lengths 3000 --seeds 0 1
"""

import argparse
import gzip
import hashlib
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
from _machine import machine  # noqa: E402

SECTIONS = ("1", "2", "3", "5", "7", "8")
LR_C_GRID = (1.0, 10.0, 100.0, 1000.0)
MAN_ROOT = "/usr/share/man"


# ------------------------------------------------------------------------------- corpus


def _is_redirect(path):
    """Whether the page source is a ``.so`` include of another page (a duplicate)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith(".so ") or line.startswith("'so "):
                return True
            if line.strip() and not line.startswith(('.\\"', "'\\\"", '.\\"')):
                return False
    return True  # an empty page


def render(path):
    """The text of one man page as ``man -l`` renders it, without its header and footer."""
    env = dict(os.environ, MANWIDTH="100", MAN_KEEP_FORMATTING="", LC_ALL="C.UTF-8")
    out = subprocess.run(
        ["man", "--no-hyphenation", "--no-justification", "-l", path],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    ).stdout.decode("utf-8", errors="replace")
    out = re.sub(r".\x08", "", out)  # overstrike, should a pager setting leave any
    lines = out.rstrip().splitlines()
    while lines and not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines[1:-1]).strip()  # drop "open(2)  System Calls Manual  open(2)"


def family(name):
    """A page's family: its name up to the first ``-``, ``_``, ``.`` or ``:`` (``gcloud``)."""
    return re.split(r"[-_.:]", name, maxsplit=1)[0]


def load_man_pages(per_class, min_words, per_family, seed, root=MAN_ROOT):
    """``(documents, labels, names, files)``: ``per_class`` rendered pages of each section, at
    most ``per_family`` of one `family` (16,631 of man1's 17,861 pages are gcloud's)."""
    if shutil.which("man") is None:
        sys.exit("han_length: `man` (Debian's man-db) is needed to render the pages")
    rng = random.Random(seed)
    documents, labels, files, seen = [], [], [], set()
    for label, section in enumerate(SECTIONS):
        directory = os.path.join(root, f"man{section}")
        names = sorted(
            name
            for name in os.listdir(directory)
            if not name.startswith(".")
            and os.path.isfile(os.path.join(directory, name))
            and not os.path.islink(os.path.join(directory, name))
        )
        rng.shuffle(names)
        taken, families = 0, {}
        for name in names:
            if taken == per_class:
                break
            path = os.path.join(directory, name)
            if families.get(family(name), 0) == per_family or _is_redirect(path):
                continue
            text = render(path)
            digest = hashlib.sha1(text.encode()).hexdigest()
            if len(text.split()) < min_words or digest in seen:
                continue
            seen.add(digest)
            families[family(name)] = families.get(family(name), 0) + 1
            documents.append(text)
            labels.append(label)
            files.append(f"man{section}/{name}")
            taken += 1
    return documents, np.array(labels), [f"man{s}" for s in SECTIONS], files


def truncate(text, words):
    """The first ``words`` whitespace-separated words of ``text``, its line breaks kept."""
    ends = [match.end() for _, match in zip(range(words + 1), re.finditer(r"\S+", text))]
    return text if len(ends) <= words else text[: ends[words - 1]]


def write_tree(root, documents, labels, names, files):
    """``root/<section>/<page>.txt``; file names sort like ``files`` within a class."""
    shutil.rmtree(root, ignore_errors=True)
    for text, label, file in zip(documents, labels, files):
        directory = os.path.join(root, names[label])
        os.makedirs(directory, exist_ok=True)
        base = os.path.basename(file).removesuffix(".gz")
        with open(os.path.join(directory, base + ".txt"), "w", encoding="utf-8") as f:
            f.write(text)


def corpus(args):
    """The rendered pages, cached in ``--out`` (rendering 1,200 pages takes about 45 s)."""
    key = f"corpus_{args.per_class}_{args.min_words}_{args.per_family}_{args.seed}.json"
    path = os.path.join(args.out, key)
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as f:
            documents, labels, names, files = json.load(f)
        return documents, np.array(labels), names, files
    start = time.perf_counter()
    documents, labels, names, files = load_man_pages(
        args.per_class, args.min_words, args.per_family, args.seed
    )
    print(f"rendered {len(documents)} pages in {time.perf_counter() - start:.0f} s", flush=True)
    os.makedirs(args.out, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump([documents, labels.tolist(), names, files], f)
    return documents, labels, names, files


# ------------------------------------------------------------------------------ models


def tfidf_logistic_regression(train_docs, train_labels, test_docs, test_labels):
    """tf-idf of word uni- and bigrams, logistic regression; C chosen on a 20% dev split."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from keras_adl.data.splits import split_dataset

    def fit(docs, labels, c):
        vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2)
        features = vectorizer.fit_transform(docs)
        return vectorizer, LogisticRegression(C=c, max_iter=3000).fit(features, labels)

    def accuracy(fitted, docs, labels):
        vectorizer, model = fitted
        return float(np.mean(model.predict(vectorizer.transform(docs)) == np.asarray(labels)))

    start = time.perf_counter()
    (fit_docs, fit_labels), (dev_docs, dev_labels) = split_dataset(
        np.array(train_docs, dtype=object), train_labels, 0.2, seed=1
    )
    dev = {c: accuracy(fit(list(fit_docs), fit_labels, c), dev_docs, dev_labels) for c in LR_C_GRID}
    best = max(LR_C_GRID, key=lambda c: (dev[c], -c))
    fitted = fit(train_docs, train_labels, best)
    return {
        "C": best,
        "dev": dev[best],
        "train_accuracy": accuracy(fitted, train_docs, train_labels),
        "test_accuracy": accuracy(fitted, test_docs, test_labels),
        "features": len(fitted[0].vocabulary_),
        "seconds": time.perf_counter() - start,
    }


def train_han(tree, run_dir, seed, epochs, test_docs, test_labels):
    """``keras-adl train documents --data TREE --out RUN_DIR --seed SEED`` (in-process, through
    `keras_adl.recipes.train`, what the CLI calls), with a callback that scores the held-out
    documents after each epoch."""
    import keras
    import tensorflow as tf

    from keras_adl import recipes
    from keras_adl.recipes.documents.spec import TOKENIZER_FILE
    from keras_adl.text import DocumentTokenizer

    curve = []

    class HeldOut(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            # The tokenizer the run saved (written before training starts).
            with open(os.path.join(run_dir, TOKENIZER_FILE)) as f:
                tokenizer = DocumentTokenizer.from_config(json.load(f))
            self.ids = tokenizer.encode(tf.constant(test_docs))
            self.vocabulary = tokenizer.vocabulary_size

        def on_epoch_end(self, epoch, logs=None):
            logits = self.model.predict(self.ids, batch_size=64, verbose=0)
            curve.append(
                {
                    "epoch": epoch + 1,
                    "train_accuracy": float(logs["accuracy"]),
                    "held_out": float(np.mean(logits.argmax(-1) == test_labels)),
                }
            )

    held_out = HeldOut()
    keras.backend.clear_session()
    shutil.rmtree(run_dir, ignore_errors=True)
    start = time.perf_counter()
    _, history, metrics = recipes.train(
        "documents",
        run_dir,
        "han",
        epochs,
        None,
        None,
        seed=seed,
        callbacks=[held_out],
        data=tree,
    )
    seconds = time.perf_counter() - start
    with open(os.path.join(run_dir, "run.json")) as f:
        record = json.load(f)
    return {
        "seed": seed,
        "test_accuracy": metrics["held_out_accuracy"],
        "train_accuracy": float(history.history["accuracy"][-1]),
        "curve": curve,
        "S": record["max_sentences"],
        "W": record["max_words"],
        "sentences_cut": record["sentences_cut"],
        "words_cut": record["words_cut"],
        "vocabulary": held_out.vocabulary,
        "epochs_kept": record.get("best_epoch") or len(curve),
        "seconds": seconds,
    }


# ------------------------------------------------------------------------------ driver


def run_length(args, length, seeds, documents, labels, names, files):
    from keras_adl.recipes.documents import data

    truncated = [truncate(text, length) for text in documents]
    tree = os.path.join(args.out, f"tree_{length}")
    write_tree(tree, truncated, labels, names, files)
    # The recipe's split of the tree (the one `keras-adl train documents --data TREE` trains on).
    train_docs, train_labels, test_docs, test_labels, _, _ = data.user_documents(
        tree, samples=10**9
    )
    test_labels = np.asarray(test_labels)
    words = np.array([len(text.split()) for text in documents])
    result = {
        "length": length,
        "truncated_share": float(np.mean(words > length)),
        "mean_words": float(np.mean([len(t.split()) for t in truncated])),
        "train": len(train_docs),
        "test": len(test_docs),
        "test_per_class": np.bincount(test_labels, minlength=len(names)).tolist(),
        "majority": float(
            np.mean(test_labels == np.argmax(np.bincount(train_labels, minlength=len(names))))
        ),
        "tfidf": tfidf_logistic_regression(train_docs, train_labels, test_docs, test_labels),
        "han": [],
    }
    print(
        f"L={length}: tf-idf LR {result['tfidf']['test_accuracy']:.3f} "
        f"(C={result['tfidf']['C']:g}, {result['tfidf']['seconds']:.0f} s)",
        flush=True,
    )
    for seed in seeds:
        han = train_han(
            tree,
            os.path.join(args.out, f"run_{length}_seed{seed}"),
            seed,
            args.epochs,
            test_docs,
            test_labels,
        )
        result["han"].append(han)
        print(
            f"L={length} seed {seed}: HAN {han['test_accuracy']:.3f} (train "
            f"{han['train_accuracy']:.3f}; S={han['S']}, W={han['W']}; {han['seconds']:.0f} s)",
            flush=True,
        )
    return result


def spread(values):
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.mean(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def print_tables(results, documents, labels, names, args):
    words = np.array([len(text.split()) for text in documents])
    print(
        f"\n### {len(documents)} man pages, {len(names)} sections "
        f"({', '.join(f'{n} {c}' for n, c in zip(names, np.bincount(labels)))}); words per "
        f"page: median {np.median(words):.0f}, 10th / 90th percentile "
        f"{np.percentile(words, 10):.0f} / {np.percentile(words, 90):.0f}, max {words.max()}\n"
    )
    first = results[0]
    print(
        f"Split (recipe, seed 0): {first['train']} train / {first['test']} test (test per "
        f"class {first['test_per_class']}); majority class {first['majority']:.3f}\n"
    )
    print(
        "| first L words | pages cut | mean words | tf-idf LR (C) | LR train | HAN held-out "
        "(seeds) | HAN epoch kept | HAN train | HAN best epoch (held-out) | HAN S × W | "
        "words HAN cuts | HAN / LR | HAN s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        lr, han = r["tfidf"], r["han"]
        held = [h["test_accuracy"] for h in han]
        best = ", ".join(
            f"{b['held_out']:.3f} (ep {b['epoch']})"
            for b in (max(h["curve"], key=lambda c: c["held_out"]) for h in han)
        )
        print(
            f"| {r['length']} | {r['truncated_share']:.0%} | {r['mean_words']:.0f} | "
            f"{lr['test_accuracy']:.3f} ({lr['C']:g}) | {lr['train_accuracy']:.3f} | "
            f"{spread(held)} [{len(han)}] | {', '.join(str(h['epochs_kept']) for h in han)} | "
            f"{spread([h['train_accuracy'] for h in han])} | "
            f"{best} | "
            f"{han[0]['S']} × {han[0]['W']} | {han[0]['words_cut']:.0%} | "
            f"{statistics.mean(held) / lr['test_accuracy']:.2f} | "
            f"{statistics.mean(h['seconds'] for h in han):.0f} |"
        )
    print("\nHAN held-out accuracy after each epoch (seed, first L words):\n")
    for r in results:
        for h in r["han"]:
            curve = " ".join(f"{c['held_out']:.3f}" for c in h["curve"])
            train = " ".join(f"{c['train_accuracy']:.3f}" for c in h["curve"])
            print(f"- L={r['length']}, seed {h['seed']}: held-out {curve}; train {train}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny run (seconds)")
    parser.add_argument("--per-class", type=int, default=200)
    parser.add_argument("--min-words", type=int, default=20)
    parser.add_argument("--per-family", type=int, default=20)
    parser.add_argument("--lengths", type=int, nargs="+", default=[100, 300, 1000, 3000])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0], help="HAN seeds")
    parser.add_argument(
        "--epochs", type=int, default=None, help="HAN epochs (default: the recipe's, 10)"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the page sample")
    parser.add_argument("--out", default="runs/bench/han_length")
    args = parser.parse_args(argv)
    if args.smoke:
        args.per_class, args.lengths, args.seeds, args.epochs = 6, [30, 100], [0], 1
        args.out = os.path.join(args.out, "smoke")
    return args


def main(argv=None):
    import tensorflow as tf

    tf.get_logger().setLevel("ERROR")
    args = parse_args(argv)
    documents, labels, names, files = corpus(args)
    results = [
        run_length(args, length, args.seeds, documents, labels, names, files)
        for length in args.lengths
    ]
    print(f"\nCommand: `{' '.join(['python'] + sys.argv)}`")
    print(f"Machine: {machine('sklearn')}")
    print_tables(results, documents, labels, names, args)
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    return results


if __name__ == "__main__":
    main()

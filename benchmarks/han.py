"""Hierarchical attention (HAN): the needle task, Debian's fortunes, and encoder throughput.

Three parts (``--part``, default all):

``needle``
    The model ``keras-adl train needle`` trains (`keras_adl.recipes.documents`: embedding 64,
    attention 64, GRU 32 per direction, dropout 0.1, Adam 2e-3, S = W = 10; the recipe's
    tokenizer), with batches of 32, on 4000 `needle_documents` (seed 0), up to 6 epochs; after each epoch, on 1000 held-out documents (seed 1): accuracy, the sentence
    attention hit rate (argmax on the key sentence) and the word attention hit rate (inside the
    key sentence, the most-attended word is the class word or "needle"). Anchor: bag-of-words
    logistic regression (scikit-learn, `CountVectorizer` counts, C chosen on a validation split
    of the training documents), which cannot see which class word shares a sentence with the
    marker.
``fortunes``
    9 topics of Debian's fortunes, 80/20 split (`split_dataset`, seed 0); 15% of the training
    part is carved off (seed 1) as a validation split. HAN (S = 15, W = 30, same sizes) is
    trained on the rest (the model and tokenizer of ``keras-adl train fortunes``); its epoch is
    chosen on validation accuracy, and the whole per-epoch
    curve (validation and test) is printed. Anchors on the same documents: logistic regression
    on word counts and on tf-idf (C chosen on the same validation split), and the majority class.
``speed``
    Forward throughput of `HierarchicalAttention(units=100, encoder_units=50, vocab_size=20000,
    embedding_dim=100)` (the paper's sizes but embedding 100), called inside
    ``tf.function(jit_compile=True)``, in documents/s at B = 64 with random ids (every position
    real), for S ∈ {5, 15, 30} at W = 30 and W ∈ {10, 30, 60} at S = 15. Anchor in the same run
    and the same compile mode: the flat encoder of the same tokens — the same embedding, a
    bidirectional GRU-50 and `AttentionPooling(100)` over the S·W words. Then the training step
    (forward + backward + Adam, ``jit_compile=True``, `train_on_batch`) of both as 5-class
    classifiers at S = 15, W = 30. Median of ``--repeats`` timed repeats after two warm-up calls.

    python benchmarks/han.py                 # all three parts (≈ 10 min on 2 cores)
    python benchmarks/han.py --part speed
    python benchmarks/han.py --quick         # smoke configuration (seconds; `QUICK_OVERRIDES`)
"""

import argparse
import json
import os
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
from _machine import machine  # noqa: E402

from keras_adl.data.fortunes import load_fortunes  # noqa: E402
from keras_adl.data.needle import CLASS_WORDS, NEEDLE_WORD, needle_documents  # noqa: E402
from keras_adl.data.splits import split_dataset  # noqa: E402
from keras_adl.layers import AttentionPooling, HierarchicalAttention  # noqa: E402
from keras_adl.models import han_attention, han_classifier  # noqa: E402
from keras_adl.recipes._compile import compile_for_training  # noqa: E402
from keras_adl.recipes.documents.evaluate import sentence_attention_hit_rate  # noqa: E402
from keras_adl.recipes.documents.spec import (  # noqa: E402
    FORTUNES_SHAPE,
    MAX_VOCABULARY,
    NEEDLE_CLASSES,
    NEEDLE_SHAPE,
)
from keras_adl.recipes.documents.tasks import RECIPES  # noqa: E402

MODEL = "han"
# --quick: tiny sizes replacing the recipe's (needle and fortunes parts).
QUICK_OVERRIDES = dict(embedding_dim=8, units=8, encoder_units=4)
LR_C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)


# ------------------------------------------------------------------------------- anchors


def bag_of_words(
    train_docs,
    train_labels,
    val_docs,
    val_labels,
    test_docs,
    test_labels,
    tfidf=False,
    refit_docs=None,
    refit_labels=None,
):
    """Logistic regression on word counts (or tf-idf): C chosen on the validation documents,
    then refitted on ``refit_docs`` (default: the training documents). Returns a dict."""
    from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    def fit(docs, labels, c):
        vectorizer = TfidfVectorizer(sublinear_tf=True) if tfidf else CountVectorizer()
        features = vectorizer.fit_transform(docs)
        model = LogisticRegression(C=c, max_iter=5000).fit(features, labels)
        return vectorizer, model

    def accuracy(fitted, docs, labels):
        vectorizer, model = fitted
        return float(np.mean(model.predict(vectorizer.transform(docs)) == np.asarray(labels)))

    scores = {
        c: accuracy(fit(train_docs, train_labels, c), val_docs, val_labels) for c in LR_C_GRID
    }
    best = max(LR_C_GRID, key=lambda c: (scores[c], -c))
    if refit_docs is None:
        refit_docs, refit_labels = train_docs, train_labels
    fitted = fit(refit_docs, refit_labels, best)
    return {
        "C": best,
        "validation": scores[best],
        "train_accuracy": accuracy(fitted, refit_docs, refit_labels),
        "test_accuracy": accuracy(fitted, test_docs, test_labels),
    }


# ------------------------------------------------------------------------------ needle


def word_attention_hit_rate(word_attention, tokens, labels, keys):
    """Fraction of documents whose most-attended word of the key sentence is the class word or
    the marker; also the two parts separately."""
    rows = np.arange(len(keys))
    key_attention = word_attention[rows, keys]  # [N, W]
    key_tokens = tokens[rows, keys]  # [N, W] bytes
    top_index = np.argmax(key_attention, axis=-1)
    top = key_tokens[rows, top_index]
    class_words = np.array([CLASS_WORDS[label].encode() for label in labels], dtype=object)
    on_class = np.array([t == c for t, c in zip(top, class_words)])
    on_marker = np.array([t == NEEDLE_WORD.encode() for t in top])
    # Within one word of the class word or the marker (a BiGRU state next to it).
    special = (key_tokens == class_words[:, None]) | (key_tokens == NEEDLE_WORD.encode())
    positions = np.arange(key_tokens.shape[1])
    distance = np.where(special, np.abs(positions[None] - top_index[:, None]), 10**6).min(-1)
    return {
        "word_hit": float(np.mean(on_class | on_marker)),
        "word_on_class": float(np.mean(on_class)),
        "word_on_marker": float(np.mean(on_marker)),
        "word_within_1": float(np.mean(distance <= 1)),
    }


class Probe(keras.callbacks.Callback):
    """Evaluates every ``every`` training steps until ``done(result)``; keeps the training
    clock (time inside ``fit`` minus the probes' own time)."""

    def __init__(self, every, evaluate, done):
        super().__init__()
        self.every, self.evaluate, self.done = every, evaluate, done
        self.step, self.train_seconds, self.eval_seconds = 0, 0.0, 0.0
        self.points, self.finished = [], False

    def on_train_begin(self, logs=None):
        self.start, self.eval_in_fit = time.perf_counter(), 0.0

    def elapsed(self):
        return self.train_seconds + time.perf_counter() - self.start - self.eval_in_fit

    def on_train_batch_end(self, batch, logs=None):
        self.step += 1
        if self.finished or self.step % self.every:
            return
        seconds = self.elapsed()
        paused = time.perf_counter()
        result = {"steps": self.step, "train_seconds": seconds, **self.evaluate()}
        self.eval_in_fit += time.perf_counter() - paused
        self.points.append(result)
        self.finished = self.done(result)

    def on_train_end(self, logs=None):
        self.train_seconds = self.elapsed()


def build_model(args, vocab_size=None, task="needle", num_classes=NEEDLE_CLASSES):
    """The compiled model ``keras-adl train TASK`` trains (with `QUICK_OVERRIDES` under
    ``--quick``); ``vocab_size`` defaults to the tokenizer of the needle part's training
    documents."""
    if vocab_size is None:
        vocab_size = RECIPES[task].tokenizer(needle_data(args)[0]).vocabulary_size
    overrides = QUICK_OVERRIDES if args.quick else {}
    return RECIPES[task].build_model(MODEL, vocab_size, num_classes, **overrides)


def model_size(args, task, model):
    """The settings the tables print: the recipe's, this run's overrides, the clip norm."""
    settings = dict(RECIPES[task].spec.preset(MODEL), **(QUICK_OVERRIDES if args.quick else {}))
    return dict(settings, clipnorm=model.optimizer.global_clipnorm)


def needle_data(args):
    """The needle part's ``(train_docs, train_labels, test_docs, test_labels, test_keys)``."""
    train_docs, train_labels, _ = needle_documents(args.needle_train, NEEDLE_CLASSES, seed=0)
    test_docs, test_labels, test_keys = needle_documents(args.needle_test, NEEDLE_CLASSES, seed=1)
    return train_docs, train_labels, test_docs, test_labels, test_keys


def run_needle(args):
    train_docs, train_labels, test_docs, test_labels, test_keys = needle_data(args)
    tokenizer = RECIPES["needle"].tokenizer(train_docs)
    test_ids = tokenizer.encode(tf.constant(test_docs))
    test_tokens = tokenizer.tokens(tf.constant(test_docs)).numpy()

    keras.utils.set_random_seed(0)
    model = build_model(args, tokenizer.vocabulary_size)
    size = model_size(args, "needle", model)
    attention = han_attention(model)
    dataset = tokenizer.dataset(train_docs, train_labels, args.batch_size, seed=0)
    steps_per_epoch = len(train_docs) // args.batch_size

    def evaluate():
        out = attention.predict(test_ids, batch_size=250, verbose=0)
        return {
            "accuracy": float(np.mean(out["logits"].argmax(-1) == test_labels)),
            "sentence_hit": sentence_attention_hit_rate(out["sentence_attention"], test_keys),
            **word_attention_hit_rate(out["word_attention"], test_tokens, test_labels, test_keys),
        }

    def done(r):
        return r["accuracy"] >= 0.95 and r["sentence_hit"] >= 0.7

    probe = Probe(args.probe_every, evaluate, done)
    curve = []
    for epoch in range(args.needle_epochs):
        history = model.fit(
            dataset,
            initial_epoch=epoch,
            epochs=epoch + 1,
            shuffle=False,
            verbose=0,
            callbacks=[probe],
        )
        row = {
            "epoch": epoch + 1,
            "steps": (epoch + 1) * steps_per_epoch,
            "train_seconds": probe.train_seconds,
            "train_accuracy": float(history.history["accuracy"][-1]),
            **evaluate(),
        }
        curve.append(row)
        print(
            f"needle epoch {row['epoch']}: held-out acc {row['accuracy']:.3f}, sentence hit "
            f"{row['sentence_hit']:.3f}, word hit {row['word_hit']:.3f} "
            f"({row['train_seconds']:.0f} s)",
            flush=True,
        )

    (fit_docs, fit_labels), (val_docs, val_labels) = split_dataset(
        np.array(train_docs, dtype=object), train_labels, 0.2, seed=1
    )
    start = time.perf_counter()
    lr = bag_of_words(
        list(fit_docs),
        fit_labels,
        list(val_docs),
        val_labels,
        test_docs,
        test_labels,
        refit_docs=train_docs,
        refit_labels=train_labels,
    )
    lr["seconds"] = time.perf_counter() - start
    majority = float(np.max(np.bincount(test_labels, minlength=NEEDLE_CLASSES)) / len(test_labels))
    reached = next((r for r in probe.points + curve if done(r)), None)
    return {
        "curve": curve,
        "probes": probe.points,
        "lr": lr,
        "majority": majority,
        "reached": reached,
        "steps_per_epoch": steps_per_epoch,
        "train": len(train_docs),
        "test": len(test_docs),
        "vocabulary": tokenizer.vocabulary_size,
        "size": size,
    }


def print_needle(result, args):
    size = result["size"]
    print(
        f"\n### Needle task: {result['train']} training documents (seed 0), {result['test']} "
        f"held-out (seed 1), {NEEDLE_CLASSES} classes, S = {NEEDLE_SHAPE[0]}, W = "
        f"{NEEDLE_SHAPE[1]}, vocabulary {result['vocabulary']} ids; HAN embedding "
        f"{size['embedding_dim']}, attention {size['units']}, GRU {size['encoder_units']} per "
        f"direction, dropout {size['dropout']}, Adam {size['learning_rate']:g} (clipnorm "
        f"{size['clipnorm']:g}), batch {args.batch_size} "
        f"({result['steps_per_epoch']} steps/epoch), jit_compile=True\n"
    )
    print(
        "| epoch | steps | train s (cum.) | train acc | held-out acc | sentence hit | "
        "word hit (class or marker) | word on class | word on marker | word within 1 |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in result["curve"]:
        print(
            f"| {r['epoch']} | {r['steps']} | {r['train_seconds']:.1f} | "
            f"{r['train_accuracy']:.3f} | {r['accuracy']:.3f} | {r['sentence_hit']:.3f} | "
            f"{r['word_hit']:.3f} | {r['word_on_class']:.3f} | {r['word_on_marker']:.3f} | "
            f"{r['word_within_1']:.3f} |"
        )
    print(
        f"\nEvery {args.probe_every} steps until acc ≥ 0.95 and sentence hit ≥ 0.7 (same run; "
        f"train s excludes the probes):\n"
    )
    print("| steps | train s | held-out acc | sentence hit | word hit |")
    print("|---:|---:|---:|---:|---:|")
    for r in result["probes"]:
        print(
            f"| {r['steps']} | {r['train_seconds']:.1f} | {r['accuracy']:.3f} | "
            f"{r['sentence_hit']:.3f} | {r['word_hit']:.3f} |"
        )
    lr, last = result["lr"], result["curve"][-1]
    print("\n| model | held-out acc | ratio HAN / model |")
    print("|---|---:|---:|")
    print(f"| HAN, epoch {last['epoch']} | {last['accuracy']:.3f} | 1.00 |")
    print(
        f"| bag-of-words LR (counts, C = {lr['C']:g}; train acc {lr['train_accuracy']:.3f}) | "
        f"{lr['test_accuracy']:.3f} | {last['accuracy'] / lr['test_accuracy']:.2f} |"
    )
    print(
        f"| majority class | {result['majority']:.3f} | "
        f"{last['accuracy'] / result['majority']:.2f} |"
    )
    reached = result["reached"]
    if reached:
        print(
            f"\nacc ≥ 0.95 and sentence hit ≥ 0.7 first after {reached['steps']} steps "
            f"({reached['steps'] / result['steps_per_epoch']:.2f} epochs, {reached['train_seconds']:.1f} s of training incl. "
            f"the XLA compile)"
        )
    else:
        print(f"\nacc ≥ 0.95 and sentence hit ≥ 0.7 not reached in {len(result['curve'])} epochs")


# ---------------------------------------------------------------------------- fortunes


def run_fortunes(args):
    try:
        docs, labels, topics = load_fortunes(max_per_topic=40 if args.quick else None)
    except FileNotFoundError as error:
        print(f"fortunes: skipped — {error}")
        return None
    max_sentences, max_words = FORTUNES_SHAPE
    (train_docs, train_labels), (test_docs, test_labels) = split_dataset(
        np.array(docs, dtype=object), labels, 0.2, seed=0
    )
    (fit_docs, fit_labels), (val_docs, val_labels) = split_dataset(
        train_docs, train_labels, 0.15, seed=1
    )
    fit_docs, val_docs, test_docs = list(fit_docs), list(val_docs), list(test_docs)

    tokenizer = RECIPES["fortunes"].tokenizer(fit_docs)
    split = tokenizer.split(tf.constant(test_docs))
    sentences = split.row_lengths(axis=1).numpy()
    words = split.row_lengths(axis=2).flat_values.numpy()
    truncation = {
        "docs_over_S": float(np.mean(sentences > max_sentences)),
        "sentences_over_W": float(np.mean(words > max_words)),
        "median_sentences": float(np.median(sentences)),
        "median_words": float(np.median(words)),
        "unk_rate": None,
    }
    test_ids = tokenizer.encode(tf.constant(test_docs)).numpy()
    val_ids = tokenizer.encode(tf.constant(val_docs)).numpy()
    real = test_ids > 0
    truncation["unk_rate"] = float(np.mean(test_ids[real] == 1))

    keras.utils.set_random_seed(0)
    model = build_model(args, tokenizer.vocabulary_size, "fortunes", len(topics))
    size = model_size(args, "fortunes", model)
    dataset = tokenizer.dataset(fit_docs, fit_labels, args.batch_size, seed=0)
    curve, seconds = [], 0.0
    for epoch in range(args.fortune_epochs):
        start = time.perf_counter()
        history = model.fit(
            dataset, initial_epoch=epoch, epochs=epoch + 1, shuffle=False, verbose=0
        )
        seconds += time.perf_counter() - start
        val = model.predict(val_ids, batch_size=250, verbose=0).argmax(-1)
        test = model.predict(test_ids, batch_size=250, verbose=0).argmax(-1)
        row = {
            "epoch": epoch + 1,
            "train_seconds": seconds,
            "train_accuracy": float(history.history["accuracy"][-1]),
            "validation": float(np.mean(val == val_labels)),
            "test": float(np.mean(test == test_labels)),
        }
        curve.append(row)
        print(
            f"fortunes epoch {row['epoch']}: train {row['train_accuracy']:.3f}, validation "
            f"{row['validation']:.3f}, test {row['test']:.3f} ({seconds:.0f} s)",
            flush=True,
        )
    chosen = max(curve, key=lambda r: (r["validation"], -r["epoch"]))

    anchors = {}
    for name, tfidf in (("counts", False), ("tf-idf", True)):
        start = time.perf_counter()
        anchors[name] = bag_of_words(
            fit_docs, fit_labels, val_docs, val_labels, test_docs, test_labels, tfidf=tfidf
        )
        anchors[name]["seconds"] = time.perf_counter() - start
    counts = np.bincount(fit_labels, minlength=len(topics))
    majority = float(np.mean(np.asarray(test_labels) == np.argmax(counts)))
    return {
        "topics": topics,
        "documents": len(docs),
        "fit": len(fit_docs),
        "validation": len(val_docs),
        "test": len(test_docs),
        "vocabulary": tokenizer.vocabulary_size,
        "curve": curve,
        "chosen": chosen,
        "anchors": anchors,
        "majority": majority,
        "truncation": truncation,
        "size": size,
    }


def print_fortunes(result, args):
    if result is None:
        return
    t, (s, w) = result["truncation"], FORTUNES_SHAPE
    print(
        f"\n### Fortunes: {len(result['topics'])} topics ({', '.join(result['topics'])}), "
        f"{result['documents']} documents; split 80/20 (seed 0), 15% of the training part as "
        f"validation (seed 1): {result['fit']} / {result['validation']} / {result['test']} "
        f"train / validation / test; vocabulary {result['vocabulary']} ids (all training "
        f"words, max {MAX_VOCABULARY}); S = {s}, W = {w} (test: median "
        f"{t['median_sentences']:.0f} sentences of {t['median_words']:.0f} words; "
        f"{t['docs_over_S']:.1%} of documents > {s} sentences, {t['sentences_over_W']:.1%} "
        f"of sentences > {w} words; "
        f"{t['unk_rate']:.1%} of test words out of vocabulary)\n"
    )
    print("| epoch | train s (cum.) | train acc | validation acc | test acc |")
    print("|---:|---:|---:|---:|---:|")
    for r in result["curve"]:
        mark = " ← chosen on validation" if r is result["chosen"] else ""
        print(
            f"| {r['epoch']} | {r['train_seconds']:.1f} | {r['train_accuracy']:.3f} | "
            f"{r['validation']:.3f} | {r['test']:.3f}{mark} |"
        )
    chosen = result["chosen"]
    print(
        "\n| model (trained on the same documents) | validation acc | test acc | "
        "ratio HAN / model (test) |"
    )
    print("|---|---:|---:|---:|")
    print(
        f"| HAN, epoch {chosen['epoch']} (chosen on validation) | {chosen['validation']:.3f} "
        f"| {chosen['test']:.3f} | 1.00 |"
    )
    for name, a in result["anchors"].items():
        print(
            f"| bag-of-words LR, {name}, C = {a['C']:g} (train acc "
            f"{a['train_accuracy']:.3f}, {a['seconds']:.1f} s incl. the C search) | "
            f"{a['validation']:.3f} | {a['test_accuracy']:.3f} | "
            f"{chosen['test'] / a['test_accuracy']:.2f} |"
        )
    print(
        f"| majority class | — | {result['majority']:.3f} | "
        f"{chosen['test'] / result['majority']:.2f} |"
    )


# ------------------------------------------------------------------------------- speed


def median_seconds(fn, repeats, calls):
    for _ in range(2):  # warm-up: trace + XLA compile
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def han_layer(sizes):
    return HierarchicalAttention(
        units=sizes["units"],
        encoder_units=sizes["encoder_units"],
        vocab_size=sizes["vocab"],
        embedding_dim=sizes["embedding"],
        name="han",
    )


def flat_model(sizes, length):
    """The non-hierarchical encoder of the same tokens: embedding → BiGRU → attention pool."""
    ids = keras.Input((length,), dtype="int32")
    x = keras.layers.Embedding(sizes["vocab"], sizes["embedding"], mask_zero=True)(ids)
    x = keras.layers.Bidirectional(keras.layers.GRU(sizes["encoder_units"], return_sequences=True))(
        x
    )
    return keras.Model(ids, AttentionPooling(sizes["units"])(x), name="flat")


def forward_time(kind, sizes, batch, s, w, args):
    keras.utils.set_random_seed(0)
    ids = np.random.default_rng(0).integers(1, sizes["vocab"], size=(batch, s, w)).astype("int32")
    if kind == "han":
        encoder = han_layer(sizes)
        encoder(ids[:1])  # build eagerly
        x = tf.constant(ids)
    else:
        encoder = flat_model(sizes, s * w)
        x = tf.constant(ids.reshape(batch, s * w))
    call = tf.function(lambda t: encoder(t, training=False), jit_compile=True)
    return median_seconds(lambda: call(x).numpy(), args.repeats, args.calls)


def train_step_time(kind, sizes, batch, s, w, args):
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    ids = rng.integers(1, sizes["vocab"], size=(batch, s, w)).astype("int32")
    labels = rng.integers(0, 5, size=batch).astype("int32")
    if kind == "han":
        model = han_classifier(
            sizes["vocab"],
            5,
            s,
            w,
            embedding_dim=sizes["embedding"],
            units=sizes["units"],
            encoder_units=sizes["encoder_units"],
        )
    else:
        encoder = flat_model(sizes, s * w)
        model = keras.Model(encoder.input, keras.layers.Dense(5)(encoder.output))
        ids = ids.reshape(batch, s * w)
    compile_for_training(
        model, keras.losses.SparseCategoricalCrossentropy(from_logits=True), 1e-3, jit_compile=True
    )
    return median_seconds(lambda: model.train_on_batch(ids, labels), args.repeats, 1)


def run_speed(args):
    if args.quick:
        sizes = dict(units=8, encoder_units=4, vocab=200, embedding=8)
        batch, base, ss, ws = 4, (3, 5), (2, 3), (3, 5)
    else:
        sizes = dict(units=100, encoder_units=50, vocab=20000, embedding=100)
        batch, base, ss, ws = args.speed_batch, (15, 30), (5, 15, 30), (10, 30, 60)
    shapes = [(s, base[1]) for s in ss] + [(base[0], w) for w in ws if w != base[1]]
    forward = []
    for s, w in shapes:
        han = forward_time("han", sizes, batch, s, w, args)
        flat = forward_time("flat", sizes, batch, s, w, args)
        forward.append({"S": s, "W": w, "han": han, "flat": flat})
        print(
            f"forward S={s} W={w}: HAN {batch / han:.0f} docs/s, flat {batch / flat:.0f} docs/s",
            flush=True,
        )
    train = {kind: train_step_time(kind, sizes, batch, *base, args) for kind in ("han", "flat")}
    print(
        f"train step S={base[0]} W={base[1]}: HAN {train['han'] * 1e3:.0f} ms, flat "
        f"{train['flat'] * 1e3:.0f} ms",
        flush=True,
    )
    return {"sizes": sizes, "batch": batch, "base": base, "forward": forward, "train": train}


def print_speed(result, args):
    sizes, batch, (bs, bw) = result["sizes"], result["batch"], result["base"]
    base = next(r for r in result["forward"] if (r["S"], r["W"]) == (bs, bw))
    print(
        f"\n### Encoder throughput: B = {batch}, random ids (every position real), "
        f"HierarchicalAttention(units={sizes['units']}, encoder_units="
        f"{sizes['encoder_units']}, vocab_size={sizes['vocab']}, embedding_dim="
        f"{sizes['embedding']}) called in tf.function(jit_compile=True); flat anchor: "
        f"Embedding(mask_zero) → Bidirectional(GRU({sizes['encoder_units']})) → "
        f"AttentionPooling({sizes['units']}) over S·W words, same compile mode; median of "
        f"{args.repeats} repeats × {args.calls} calls after 2 warm-up calls\n"
    )
    print(
        "| S | W | S·W | HAN docs/s | HAN ms/batch | HAN time / time at "
        f"S={bs},W={bw} | flat docs/s | flat ms/batch | flat time / time at S={bs},W={bw} "
        "| HAN / flat (speed) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in sorted(result["forward"], key=lambda r: (r["W"] != bw, r["S"], r["W"])):
        print(
            f"| {r['S']} | {r['W']} | {r['S'] * r['W']} | {batch / r['han']:,.0f} | "
            f"{r['han'] * 1e3:.1f} | {r['han'] / base['han']:.2f}× | "
            f"{batch / r['flat']:,.0f} | {r['flat'] * 1e3:.1f} | "
            f"{r['flat'] / base['flat']:.2f}× | {r['flat'] / r['han']:.2f}× |"
        )
    train = result["train"]
    print(
        f"\nTraining step (forward + backward + Adam, jit_compile=True, train_on_batch), "
        f"B = {batch}, S = {bs}, W = {bw}, 5 classes:\n"
    )
    print("| model | ms/step | docs/s | HAN / flat (speed) |")
    print("|---|---:|---:|---:|")
    print(
        f"| HAN (`han_classifier`) | {train['han'] * 1e3:.1f} | {batch / train['han']:,.0f} | "
        f"{train['flat'] / train['han']:.2f}× |"
    )
    print(
        f"| flat BiGRU + attention pooling | {train['flat'] * 1e3:.1f} | "
        f"{batch / train['flat']:,.0f} | 1.00× |"
    )


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--part", choices=("needle", "fortunes", "speed", "all"), default="all")
    parser.add_argument("--quick", action="store_true", help="tiny smoke configuration")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--needle-train", type=int, default=4000)
    parser.add_argument("--needle-test", type=int, default=1000)
    parser.add_argument("--needle-epochs", type=int, default=6)
    parser.add_argument(
        "--probe-every",
        type=int,
        default=10,
        help="needle: evaluate every N steps until the targets are met",
    )
    parser.add_argument("--fortune-epochs", type=int, default=10)
    parser.add_argument("--speed-batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2, help="forward calls per repeat")
    parser.add_argument("--out", default="runs/bench/han.json")
    args = parser.parse_args(argv)
    if args.quick:
        args.needle_train, args.needle_test, args.needle_epochs = 320, 100, 1
        args.fortune_epochs, args.repeats, args.calls, args.probe_every = 1, 1, 1, 5
    return args


def main(argv=None):
    tf.get_logger().setLevel("ERROR")  # one tf.function per shape: retracing warnings are expected
    args = parse_args(argv)
    parts = ("needle", "fortunes", "speed") if args.part == "all" else (args.part,)

    results = {}
    if "needle" in parts:
        results["needle"] = run_needle(args)
    if "fortunes" in parts:
        results["fortunes"] = run_fortunes(args)
    if "speed" in parts:
        results["speed"] = run_speed(args)

    print(f"\nCommand: `{' '.join(['python'] + sys.argv)}`")
    print(f"Machine: {machine()}")
    if "needle" in results:
        print_needle(results["needle"], args)
    if "fortunes" in results:
        print_fortunes(results["fortunes"], args)
    if "speed" in results:
        print_speed(results["speed"], args)
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1, default=str)
    return results


if __name__ == "__main__":
    main()

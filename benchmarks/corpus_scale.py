"""word2vec on corpora of growing size: peak memory and throughput, ours against gensim's
``corpus_file`` and ``LineSentence`` modes, each in its own process, in one run (issue 61).

    python benchmarks/corpus_scale.py                            # 4 M, 16 M and 64 M words
    python benchmarks/corpus_scale.py --sizes 16 --repeats 3     # three runs alternating
    python benchmarks/corpus_scale.py --fixed-vocabulary         # min count 5, 20, 80
    python benchmarks/corpus_scale.py --systems pretrain_lm      # the causal LM's memory

The corpora are Debian's GCIDE paragraphs (`make data`), shuffled and repeated to each size,
one paragraph per line. Ours reads the raw text (``keras-adl train word2vec --data FILE``'s
code path: a `keras_adl.data.text_streams.TextStream`, one counting pass, the epoch read from
disk); gensim reads the same paragraphs already tokenized by ours (lower case, punctuation
dropped, one line each), so its vocabulary and words are ours and it does no tokenizing.
Settings, all systems: skip-gram, dim 100, window 5, 5 negatives, t = 1e-4, min count 5, one
epoch, ``--workers`` threads for gensim (ours uses the same cores).

Per system and size: peak resident memory of its process (its ``VmHWM``), seconds of the vocabulary pass and of training, corpus words per second over both
and over training alone, and the vectors' WordSim-353, SimLex-999 and analogy figures
(`keras_adl.embeddings`, on gensim's files). Goals: our peak at the largest size ≤ 1.2× our
peak at the smallest, ≤ 2× gensim's; throughput ≥ 1.0× gensim's ``corpus_file`` on 16 M
words.

``--systems pretrain_lm`` runs ``keras-adl train pretrain_lm --data FILE --epochs 1 --steps
200`` (every document: ``--samples`` above the corpus) on the raw corpora instead: its peak memory per size (the pass that splits and samples
the corpus, the tokenizer, the pieces written to disk, 200 steps and the held-out figures),
seconds end to end and the held-out perplexity against the unigram model's.
"""

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

SETTINGS = dict(dim=100, window=5, negatives=5, subsample=1e-4, min_count=5)
SYSTEMS = ("ours", "gensim_corpus_file", "gensim_line_sentence")
LM_STEPS = 200


def make_corpora(sizes, directory, seed=0):
    """``{size: (raw file, tokenized file)}``: GCIDE's paragraphs shuffled and repeated to
    ``size`` million words, as written and as ours tokenizes them (one per line each)."""
    import tensorflow as tf

    from keras_adl.data.text_corpora import read_gcide
    from keras_adl.text.normalization import plain_words

    paragraphs = read_gcide()
    tokens = []
    for start in range(0, len(paragraphs), 8192):
        words = plain_words(tf.constant(paragraphs[start : start + 8192]))
        tokens += [b" ".join(row).decode() for row in words.to_list()]
    pairs = [(p, t) for p, t in zip(paragraphs, tokens) if t]
    files = {}
    for size in sizes:
        raw, tokenized = (os.path.join(directory, f"{size}M.{kind}.txt") for kind in "rt")
        if os.path.isfile(raw) and os.path.isfile(tokenized):  # made by an earlier run
            with open(tokenized, encoding="utf-8") as t:
                files[size] = (raw, tokenized, sum(line.count(" ") + 1 for line in t))
            continue
        target, words, rng = size * 1_000_000, 0, random.Random(seed)
        with open(raw, "w", encoding="utf-8") as r, open(tokenized, "w", encoding="utf-8") as t:
            while words < target:
                rng.shuffle(pairs)
                for paragraph, line in pairs:
                    r.write(paragraph + "\n")
                    t.write(line + "\n")
                    words += line.count(" ") + 1
                    if words >= target:
                        break
        files[size] = (raw, tokenized, words)
    return files


def peak_memory_mb():
    """This process's peak resident memory (``VmHWM``: its own, unlike a child's
    ``ru_maxrss``, which starts from its parent's peak at the fork)."""
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def child_ours(data, out, workers, min_count):
    import numpy as np

    from keras_adl.recipes.embeddings.evaluate import word_embeddings
    from keras_adl.recipes.embeddings.spec import BATCH_SIZE
    from keras_adl.recipes.embeddings.tasks import RECIPES

    task = RECIPES["word2vec"]
    start = time.perf_counter()
    source, vocabulary, counted = task.corpus(data, 10**12, min_count)
    vocab_seconds = time.perf_counter() - start
    settings = task.settings("skipgram")
    steps = task.steps_per_epoch("skipgram", vocabulary, settings, BATCH_SIZE)
    model = task.build_model(
        "skipgram", vocabulary.size, batch_size=BATCH_SIZE, total_steps=steps, **settings
    )
    dataset = task.dataset("skipgram", source, vocabulary, settings, BATCH_SIZE)
    start = time.perf_counter()
    model.fit(dataset, epochs=1, steps_per_epoch=steps, verbose=0, shuffle=False)
    train_seconds = time.perf_counter() - start
    embeddings = word_embeddings(model, vocabulary)
    np.save(os.path.join(out, "vectors.npy"), embeddings.vectors)
    with open(os.path.join(out, "words.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(embeddings.words) + "\n")
    return dict(
        vocab_seconds=vocab_seconds,
        train_seconds=train_seconds,
        words=counted.words,
        vocabulary=len(vocabulary.words),
    )


def child_pretrain_lm(data, out):
    from keras_adl.cli import main

    start = time.perf_counter()
    run_dir = os.path.join(out, "run")
    argv = ["train", "pretrain_lm", "--data", data, "--epochs", "1", "--steps", str(LM_STEPS)]
    argv += ["--samples", str(10**12)]  # the task's default reads at most 1 M documents
    if main([*argv, "--out", run_dir]):
        raise SystemExit("pretrain_lm failed")
    seconds = time.perf_counter() - start
    with open(os.path.join(run_dir, "run.json")) as f:
        record = json.load(f)
    keep = ("documents", "train_documents", "train_pieces", "train_windows", "vocabulary")
    return dict(
        {k: record[k] for k in keep},
        seconds=seconds,
        perplexity_over_unigram=record["metrics"]["perplexity_over_unigram"],
    )


def child_gensim(data, out, workers, corpus_file, min_count):
    import numpy as np
    from gensim.models import Word2Vec
    from gensim.models.word2vec import LineSentence

    model = Word2Vec(
        vector_size=SETTINGS["dim"],
        window=SETTINGS["window"],
        negative=SETTINGS["negatives"],
        sample=SETTINGS["subsample"],
        min_count=min_count,
        sg=1,
        workers=workers,
        seed=0,
    )
    source = dict(corpus_file=data) if corpus_file else dict(corpus_iterable=LineSentence(data))
    start = time.perf_counter()
    model.build_vocab(**source)
    vocab_seconds = time.perf_counter() - start
    start = time.perf_counter()
    model.train(
        **source, total_examples=model.corpus_count, total_words=model.corpus_total_words, epochs=1
    )
    train_seconds = time.perf_counter() - start
    words = list(model.wv.index_to_key)
    np.save(os.path.join(out, "vectors.npy"), np.asarray([model.wv[w] for w in words]))
    with open(os.path.join(out, "words.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(words) + "\n")
    return dict(
        vocab_seconds=vocab_seconds,
        train_seconds=train_seconds,
        words=model.corpus_total_words,
        vocabulary=len(words),
    )


def run_child(system, data, workers, min_count):
    """Runs one system in a fresh process; its figures with its own peak memory."""
    with tempfile.TemporaryDirectory() as out:
        command = [sys.executable, __file__, "--child", system, "--data", data, "--out", out]
        command += ["--workers", str(workers), "--min-count", str(min_count)]
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
        done = subprocess.run(command, stdout=subprocess.PIPE, env=env, text=True)
        if done.returncode:
            raise SystemExit(f"{system} on {data} failed (status {done.returncode})")
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        if system == "pretrain_lm":
            return figures
        figures.update(score(out))
    seconds = figures["vocab_seconds"] + figures["train_seconds"]
    figures["words_per_second"] = figures["words"] / seconds
    figures["training_words_per_second"] = figures["words"] / figures["train_seconds"]
    return figures


def score(out):
    import numpy as np

    from keras_adl.embeddings import Embeddings
    from keras_adl.recipes.embeddings.evaluate import standard_figures

    with open(os.path.join(out, "words.txt"), encoding="utf-8") as f:
        words = f.read().split("\n")[:-1]
    figures = standard_figures(Embeddings(words, np.load(os.path.join(out, "vectors.npy"))))
    keep = ("analogy_accuracy", "wordsim353_spearman", "simlex999_spearman")
    return {k: figures[k] for k in keep}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[4, 16, 64], help="M words")
    parser.add_argument(
        "--systems", nargs="+", default=list(SYSTEMS), choices=(*SYSTEMS, "pretrain_lm")
    )
    parser.add_argument("--repeats", type=int, default=1, help="runs alternating; medians")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--min-count", type=int, default=SETTINGS["min_count"])
    parser.add_argument(
        "--fixed-vocabulary",
        action="store_true",
        help="scale the min count with the corpus (5 at the smallest size, 20 at 4 times it…) "
        "so every size keeps about one vocabulary: memory then shows the corpus alone",
    )
    parser.add_argument("--directory", help="keep the corpora here (default: a temporary one)")
    parser.add_argument("--out", help="write the figures to this JSON file")
    parser.add_argument("--child", choices=(*SYSTEMS, "pretrain_lm"), help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        if args.child == "ours":
            figures = child_ours(args.data, args.out, args.workers, args.min_count)
        elif args.child == "pretrain_lm":
            figures = child_pretrain_lm(args.data, args.out)
        else:
            corpus_file = args.child == "gensim_corpus_file"
            figures = child_gensim(args.data, args.out, args.workers, corpus_file, args.min_count)
        print(json.dumps(dict(figures, peak_mb=peak_memory_mb())))
        return

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _machine import machine

    print(machine("gensim"), flush=True)
    directory = args.directory or tempfile.mkdtemp(prefix="corpus-scale-")
    files = make_corpora(args.sizes, directory)
    results = {"settings": SETTINGS, "workers": args.workers, "sizes": {}}
    for size in args.sizes:
        raw, tokenized, words = files[size]
        min_count = args.min_count
        if args.fixed_vocabulary:
            min_count = args.min_count * size // min(args.sizes)
        runs = []
        for repeat in range(args.repeats):
            run = {}
            for system in args.systems:
                data = raw if system in ("ours", "pretrain_lm") else tokenized
                run[system] = run_child(system, data, args.workers, min_count)
                print(
                    f"{size}M words, run {repeat + 1}, {system}: {json.dumps(run[system])}",
                    flush=True,
                )
            runs.append(run)
        medians = {
            system: {k: statistics.median(r[system][k] for r in runs) for k in runs[0][system]}
            for system in args.systems
        }
        results["sizes"][size] = {
            "words": words,
            "min_count": min_count,
            "runs": runs,
            "medians": medians,
        }
        if "ours" in medians and "gensim_corpus_file" in medians:
            o, g = medians["ours"], medians["gensim_corpus_file"]
            ratios = {
                "throughput": o["words_per_second"] / g["words_per_second"],
                "training_throughput": o["training_words_per_second"]
                / g["training_words_per_second"],
                "peak_memory": o["peak_mb"] / g["peak_mb"],
            }
            results["sizes"][size]["ours_over_corpus_file"] = ratios
            print(f"{size}M words, ours / gensim corpus_file: {json.dumps(ratios)}", flush=True)
    for system in ("ours", "pretrain_lm"):
        if system in args.systems and len(args.sizes) > 1:
            peaks = [results["sizes"][s]["medians"][system]["peak_mb"] for s in args.sizes]
            results[f"{system}_peak_largest_over_smallest"] = peaks[-1] / peaks[0]
            print(f"{system} peak memory, largest / smallest corpus: {peaks[-1] / peaks[0]:.3f}")
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

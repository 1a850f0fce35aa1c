"""word2vec against the reference implementation: ours (the embeddings recipe) and gensim's
``Word2Vec(sg=1)`` on the same tokenized corpus with the same settings, in one run.

    python benchmarks/word2vec.py                          # GCIDE (make data), 3 epochs
    python benchmarks/word2vec.py --repeats 3              # three runs alternating, medians
    python benchmarks/word2vec.py --data /usr/share/wordnet --epochs 1 --documents 50000

Both read the corpus of `keras_adl.recipes.embeddings.data.corpus` (ours streamed from disk,
gensim its documents as lists of words, `TextStream.documents`), with one vocabulary (``--min-count``), the same ``dim``, ``window``,
``negatives``, subsampling ``t`` and epochs (the recipe's settings). Figures, both scored by
the same functions (`keras_adl.embeddings`): WordSim-353 and SimLex-999 Spearman, analogy
accuracy on the questions whose words are known (gensim's ``questions-words.txt``), and
training throughput in corpus words per second (gensim with ``--workers`` threads, ours with
XLA), with ours / gensim ratios. ``ours`` is the recipe (word2vec.c's SGD with sparse updates
and a linear decay; gensim keeps its own default, alpha 0.025); ``ours_adam`` and
``ours_sparse_adam`` swap in Adam (dense moments) or the lazy Adam. Goals (issue 14): Spearman within 0.05 of gensim's, analogy
accuracy within 3 points, throughput at least 0.5x.
"""

import argparse
import json
import statistics
import time


def ours(source, vocabulary, settings, epochs, batch_size, seed, optimizer=None, sparse=False):
    import keras

    from keras_adl.recipes.embeddings.evaluate import word_embeddings
    from keras_adl.recipes.embeddings.spec import LEARNING_RATES
    from keras_adl.recipes.embeddings.tasks import RECIPES
    from keras_adl.training.sparse_adam import SparseAdam

    task = RECIPES["word2vec"]
    if optimizer:
        settings = dict(settings, optimizer=optimizer, learning_rate=LEARNING_RATES[optimizer])
    keras.utils.set_random_seed(seed)
    steps = task.steps_per_epoch("skipgram", vocabulary, settings, batch_size)
    model = task.build_model(
        "skipgram",
        vocabulary.size,
        jit_compile=True,
        batch_size=batch_size,
        total_steps=steps * epochs,
        **settings,
    )
    if sparse:  # the lazy Adam: only the rows of the batch move (no XLA: tf.unique)
        model.compile(
            optimizer=SparseAdam(settings["learning_rate"]), loss=model.loss, jit_compile=False
        )
    data = task.dataset("skipgram", source, vocabulary, settings, batch_size, seed=seed)
    model.fit(data.take(3), epochs=1, steps_per_epoch=3, verbose=0, shuffle=False)  # compiles
    start = time.perf_counter()
    model.fit(data, epochs=epochs, steps_per_epoch=steps, verbose=0, shuffle=False)
    seconds = time.perf_counter() - start
    return word_embeddings(model, vocabulary), seconds, steps * epochs


def reference(tokenized, vocabulary, settings, epochs, workers, seed):
    from gensim.models import Word2Vec

    from keras_adl.embeddings import Embeddings

    known = set(vocabulary.words)
    sentences = [[w for w in d if w in known] for d in tokenized]
    start = time.perf_counter()
    model = Word2Vec(
        sentences,
        vector_size=settings["dim"],
        window=settings["window"],
        negative=settings["negatives"],
        sample=settings["subsample"],
        min_count=1,
        sg=1,
        epochs=epochs,
        workers=workers,
        seed=seed,
    )
    seconds = time.perf_counter() - start
    vectors = [model.wv[w] for w in vocabulary.words]
    return Embeddings(vocabulary.words, vectors), seconds


def measure(system, source, tokenized, vocabulary, settings, args, repeat):
    """One system's figures and throughput (seed ``args.seed + repeat``)."""
    from keras_adl.recipes.embeddings.evaluate import standard_figures
    from keras_adl.recipes.embeddings.spec import BATCH_SIZE

    seed = args.seed + repeat
    words = int(vocabulary.counts.sum())
    if system == "gensim":
        embeddings, seconds = reference(
            tokenized, vocabulary, settings, args.epochs, args.workers, seed
        )
        facts = {"workers": args.workers}
    else:
        chosen = dict(settings, max_row_updates=None) if system == "ours_uncapped" else settings
        embeddings, seconds, steps = ours(
            source,
            vocabulary,
            chosen,
            args.epochs,
            BATCH_SIZE,
            seed,
            optimizer="adam" if "adam" in system else None,
            sparse=system == "ours_sparse_adam",
        )
        facts = {"steps": steps, "batch_size": BATCH_SIZE}
    figures = standard_figures(embeddings)
    figures.update(facts, seconds=round(seconds, 1), words_per_second=words * args.epochs / seconds)
    return figures


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="corpus (default: the installed GCIDE)")
    parser.add_argument("--documents", type=int, default=10_000_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--min-count", type=int, default=5)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--systems",
        nargs="+",
        default=["gensim", "ours"],
        help="gensim, ours (the recipe: SGD with its row cap), ours_uncapped (no cap on a "
        "row's update per batch), ours_adam, ours_sparse_adam",
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        help="runs of every system, alternating (seeds seed, seed+1, …); medians reported",
    )
    parser.add_argument("--out", help="write the figures to this JSON file")
    args = parser.parse_args(argv)

    from keras_adl.recipes.embeddings.tasks import RECIPES

    task = RECIPES["word2vec"]
    start = time.perf_counter()
    source, vocabulary, counted = task.corpus(args.data, args.documents, args.min_count)
    words = int(vocabulary.counts.sum())
    settings = task.spec.preset("skipgram")
    tokenized = source  # ours reads the stream; gensim a list of the same documents' words
    if "gensim" in args.systems:
        from keras_adl.data.text_streams import TextStream

        tokenized = list(TextStream(args.data, documents=args.documents).documents())
    print(
        f"{args.data or 'gcide'}: {counted.documents} documents, {words} words in the vocabulary "
        f"of {len(vocabulary.words)}; {args.epochs} epochs; settings {settings} "
        f"(read and tokenized in {time.perf_counter() - start:.0f} s)",
        flush=True,
    )
    results = {"data": args.data or "gcide", "words": words, "epochs": args.epochs, "runs": []}
    for repeat in range(args.repeats):  # the systems alternate within each repeat
        run = {}
        for system in args.systems:
            run[system] = measure(system, source, tokenized, vocabulary, settings, args, repeat)
            print(f"run {repeat + 1} {system}: {json.dumps(run[system])}", flush=True)
        results["runs"].append(run)
    results["systems"] = systems = {
        system: {
            key: statistics.median(run[system][key] for run in results["runs"])
            for key in results["runs"][0][system]
            if all(run[system].get(key) is not None for run in results["runs"])
        }
        for system in args.systems
    }
    print(f"medians of {args.repeats} run(s): {json.dumps(systems)}")
    if {"gensim", "ours"} <= set(systems):
        g, o = systems["gensim"], systems["ours"]
        results["ours_minus_gensim"] = {
            key: o[key] - g[key]
            for key in ("wordsim353_spearman", "simlex999_spearman", "analogy_accuracy")
            if o.get(key) is not None and g.get(key) is not None
        }
        results["throughput_ratio"] = o["words_per_second"] / g["words_per_second"]
        print(json.dumps({k: results[k] for k in ("ours_minus_gensim", "throughput_ratio")}))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

"""word2vec against the reference implementation: ours (the embeddings recipe) and gensim's
``Word2Vec(sg=1)`` on the same tokenized corpus with the same settings, in one run.

    python benchmarks/word2vec.py                          # GCIDE (make data), 3 epochs
    python benchmarks/word2vec.py --data /usr/share/wordnet --epochs 1 --documents 50000

Both read the documents of `keras_adl.tasks.text_corpora.load_corpus` tokenized by
`tokenize_documents`, with one vocabulary (``--min-count``), the same ``dim``, ``window``,
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
import time


def ours(tokenized, vocabulary, settings, epochs, batch_size, seed, optimizer=None, sparse=False):
    import keras

    from keras_adl.recipes.embeddings import LEARNING_RATES, RECIPE
    from keras_adl.training.sparse_adam import SparseAdam

    if optimizer:
        settings = dict(settings, optimizer=optimizer, learning_rate=LEARNING_RATES[optimizer])
    keras.utils.set_random_seed(seed)
    steps = RECIPE.steps_per_epoch(vocabulary, settings, batch_size)
    model = RECIPE.build_model(
        "word2vec",
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
    data = RECIPE.dataset(tokenized, vocabulary, settings, batch_size, seed=seed)
    model.fit(data.take(3), epochs=1, steps_per_epoch=3, verbose=0, shuffle=False)  # compiles
    start = time.perf_counter()
    model.fit(data, epochs=epochs, steps_per_epoch=steps, verbose=0, shuffle=False)
    seconds = time.perf_counter() - start
    return RECIPE.embeddings(model, vocabulary), seconds, steps * epochs


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
        help="gensim, ours (the recipe: SGD), ours_adam, ours_sparse_adam",
    )
    parser.add_argument("--out", help="write the figures to this JSON file")
    args = parser.parse_args(argv)

    from keras_adl.recipes.embeddings import BATCH_SIZE, RECIPE, standard_figures

    start = time.perf_counter()
    tokenized, vocabulary = RECIPE.load(args.data, args.documents, args.min_count)
    words = int(vocabulary.counts.sum())
    settings = RECIPE.settings("word2vec", "skipgram")
    print(
        f"{args.data or 'gcide'}: {len(tokenized)} documents, {words} words in the vocabulary "
        f"of {len(vocabulary.words)}; {args.epochs} epochs; settings {settings} "
        f"(read and tokenized in {time.perf_counter() - start:.0f} s)",
        flush=True,
    )
    results = {"data": args.data or "gcide", "words": words, "epochs": args.epochs, "systems": {}}
    for system in args.systems:
        if system == "gensim":
            embeddings, seconds = reference(
                tokenized, vocabulary, settings, args.epochs, args.workers, args.seed
            )
            facts = {"workers": args.workers}
        else:
            embeddings, seconds, steps = ours(
                tokenized,
                vocabulary,
                settings,
                args.epochs,
                BATCH_SIZE,
                args.seed,
                optimizer="adam" if "adam" in system else None,
                sparse=system == "ours_sparse_adam",
            )
            facts = {"steps": steps, "batch_size": BATCH_SIZE}
        figures = standard_figures(embeddings)
        figures.update(
            facts, seconds=round(seconds, 1), words_per_second=words * args.epochs / seconds
        )
        results["systems"][system] = figures
        print(f"{system}: {json.dumps(figures)}", flush=True)
    systems = results["systems"]
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

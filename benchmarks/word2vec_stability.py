"""word2vec's loss on corpora of 50, 500, 5,000 and 39,000 distinct words (issue 47).

    python benchmarks/word2vec_stability.py                  # 50, 500, 5000 and GCIDE
    python benchmarks/word2vec_stability.py --caps 32 none   # the recipe's cap, and none

Batched SGD sums the gradients of every occurrence of a table row in a batch; with a small
vocabulary each row occurs hundreds of times per batch of 2,048 and the step explodes. The
recipe caps a row's update per batch (`max_row_updates`, `repeated_row_scale`). For each
corpus (`topic_corpus` of 270k words at the small sizes, Debian's GCIDE at 39k) and each
cap, the recipe's model is trained for ``--epochs`` epochs and the training loss printed every
compiled call (100 steps, or the epoch when shorter), with whether it stayed finite.
"""

import argparse
import json
import math
import os
import tempfile


def curve(tokenized, vocabulary, cap, epochs, seed):
    import keras

    from keras_adl.recipes.embeddings.spec import BATCH_SIZE, STEPS_PER_EXECUTION
    from keras_adl.recipes.embeddings.tasks import RECIPES
    from keras_adl.training.fit import steps_per_call

    task = RECIPES["word2vec"]
    settings = dict(task.spec.preset("skipgram"), max_row_updates=cap)
    keras.utils.set_random_seed(seed)
    steps = task.steps_per_epoch("skipgram", vocabulary, settings, BATCH_SIZE)
    model = task.build_model(
        "skipgram",
        vocabulary.size,
        batch_size=BATCH_SIZE,
        total_steps=steps * epochs,
        **settings,
    )
    model.steps_per_execution = steps_per_call(steps, STEPS_PER_EXECUTION)
    losses = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            losses.append(float(logs["loss"]))

    data = task.dataset("skipgram", tokenized, vocabulary, settings, BATCH_SIZE, seed=seed)
    model.fit(
        data, epochs=epochs, steps_per_epoch=steps, verbose=0, shuffle=False, callbacks=[Record()]
    )
    return {"steps": steps * epochs, "losses": losses, "finite": all(map(math.isfinite, losses))}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--vocabularies", nargs="+", default=["50", "500", "5000", "gcide"])
    parser.add_argument("--caps", nargs="+", default=["recipe", "none"])
    parser.add_argument("--lines", type=int, default=30_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", help="write the curves to this JSON file")
    args = parser.parse_args(argv)

    from keras_adl.data.text_corpora import topic_corpus
    from keras_adl.recipes.embeddings.tasks import RECIPES

    results = []
    for size in args.vocabularies:
        path = None
        if size != "gcide":
            path = os.path.join(tempfile.mkdtemp(), f"corpus{size}.txt")
            with open(path, "w", encoding="utf-8") as f:
                f.write(topic_corpus(int(size), args.lines, seed=args.seed))
        tokenized, vocabulary, _ = RECIPES["word2vec"].corpus(path, 10**9, 5)
        for cap in args.caps:
            recipe = RECIPES["word2vec"].spec.preset("skipgram")["max_row_updates"]
            value = {"recipe": recipe, "none": None}.get(cap)
            value = float(cap) if value is None and cap not in ("recipe", "none") else value
            found = curve(tokenized, vocabulary, value, args.epochs, args.seed)
            row = dict(
                corpus=size,
                distinct_words=len(vocabulary.words),
                words=int(vocabulary.counts.sum()),
                max_row_updates=value,
                **found,
            )
            results.append(row)
            shown = " ".join(f"{x:.4f}" for x in found["losses"])
            print(
                f"{size:>6} ({row['distinct_words']} words) cap {value}: finite "
                f"{found['finite']}; loss per call: {shown}",
                flush=True,
            )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

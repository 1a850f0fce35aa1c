"""word2vec: skip-gram with negative sampling learns word vectors from a dictionary's text.

The corpus is Debian's GCIDE dictionary (``make data``; about 4 M words of definitions), or any
UTF-8 text with ``--data``. Examples are drawn in ``tf.data`` as the word2vec C code draws them
(subsampling of frequent words, a dynamic window inside each paragraph, negatives from the
unigram distribution to the 3/4, never the true context). The data, model and figures are those
of ``keras-adl train word2vec`` (`keras_adl.recipes.embeddings`). It prints nearest neighbours,
the WordSim-353 / SimLex-999 correlations and analogy accuracy (when gensim, in the ``bench``
extra, provides the standard files), writes a t-SNE picture and the TensorBoard projector
files, exports a SavedModel mapping words to vectors and neighbours, and checks the reloaded
one. ``--documents 20000 --epochs 1`` takes about a minute on two CPU cores.

    python examples/word2vec.py --out runs/word2vec
"""

import argparse
import json
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402,F401  (the reloaded SavedModel's normalisation ops)

from keras_adl.recipes.embeddings.evaluate import evaluate  # noqa: E402
from keras_adl.recipes.embeddings.serving import export_word_vectors  # noqa: E402
from keras_adl.recipes.embeddings.spec import MIN_COUNT  # noqa: E402
from keras_adl.recipes.embeddings.tasks import RECIPES  # noqa: E402

TASK = RECIPES["word2vec"]
MODEL = "skipgram"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="a text file or directory (default: the installed GCIDE)")
    parser.add_argument("--documents", type=int, default=20000, help="(default: %(default)s)")
    parser.add_argument("--epochs", type=int, default=1, help="(default: %(default)s)")
    parser.add_argument("--min-count", type=int, default=MIN_COUNT, help="(default: %(default)s)")
    parser.add_argument("--dim", type=int, default=TASK.spec.preset(MODEL)["dim"])
    parser.add_argument("--out", default="runs/word2vec")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    # the corpus is streamed from disk: one counting pass, then each epoch read again
    corpus, vocabulary, counted = TASK.corpus(args.data, args.documents, args.min_count)
    settings = dict(TASK.spec.preset(MODEL), dim=args.dim)
    print(
        f"{counted.documents} documents, {int(vocabulary.counts.sum())} words, "
        f"vocabulary {len(vocabulary.words)}"
    )
    batch_size = TASK.spec.batch_size
    steps = TASK.steps_per_epoch(MODEL, vocabulary, settings, batch_size)
    model = TASK.build_model(
        MODEL,
        vocabulary.size,
        batch_size=batch_size,
        total_steps=steps * args.epochs,  # SGD's learning rate decays over the run
        **settings,
    )
    data = TASK.dataset(MODEL, corpus, vocabulary, settings, batch_size)
    model.fit(data, epochs=args.epochs, steps_per_epoch=steps, shuffle=False, verbose=2)
    figures = evaluate(model, vocabulary, args.out)
    print(json.dumps(figures))

    export_dir = os.path.join(args.out, "export")
    shutil.rmtree(export_dir, ignore_errors=True)
    export_word_vectors(model, export_dir, vocabulary.words)
    reloaded = tf.saved_model.load(export_dir).signatures["serving_default"]
    word = vocabulary.words[min(50, len(vocabulary.words) - 1)]
    outputs = reloaded(words=tf.constant([word, "zzzunknownzzz"]))
    neighbours = [n.decode() for n in outputs["neighbors"].numpy()[0]]
    print(f"reloaded export: {word} -> {', '.join(neighbours)}")
    return {
        "figures": figures,
        "word": word,
        "neighbors": neighbours,
        "known": outputs["known"].numpy().tolist(),
        "png": os.path.join(args.out, "embeddings.png"),
        "export_dir": export_dir,
    }


if __name__ == "__main__":
    main()

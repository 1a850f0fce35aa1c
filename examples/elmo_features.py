"""ELMo features in your own Keras model: pretrain a character-level biLM, then classify fortunes
with a learned scalar mix of its layers (and, to compare, its top layer alone).

The biLM is the contextual recipe's (`keras_adl.recipes.contextual`, a CPU-sized ELMo) trained
on Debian's GCIDE dictionary (``make data``) or any UTF-8 text (``--data``). The classifier is
written here as a user would: character ids → `keras_adl.layers.ELMoEmbedding` (the frozen
biLM and a trainable `ScalarMix`) → `keras_adl.models.features_classifier`. It prints the
biLM's held-out perplexities, each classifier's held-out accuracy and the learned mixing
weights, and draws them in ``scalar_mix.png``.

    python examples/elmo_features.py --documents 20000 --steps 600 --out runs/elmo
"""

import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_adl.data.bilm import bilm_dataset, window_batches  # noqa: E402
from keras_adl.layers import ELMoEmbedding  # noqa: E402
from keras_adl.models import elmo_embedder, features_classifier  # noqa: E402
from keras_adl.recipes.contextual.plots import plot_scalar_mix  # noqa: E402
from keras_adl.recipes.contextual.spec import DOCUMENT_WORDS, MAX_WORDS  # noqa: E402
from keras_adl.recipes.contextual.tasks import RECIPES  # noqa: E402
from keras_adl.recipes.documents import data as documents_data  # noqa: E402
from keras_adl.text.characters import text_character_ids  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="pretraining text (default: GCIDE, make data)")
    parser.add_argument("--fortunes", help="a fortunes directory (default: the installed one)")
    parser.add_argument("--documents", type=int, default=20000, help="(default: %(default)s)")
    parser.add_argument("--steps", type=int, default=600, help="biLM training steps")
    parser.add_argument("--epochs", type=int, default=5, help="classifier epochs")
    parser.add_argument("--vocab-size", type=int, default=5000, help="biLM output words")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/elmo")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(args.seed)
    bilm_task = RECIPES["pretrain_bilm"]
    # The classifier's sizes and learning rate: the preset `keras-adl train` uses.
    classifier = RECIPES["fortunes_features"].spec.preset("bigru")
    # The corpus streamed from disk: split by document, its words counted, its windows read
    # again (and shuffled) while training.
    corpus = bilm_task.corpus(args.data, args.documents, args.vocab_size, MAX_WORDS)
    vocabulary = corpus.vocabulary
    bilm = bilm_task.build_model("elmo", vocabulary.size)
    length = bilm.input.shape[-1]
    data = window_batches(corpus.windows(seed=args.seed), vocabulary, 32, length)
    bilm.fit(data, steps_per_epoch=args.steps, epochs=1, verbose=2, shuffle=False)
    held = bilm_dataset(
        corpus.held[:1000], vocabulary, 32, MAX_WORDS, length, shuffle=False, drop_remainder=False
    )
    figures = bilm.evaluate(held, verbose=0, return_dict=True)
    result = {"perplexity": {d: float(figures[f"{d}_perplexity"]) for d in ("forward", "backward")}}
    print(json.dumps(result))

    train_docs, train_labels, test_docs, test_labels, names, _ = documents_data.fortune_topics(
        args.fortunes, 10**9
    )

    def batches(texts, labels, shuffle):
        dataset = tf.data.Dataset.from_tensor_slices((list(texts), list(labels)))
        dataset = dataset.shuffle(len(texts), seed=args.seed) if shuffle else dataset
        encode = lambda t, y: (text_character_ids(t, DOCUMENT_WORDS, length)[1], y)  # noqa: E731
        return dataset.batch(32).map(encode)

    embedder = elmo_embedder(bilm)
    weights, gammas, accuracy = {}, {}, {}
    for mix in ("all", "top"):
        keras.utils.set_random_seed(args.seed)
        characters = keras.Input((DOCUMENT_WORDS, length), dtype="int32", name="characters")
        elmo = ELMoEmbedding(embedder, mix=mix, name="elmo")
        model = features_classifier(
            characters,
            elmo(characters),
            len(names),
            units=classifier["units"],
            dropout=classifier["dropout"],
        )
        model.compile(
            keras.optimizers.Adam(classifier["learning_rate"], global_clipnorm=5.0),
            keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
        model.fit(
            batches(train_docs, train_labels, True), epochs=args.epochs, verbose=0, shuffle=False
        )
        scores = model.evaluate(batches(test_docs, test_labels, False), verbose=0, return_dict=True)
        accuracy[mix] = float(scores["accuracy"])
        weights[mix] = elmo.scalar_mix.mixing_weights()
        gammas[mix] = float(elmo.scalar_mix.gamma.numpy())
        print(f"ELMo ({mix} layers): held-out accuracy {accuracy[mix]:.3f}")
    print(
        "mixing weights (tokens, layer 1, layer 2):", [round(float(w), 3) for w in weights["all"]]
    )
    plot_scalar_mix(
        {"fortunes": weights["all"]},
        os.path.join(args.out, "scalar_mix.png"),
        gammas={"fortunes": gammas["all"]},
    )
    result["accuracy"] = accuracy
    result["mixing_weights"] = [float(w) for w in weights["all"]]
    return result


if __name__ == "__main__":
    main()

"""A Hierarchical Attention Network finds the one sentence that decides a document's class.

The synthetic needle task: every document has 4–10 sentences of pseudo-words; one of them holds
the marker word "needle" and the class word, and every other sentence holds a class word of a
random class, so word counts alone cannot tell the class. HAN (bi-GRU word encoder + word
attention, bi-GRU sentence encoder + sentence attention) reads raw strings tokenized in-graph
by tensorflow-text. The data, tokenizer, model and held-out figures are those of ``keras-adl
train needle`` (`keras_adl.recipes.documents`), trained with `TRAINING`'s epochs and batches;
about 20 s on two CPU cores. It prints held-out accuracy and how often the sentence attention
peaks on the key sentence, writes the attention of one document as HTML and PNG, exports a
SavedModel that takes raw strings and checks the reloaded one. With ``--fortunes`` it trains on
Debian's fortunes (``make data``) instead, as ``keras-adl train fortunes``.

    python examples/han_documents.py --out runs/han_documents
"""

import argparse
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402,F401  (the reloaded SavedModel's tokenizer ops)

from keras_adl.models import han_attention  # noqa: E402
from keras_adl.recipes.documents.evaluate import evaluate  # noqa: E402
from keras_adl.recipes.documents.serving import export_han  # noqa: E402
from keras_adl.recipes.documents.tasks import RECIPES  # noqa: E402

MODEL = "han"
# The demo's departure from the recipe's training (3 epochs of 64 documents).
TRAINING = dict(epochs=4, batch_size=32)


def unit_overrides(units):
    """``--units U``: U attention units and U/2 GRU units per direction (the recipe's ratio),
    replacing the recipe's sizes."""
    return dict(units=units, encoder_units=units // 2)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--documents",
        type=int,
        help="training documents (default: the recipe's for the task, "
        f"{RECIPES['needle'].spec.samples} needle documents)",
    )
    parser.add_argument(
        "--epochs", type=int, default=TRAINING["epochs"], help="(default: %(default)s)"
    )
    parser.add_argument(
        "--units",
        type=int,
        help="attention units, the GRUs' half as many (default: the recipe's, "
        f"{RECIPES['needle'].spec.preset(MODEL)['units']})",
    )
    parser.add_argument("--fortunes", action="store_true", help="Debian's fortunes instead")
    parser.add_argument("--out", default="runs/han_documents")
    args = parser.parse_args(argv)
    args.task = "fortunes" if args.fortunes else "needle"
    if args.documents is None:
        args.documents = RECIPES[args.task].spec.samples
    return args


def load_data(args):
    """The recipe's ``(train_docs, train_labels, test_docs, test_labels, class_names,
    test_keys)`` and its tokenizer of the training documents."""
    task = RECIPES[args.task]
    data = task.documents(None, args.documents)
    return data, task.tokenizer(data.train_docs)


def build_model(args, vocab_size=None, num_classes=None):
    """The compiled model ``keras-adl train needle`` (or ``fortunes``) trains, with ``--units``
    if given; the vocabulary size and class count default to those of the data."""
    if vocab_size is None:
        data, tokenizer = load_data(args)
        vocab_size, num_classes = tokenizer.vocabulary_size, len(data[4])
    overrides = {} if args.units is None else unit_overrides(args.units)
    return RECIPES[args.task].build_model(MODEL, vocab_size, num_classes, **overrides)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)

    data, tokenizer = load_data(args)
    docs, labels, test_docs, test_labels, class_names, keys = data
    model = build_model(args, tokenizer.vocabulary_size, len(class_names))
    model.fit(
        tokenizer.dataset(docs, labels, batch_size=TRAINING["batch_size"], seed=0),
        epochs=args.epochs,
        shuffle=False,
        verbose=2,
    )  # the dataset shuffles itself

    # The recipe's held-out figures and its pictures of the first test document.
    metrics = evaluate(model, tokenizer, data, args.out, title=f"{MODEL} on {args.task}")
    result = {"accuracy": metrics["held_out_accuracy"]}
    if keys is not None:
        result["hit_rate"] = metrics["sentence_attention_hit_rate"]
    print(
        f"held-out accuracy {result['accuracy']:.3f}"
        + (
            f"; sentence attention peaks on the key sentence {result['hit_rate']:.3f}"
            if keys is not None
            else ""
        )
    )
    for extension in ("html", "png"):
        result[extension] = os.path.join(args.out, f"attention.{extension}")
    print(f"pictures: {result['html']}, {result['png']}")

    # A SavedModel from raw strings to classes and attention, reloaded with TensorFlow only.
    export_dir = os.path.join(args.out, "saved_model")
    shutil.rmtree(export_dir, ignore_errors=True)
    export_han(model, export_dir, tokenizer, class_names=class_names)
    reloaded = tf.saved_model.load(export_dir)
    served = reloaded.signatures["serving_default"](documents=tf.constant(test_docs[:8]))
    expected = han_attention(model).predict(
        tokenizer.encode(tf.constant(test_docs[:8])), verbose=0
    )["probabilities"]
    np.testing.assert_allclose(served["probabilities"].numpy(), expected, atol=1e-5)
    print(
        f"exported to {export_dir}; the reloaded SavedModel says "
        f"{served['class_names'].numpy()[0].decode()!r} for {test_docs[0][:50]!r}..."
    )
    result["export_dir"] = export_dir
    return result


if __name__ == "__main__":
    main()

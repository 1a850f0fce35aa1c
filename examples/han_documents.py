"""A Hierarchical Attention Network finds the one sentence that decides a document's class.

The synthetic needle task: every document has 4–10 sentences of pseudo-words; one of them holds
the marker word "needle" and the class word, and every other sentence holds a class word of a
random class, so word counts alone cannot tell the class. HAN (bi-GRU word encoder + word
attention, bi-GRU sentence encoder + sentence attention) reads raw strings tokenized in-graph
by tensorflow-text. About 20 s on two CPU cores. It prints held-out accuracy and how often the
sentence attention peaks on the key sentence, writes the attention of one document as HTML and
PNG, exports a SavedModel that takes raw strings and checks the reloaded one. With
``--fortunes`` it trains on Debian's fortunes (``make data``) instead.

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

from keras_adl.models import han_attention, han_classifier  # noqa: E402
from keras_adl.plotting import plot_document_attention  # noqa: E402
from keras_adl.tasks.digits import split_dataset  # noqa: E402
from keras_adl.tasks.documents import (  # noqa: E402
    CLASS_WORDS,
    load_fortunes,
    needle_documents,
    sentence_attention_hit_rate,
)
from keras_adl.text import DocumentTokenizer  # noqa: E402
from keras_adl.training.export import export_han  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=4000, help="training documents")
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--units", type=int, default=64, help="attention units")
    parser.add_argument("--fortunes", action="store_true", help="Debian's fortunes instead")
    parser.add_argument("--out", default="runs/han_documents")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(0)

    if args.fortunes:
        docs, labels, class_names = load_fortunes()
        (docs, labels), (test_docs, test_labels) = split_dataset(
            np.array(docs, dtype=object), labels, 0.2, seed=0)
        docs, test_docs, keys, shape = list(docs), list(test_docs), None, (15, 30)
    else:
        docs, labels, _ = needle_documents(args.documents, seed=0)
        test_docs, test_labels, keys = needle_documents(500, seed=1)
        class_names, shape = list(CLASS_WORDS[:4]), (10, 10)

    tokenizer = DocumentTokenizer.build(docs, *shape, max_size=30000)
    model = han_classifier(tokenizer.vocabulary_size, len(class_names), *shape,
                           embedding_dim=64, units=args.units, encoder_units=args.units // 2,
                           dropout=0.1)
    model.compile(
        optimizer=keras.optimizers.Adam(2e-3, global_clipnorm=5.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=True,
    )
    model.fit(tokenizer.dataset(docs, labels, batch_size=32, seed=0), epochs=args.epochs,
              shuffle=False, verbose=2)  # the dataset shuffles itself

    outputs = han_attention(model).predict(tokenizer.encode(tf.constant(test_docs)), verbose=0)
    predicted = outputs["probabilities"].argmax(-1)
    result = {"accuracy": float(np.mean(predicted == test_labels))}
    if keys is not None:
        result["hit_rate"] = sentence_attention_hit_rate(outputs["sentence_attention"], keys)
    print(f"held-out accuracy {result['accuracy']:.3f}" + (
        f"; sentence attention peaks on the key sentence {result['hit_rate']:.3f}"
        if keys is not None else ""))

    words = tokenizer.tokens(tf.constant(test_docs[:1])).numpy()[0]
    title = (f"predicted {class_names[predicted[0]]} "
             f"({outputs['probabilities'][0].max():.2f}), true {class_names[test_labels[0]]}")
    for extension in ("html", "png"):
        result[extension] = plot_document_attention(
            words, outputs["word_attention"][0], outputs["sentence_attention"][0],
            os.path.join(args.out, f"attention.{extension}"), title=title)
    print(f"pictures: {result['html']}, {result['png']}")

    # A SavedModel from raw strings to classes and attention, reloaded with TensorFlow only.
    export_dir = os.path.join(args.out, "saved_model")
    shutil.rmtree(export_dir, ignore_errors=True)
    export_han(model, export_dir, tokenizer, class_names=class_names)
    reloaded = tf.saved_model.load(export_dir)
    served = reloaded.signatures["serving_default"](documents=tf.constant(test_docs[:8]))
    np.testing.assert_allclose(served["probabilities"].numpy(), outputs["probabilities"][:8],
                               atol=1e-5)
    print(f"exported to {export_dir}; the reloaded SavedModel says "
          f"{served['class_names'].numpy()[0].decode()!r} for {test_docs[0][:50]!r}...")
    result["export_dir"] = export_dir
    return result


if __name__ == "__main__":
    main()

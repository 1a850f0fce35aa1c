"""The documents family's serving: raw document strings in, classes and attention maps out,
and how ``keras-adl predict`` prints them."""

import os

import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops of exported text models)

from keras_adl.models.han import ENCODER_LAYER, han_attention
from keras_adl.training.export import export_serving_fn
from keras_adl.training.rundir import RecipeError


def make_han_serving_fn(model, tokenizer, class_names=None):
    """A ``tf.function`` from raw document strings to a HAN's classes and attention maps.

    Sentence and word splitting, vocabulary lookup and padding run in the graph (the
    tensorflow-text ops of `keras_adl.text.DocumentTokenizer`), so the exported SavedModel
    takes raw strings; reloading it needs ``import tensorflow_text`` but not keras_adl.

    Args:
        model: a model from `keras_adl.models.han_classifier`.
        tokenizer: the `DocumentTokenizer` the model was trained with.
        class_names: optional class names, returned as strings per document.

    Returns:
        A ``tf.function`` with input signature ``documents`` ``[None]`` string returning a dict:
        ``classes`` ``[B]`` int32, ``probabilities`` ``[B, C]``, ``word_attention``
        ``[B, S, W]``, ``sentence_attention`` ``[B, S]`` (float32), ``tokens`` ``[B, S, W]``
        (the words at the attention positions, ``""`` at padding) and, with
        ``class_names``, ``class_names`` ``[B]``.
    """
    attention_model = han_attention(model)
    _check_han_tokenizer(model, tokenizer, class_names, ENCODER_LAYER)
    names = None if class_names is None else tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="documents")])
    def serve(documents):
        ids, tokens = tokenizer.encode_with_tokens(documents)
        outputs = attention_model(ids, training=False)
        probabilities = tf.cast(outputs["probabilities"], tf.float32)
        classes = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        result = {
            "classes": classes,
            "probabilities": probabilities,
            "word_attention": tf.cast(outputs["word_attention"], tf.float32),
            "sentence_attention": tf.cast(outputs["sentence_attention"], tf.float32),
            "tokens": tokens,
        }
        if names is not None:
            result["class_names"] = tf.gather(names, classes)
        return result

    return serve


def _check_han_tokenizer(model, tokenizer, class_names, encoder_name):
    """Clear errors when a HAN, its tokenizer and its class names do not fit together."""
    where = "make_han_serving_fn: "
    shape = tuple(model.input.shape[1:])
    wanted = (tokenizer.max_sentences, tokenizer.max_words)
    if any(d is not None and d != w for d, w in zip(shape, wanted)):
        raise ValueError(
            f"{where}the model reads [S, W] = {list(shape)} but `tokenizer` pads documents to "
            f"{list(wanted)}; use the tokenizer the model was trained with."
        )
    vocab_size = model.get_layer(encoder_name).vocab_size
    if vocab_size is not None and tokenizer.vocabulary_size > vocab_size:
        raise ValueError(
            f"{where}`tokenizer` has {tokenizer.vocabulary_size} ids but the model's embedding "
            f"holds {vocab_size}; use the tokenizer the model was trained with."
        )
    num_classes = model.outputs[0].shape[-1]
    if class_names is not None and len(class_names) != num_classes:
        raise ValueError(
            f"{where}`class_names` must name the model's {num_classes} classes; received "
            f"{len(class_names)} names."
        )


def export_han(model, export_dir, tokenizer, class_names=None):
    """Writes a SavedModel whose ``serving_default`` classifies raw document strings.

    Args:
        model, tokenizer, class_names: as in `make_han_serving_fn`.
        export_dir: where to write; must not exist (nothing is left behind on failure).
    """
    serving_fn = make_han_serving_fn(model, tokenizer, class_names)
    return export_serving_fn(model, export_dir, serving_fn, resources=tokenizer.tables)


def predict(export_dir, inputs):
    """Prints the class, its probability and the most attended sentence of each document (a
    raw string, or the path of a UTF-8 text file)."""
    texts, unreadable = [], []
    for item in inputs:
        if os.path.isfile(item):
            with open(item, encoding="utf-8", errors="replace") as f:
                texts.append(f.read())
        else:
            texts.append(item)
    loaded = tf.saved_model.load(export_dir)
    outputs = loaded.signatures["serving_default"](documents=tf.constant(texts))
    for item, name, probabilities, sentences, tokens in zip(
        inputs,
        outputs["class_names"].numpy(),
        outputs["probabilities"].numpy(),
        outputs["sentence_attention"].numpy(),
        outputs["tokens"].numpy(),
    ):
        label = item if len(item) <= 40 or os.path.isfile(item) else item[:37] + "..."
        label = " ".join(label.split())  # one output line per document
        if not sentences.any():
            print(f"{label}\t(no words this model can read)")
            unreadable.append(label)
            continue
        top = int(sentences.argmax())
        words = " ".join(w.decode() for w in tokens[top] if w)
        print(
            f"{label}\t{name.decode()}\tp={probabilities.max():.3f}\t"
            f"sentence {top + 1} ({sentences[top]:.2f}): {words}"
        )
    if unreadable:
        raise RecipeError(
            f"{len(unreadable)} input(s) have no words this model can read: {unreadable[0]!r}"
        )

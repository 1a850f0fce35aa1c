"""The documents family's serving: raw document strings in, classes and attention maps out,
and how ``keras-adl predict`` prints them."""

import os

import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops of exported text models)

from keras_adl.conventions import PAD
from keras_adl.models.han import ENCODER_LAYER, han_attention
from keras_adl.recipes._recipe import Answers, input_label, raw_bytes
from keras_adl.training.export import export_serving_fn
from keras_adl.training.serving_inputs import read_raw_text


def make_han_serving_fn(model, tokenizer, class_names=None):
    """A ``tf.function`` from raw document strings to a HAN's classes and attention maps.

    Sentence and word splitting, vocabulary lookup and padding run in the graph (the
    tensorflow-text ops of `keras_adl.text.DocumentTokenizer`), so the exported SavedModel
    takes raw strings; reloading it needs ``import tensorflow_text`` but not keras_adl.

    Any string is answered: invalid UTF-8 is replaced (`keras_adl.training.serving_inputs`); a
    document of no words gets class -1, class name ``""`` and zero probabilities and
    attention; a longer one than the tokenizer's ``[max_sentences, max_words]`` is classified
    from the sentences and words that fit.

    Args:
        model: a model from `keras_adl.models.han_classifier`.
        tokenizer: the `DocumentTokenizer` the model was trained with.
        class_names: optional class names, returned as strings per document.

    Returns:
        A ``tf.function`` with input signature ``documents`` ``[None]`` string returning a dict:
        ``classes`` ``[B]`` int32, ``probabilities`` ``[B, C]``, ``word_attention``
        ``[B, S, W]``, ``sentence_attention`` ``[B, S]`` (float32), ``tokens`` ``[B, S, W]``
        (the words at the attention positions, ``""`` at padding), the flags ``empty``,
        ``truncated`` and ``invalid_utf8`` (``bool [B]``) and, with ``class_names``,
        ``class_names`` ``[B]``.
    """
    attention_model = han_attention(model)
    _check_han_tokenizer(model, tokenizer, class_names, ENCODER_LAYER)
    names = None if class_names is None else tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="documents")])
    def serve(documents):
        text, invalid_utf8 = read_raw_text(documents)
        ids, tokens, truncated = tokenizer.encode_with_cut(text)
        empty = tf.reduce_all(tf.equal(ids, PAD), axis=[1, 2])
        outputs = attention_model(ids, training=False)

        def answered(x):  # an empty document's numbers are zeros
            x = tf.cast(x, tf.float32)
            return tf.where(tf.reshape(empty, [-1] + [1] * (x.shape.rank - 1)), 0.0, x)

        probabilities = answered(outputs["probabilities"])
        classes = tf.where(empty, -1, tf.argmax(probabilities, axis=-1, output_type=tf.int32))
        result = {
            "classes": classes,
            "probabilities": probabilities,
            "word_attention": answered(outputs["word_attention"]),
            "sentence_attention": answered(outputs["sentence_attention"]),
            "tokens": tokens,
            "empty": empty,
            "truncated": truncated,
            "invalid_utf8": invalid_utf8,
        }
        if names is not None:
            result["class_names"] = tf.where(empty, "", tf.gather(names, tf.maximum(classes, 0)))
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
    raw string, or the path of a UTF-8 text file), in order; a document of no words gets a line
    saying so (exit status 1) and the others are still answered."""
    texts = []
    for item in inputs:
        if os.path.isfile(item):
            with open(item, "rb") as f:  # the export replaces invalid UTF-8, and flags it
                texts.append(f.read())
        else:
            texts.append(item)
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    outputs = {k: v.numpy() for k, v in serve(documents=tf.constant(raw_bytes(texts))).items()}
    labels = [item if os.path.isfile(item) else input_label(item) for item in inputs]
    answers = Answers(inputs, labels)
    for index in range(len(inputs)):
        sentences = outputs["sentence_attention"][index]
        empty = outputs["empty"][index] if "empty" in outputs else not sentences.any()
        if empty:
            answers.fail(index + 1, "no words this model can read")
            continue
        top = int(sentences.argmax())
        words = " ".join(w.decode() for w in outputs["tokens"][index][top] if w)
        probabilities = outputs["probabilities"][index]
        answers.answer(
            index + 1,
            f"{outputs['class_names'][index].decode()}\tp={probabilities.max():.3f}\t"
            f"sentence {top + 1} ({sentences[top]:.2f}): {words}",
        )
        answers.flags(
            index + 1, outputs, index, "longer than the model reads; classified from its start"
        )
    answers.finish()

"""The pretraining family's serving: raw prompts in, generated text out (the causal LM); raw
texts in, classes out, each read window by window (the fine-tuned classifiers); the exports and
how ``keras-adl predict`` prints them."""

import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops of exported text models)

from keras_adl.models.gpt import generate
from keras_adl.recipes.pretraining.data import (
    check_classifier,
    classifier_windows,
    save_tokenizer,
)
from keras_adl.training.export import export_serving_fn
from keras_adl.training.rundir import write_task_file


def make_generation_serving_fn(model, tokenizer, max_length):
    """A ``tf.function`` from raw prompt strings and sampling settings to generated text.

    Signature: ``prompts [None]`` string, ``temperature`` float (0: greedy), ``top_k`` int
    (0: no limit), ``top_p`` float (1: no limit), ``seed`` int (sampling draws are stateless
    functions of it and the step). Returns ``texts [B]`` (prompt and continuation, normalised
    words) and ``tokens [B, max_length]``. Tokenization and generation run in the graph, so
    the SavedModel needs only ``tensorflow`` and ``tensorflow_text`` to reload.
    """

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="prompts"),
            tf.TensorSpec([], tf.float32, name="temperature"),
            tf.TensorSpec([], tf.int32, name="top_k"),
            tf.TensorSpec([], tf.float32, name="top_p"),
            tf.TensorSpec([], tf.int32, name="seed"),
        ]
    )
    def serve(prompts, temperature, top_k, top_p, seed):
        ids = tokenizer.tokenize(prompts)[:, : max_length - 1].to_tensor(shape=[None, None])

        def noise(t, shape):
            return tf.random.stateless_uniform(shape, tf.stack([seed, t]), minval=1e-7)

        tokens = generate(
            model,
            ids,
            max_length,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            noise=noise,
        )
        return {"texts": tokenizer.detokenize(tokens), "tokens": tokens}

    return serve


def make_text_classifier_serving_fn(
    model, model_name, tokenizer, sequence_length, class_names, max_windows=1
):
    """A ``tf.function`` from raw strings (``texts [None]``) to a fine-tuned classifier's
    ``classes``, ``probabilities`` and ``class_names`` (and ``windows``, how many windows of
    each text it read).

    Each text is read as the classifier was trained to read it: up to ``max_windows`` windows
    of ``sequence_length - 2`` pieces (`classifier_windows`). Its probabilities are the
    product of its windows' class probabilities, renormalised (the softmax of the sum of their
    log-probabilities), so one confident window can outweigh several unsure ones, and a text
    of one window gets the model's own probabilities. (A product of posteriors counts the
    class prior once per window, so a long text leans a little further towards the frequent
    topics than its windows' evidence alone would.) Tokenization and windowing run in the
    graph: the SavedModel needs only ``tensorflow`` and ``tensorflow_text`` to reload.
    """
    check_classifier(model_name, sequence_length)
    names = tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        inputs, _, owner = classifier_windows(
            model_name, tokenizer, texts, sequence_length, max_windows
        )
        logits = model(inputs, training=False)
        if isinstance(logits, dict):
            logits = logits["classes"]
        log_probabilities = tf.nn.log_softmax(tf.cast(logits, tf.float32))
        count = tf.shape(texts)[0]
        scores = tf.math.unsorted_segment_sum(log_probabilities, owner, count)
        probabilities = tf.nn.softmax(scores)
        classes = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        return {
            "classes": classes,
            "probabilities": probabilities,
            "class_names": tf.gather(names, classes),
            "windows": tf.math.bincount(owner, minlength=count, maxlength=count),
        }

    return serve


def export(model, export_dir, serving_fn, tokenizer, record):
    """Writes the SavedModel of ``serving_fn``, the vocabulary beside it and the task file
    (``record``'s task and model)."""
    export_serving_fn(model, export_dir, serving_fn)
    save_tokenizer(tokenizer, export_dir)
    write_task_file(export_dir, task=record["task"], model=record["model"])


def _signature(export_dir):
    return tf.saved_model.load(export_dir).signatures["serving_default"]


def predict_generation(export_dir, inputs):
    """Prints each prompt and its greedy continuation."""
    outputs = _signature(export_dir)(
        prompts=tf.constant(list(inputs)),
        temperature=tf.constant(0.0),
        top_k=tf.constant(0),
        top_p=tf.constant(1.0),
        seed=tf.constant(0),
    )
    for prompt, text in zip(inputs, outputs["texts"].numpy()):
        print(f"{prompt}\t{text.decode()}")


def predict_classes(export_dir, inputs):
    """Prints each text's class, its probability and the number of windows read."""
    outputs = _signature(export_dir)(texts=tf.constant(list(inputs)))
    windows = outputs.get("windows")  # exports from before windows have none
    windows = windows.numpy() if windows is not None else [None] * len(inputs)
    for text, name, probabilities, count in zip(
        inputs, outputs["class_names"].numpy(), outputs["probabilities"].numpy(), windows
    ):
        label = " ".join((text if len(text) <= 40 else text[:37] + "...").split())
        read = f"\twindows={count}" if count is not None else ""
        print(f"{label}\t{name.decode()}\tp={probabilities.max():.3f}{read}")

"""The memory family's serving: float sequences in, logits out, and how ``keras-adl predict``
reads copy-task bit vectors and prints their copies."""

import numpy as np
import tensorflow as tf

from keras_adl.recipes._recipe import Answers
from keras_adl.training.export import export_serving_fn
from keras_adl.training.serving_inputs import check_example_shape, read_values, run_on_one_more


def make_memory_serving_fn(model):
    """A ``tf.function`` from sequences ``inputs [None, None, D]`` float32 to the model's
    ``logits [B, T, output_dim]`` and ``invalid_values`` ``bool [B]``. Any batch is answered:
    NaN and infinite values are read as 0 (and flagged), an empty batch or sequences of no
    step get empty logits."""
    spec = tf.TensorSpec([None, None, model.input.shape[-1]], tf.float32, name="inputs")

    def run(inputs):  # at least one step: no recurrent layer runs over zero steps
        steps = tf.shape(inputs)[1]
        padded = tf.pad(inputs, [[0, 0], [0, tf.maximum(1 - steps, 0)], [0, 0]])
        return tf.cast(model(padded, training=False), tf.float32)[:, :steps]

    @tf.function(input_signature=[spec])
    def serve(inputs):
        inputs = check_example_shape(inputs, spec.shape[1:], "inputs")
        inputs, invalid = read_values(inputs)
        return {"logits": run_on_one_more(run, inputs), "invalid_values": invalid}

    return serve


def export_memory_model(model, export_dir):
    """A SavedModel whose ``serve`` (``serving_default``) is `make_memory_serving_fn`."""
    export_serving_fn(model, export_dir, make_memory_serving_fn(model))


def predict_copies(export_dir, inputs):
    """Runs an exported copy model on bit vectors given as strings of 0/1 (together, one
    sequence to copy); prints each vector and its copy. A vector that is not of the model's
    width in 0s and 1s gets a line saying so (exit status 1) and the others are copied as the
    sequence."""
    loaded = tf.saved_model.load(export_dir)
    signature = loaded.signatures["serving_default"]
    width = int(signature.structured_input_signature[1]["inputs"].shape[-1])
    bits = width - 1
    answers = Answers(inputs)
    problems = {}
    for index, vector in enumerate(inputs):
        if set(vector) - {"0", "1"}:
            problems[index] = "not a bit vector: write it in 0s and 1s, e.g. 10110010"
        elif len(vector) != bits:
            problems[index] = f"this model copies {bits}-bit vectors; received {len(vector)} bits"
    sequence = [v for i, v in enumerate(inputs) if i not in problems]
    copies = iter(())
    if sequence:
        length = len(sequence)
        x = np.zeros((1, 2 * length + 1, width), "float32")
        x[0, :length, :bits] = [[float(c) for c in v] for v in sequence]
        x[0, length, bits] = 1.0  # the end-of-input flag
        logits = signature(inputs=tf.constant(x))
        logits = (logits["logits"] if "logits" in logits else logits["output_0"]).numpy()
        copies = iter(logits[0, length + 1 :])
    for index in range(len(inputs)):
        if index in problems:
            answers.fail(index + 1, problems[index])
            continue
        answers.answer(index + 1, "".join("1" if v > 0 else "0" for v in next(copies)))
    answers.finish()

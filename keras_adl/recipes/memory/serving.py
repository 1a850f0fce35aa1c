"""The memory family's serving: float sequences in, logits out, and how ``keras-adl predict``
reads copy-task bit vectors and prints their copies."""

import numpy as np
import tensorflow as tf

from keras_adl.training.export import export_serving_fn
from keras_adl.training.rundir import RecipeError


def export_memory_model(model, export_dir):
    """A SavedModel whose ``serve`` (``serving_default``) maps ``inputs [None, None, D]``
    float32 to the logits ``[B, T, output_dim]``."""
    spec = tf.TensorSpec([None, None, model.input.shape[-1]], tf.float32, name="inputs")
    serve = tf.function(lambda inputs: model(inputs, training=False), input_signature=[spec])
    export_serving_fn(model, export_dir, serve)


def predict_copies(export_dir, inputs):
    """Runs an exported copy model on bit vectors given as strings of 0/1; prints each vector
    and its copy."""
    bits = len(inputs[0])
    if any(len(v) != bits or set(v) - {"0", "1"} for v in inputs):
        raise RecipeError("inputs must be bit vectors of one length, e.g. 10110010 01100110")
    loaded = tf.saved_model.load(export_dir)
    width = int(
        loaded.signatures["serving_default"].structured_input_signature[1]["inputs"].shape[-1]
    )
    if bits != width - 1:
        raise RecipeError(f"this model copies {width - 1}-bit vectors; received {bits} bits")
    length = len(inputs)
    x = np.zeros((1, 2 * length + 1, width), "float32")
    x[0, :length, :bits] = [[float(c) for c in v] for v in inputs]
    x[0, length, bits] = 1.0  # the end-of-input flag
    logits = loaded.serve(tf.constant(x)).numpy()[0, length + 1 :]
    for source, row in zip(inputs, logits):
        print(f"{source}\t{''.join('1' if v > 0 else '0' for v in row)}")

"""The memory family's figures: bit errors and bits per held-out sequence (copy: at longer
lengths too), and the picture of a memory model's addressing."""

import os

from keras_adl.models.memory import addressing_model
from keras_adl.recipes._pictures import draw
from keras_adl.recipes.memory import data
from keras_adl.recipes.memory.plots import plot_memory_addressing


def evaluate(task_name, model, longer_lengths=()):
    """Held-out bit errors and bits per sequence, and bit errors per sequence at each of
    ``longer_lengths``."""
    x, y, w = data.held_out(task_name)
    result = model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
    metrics = {
        "held_out_bit_errors_per_sequence": result["bit_errors"],
        "held_out_bits_per_sequence": result["bits_per_sequence"],
    }
    for length in longer_lengths:
        x, y, w = data.longer(task_name, length)
        longer = model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
        metrics[f"bit_errors_per_sequence_length_{length}"] = longer["bit_errors"]
    return metrics


def draw_addressing(task_name, model_name, model, out):
    """``addressing.png`` in ``out``: the write and read weights of a memory model on one
    sequence of the task (`data.picture_inputs`)."""
    outputs = addressing_model(model)(data.picture_inputs(task_name))
    draw(
        plot_memory_addressing,
        outputs["write_weights"][0],
        outputs["read_weights"][0],
        os.path.join(out, "addressing.png"),
        title=f"{model_name} on {task_name}: memory addressing",
    )

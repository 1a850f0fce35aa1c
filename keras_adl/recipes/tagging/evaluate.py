"""The tagging family's figures: the primary's held-out token accuracy and chunk F1, and each
auxiliary module's token accuracy."""

import os

import numpy as np

from keras_adl.recipes._pictures import draw
from keras_adl.recipes.tagging.data import character_table, model_inputs
from keras_adl.recipes.tagging.plots import plot_view_accuracies

# Tag id 1 is "O" (outside every chunk) in DATE_FIELD_TAGS; 0 is padding.
OUTSIDE = 1


def token_accuracy(true, predicted):
    """The share of real tokens (tag id > 0) whose predicted tag is the true one.

    Example:

    >>> token_accuracy(np.array([[3, 4, 0]]), np.array([[3, 5, 6]]))
    0.5
    """
    true, predicted = np.asarray(true), np.asarray(predicted)
    real = true > 0
    return float(np.mean(true[real] == predicted[real])) if real.any() else 0.0


def chunks(tags, outside=OUTSIDE):
    """The set of chunks ``(row, start, end, tag)`` of ``[N, T]`` tag ids: maximal runs of one
    tag other than ``outside`` and padding (0), ``end`` exclusive (IO chunking, as conlleval
    reads tags without B-/I- prefixes).

    Example:

    >>> sorted(chunks(np.array([[3, 3, 1, 4, 0]])))
    [(0, 0, 2, 3), (0, 3, 4, 4)]
    """
    found = set()
    for row, sequence in enumerate(np.asarray(tags)):
        start = None
        for t, tag in enumerate([*sequence.tolist(), 0]):
            if start is not None and tag != sequence[start]:
                found.add((row, start, t, int(sequence[start])))
                start = None
            if start is None and tag not in (0, outside):
                start = t
    return found


def chunk_f1(true, predicted, outside=OUTSIDE):
    """F1 of the predicted chunks against the true ones (`chunks`; a chunk counts when its
    span and tag are both right); predictions at padding are ignored.

    Example:

    >>> chunk_f1(np.array([[3, 3, 1, 4]]), np.array([[3, 3, 1, 5]]))
    0.5
    """
    true, predicted = np.asarray(true), np.asarray(predicted)
    predicted = np.where(true > 0, predicted, 0)
    gold, guessed = chunks(true, outside), chunks(predicted, outside)
    if not gold and not guessed:
        return 1.0
    correct = len(gold & guessed)
    return 2.0 * correct / (len(gold) + len(guessed))


def evaluate(model, tagging_data, out, title):
    """The held-out figures and the per-view picture (``views.png`` in ``out``): the primary's
    ``held_out_token_accuracy`` and ``held_out_chunk_f1``, and ``auxiliary_token_accuracy``
    ``{view: accuracy}`` of each auxiliary module."""
    words, tags = tagging_data.test
    table = character_table(tagging_data.vocabulary) if tagging_data.characters else None
    outputs = model.predict(model_inputs(words, table), batch_size=256, verbose=0)
    task = tagging_data.task
    predicted = np.asarray(outputs[task]).argmax(-1)
    metrics = {
        "held_out_token_accuracy": token_accuracy(tags, predicted),
        "held_out_chunk_f1": chunk_f1(tags, predicted),
        "held_out_sequences": len(words),
    }
    auxiliaries = {
        key.split("/", 1)[1]: token_accuracy(tags, np.asarray(value).argmax(-1))
        for key, value in outputs.items()
        if key.startswith(task + "/")
    }
    if auxiliaries:
        metrics["auxiliary_token_accuracy"] = auxiliaries
        accuracies = {"primary": metrics["held_out_token_accuracy"], **auxiliaries}
        draw(plot_view_accuracies, accuracies, os.path.join(out, "views.png"), title=title)
    return metrics

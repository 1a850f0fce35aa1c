"""The memory tasks' data: fresh random sequences of `keras_adl.data.algorithmic`, each use
drawn with a seed of its own (training, development, figures, longer lengths, picture), so
that no held-out sequence is one the model trained on."""

from keras_adl.data.algorithmic import GENERATORS, task_dataset, task_dims
from keras_adl.recipes._development import DEVELOPMENT_SEED
from keras_adl.recipes.memory.spec import DEVELOPMENT_SEQUENCES, HELD_OUT

TRAINING_SEED = 0
HELD_OUT_SEED = 1  # the figures'
LONGER_SEED = 2
PICTURE_SEED = 3
LONGER_SEQUENCES = 64  # sequences of each longer length


def dims(task_name):
    """``(input_dim, output_dim)`` of the task's sequences."""
    return task_dims(task_name)


def training(task_name, batch_size):
    """The endless ``tf.data.Dataset`` of fresh training batches of ``(inputs, targets,
    weights)``."""
    return task_dataset(task_name, batch_size, seed=TRAINING_SEED)


def development(task_name, count=DEVELOPMENT_SEQUENCES):
    """``(inputs, targets, weights)``: ``count`` sequences of the task drawn with their own
    seed, neither the training stream's nor the figures'."""
    return tuple(GENERATORS[task_name](count, seed=DEVELOPMENT_SEED))


def held_out(task_name):
    """``(inputs, targets, weights)``: the `HELD_OUT` sequences the figures are measured on."""
    return GENERATORS[task_name](HELD_OUT, seed=HELD_OUT_SEED)


def longer(task_name, length):
    """``(inputs, targets, weights)``: `LONGER_SEQUENCES` sequences of exactly ``length``
    vectors (copy: beyond the training lengths)."""
    return GENERATORS[task_name](LONGER_SEQUENCES, length, length, seed=LONGER_SEED)


def picture_inputs(task_name):
    """The inputs ``[1, T, D]`` of the one sequence a run's picture shows, up to its last
    answer step."""
    x, _, w = GENERATORS[task_name](1, seed=PICTURE_SEED)
    steps = int(w[0].nonzero()[0][-1]) + 1
    return x[:, :steps]

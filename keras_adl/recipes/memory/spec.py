"""The memory family's tasks, models, options and defaults (standard library only)."""

from keras_adl.recipes._spec import Family, Task

MODELS = ("ntm", "dnc", "lstm")
# The models with a memory, whose addressing a run draws (the LSTM baseline has none).
ADDRESSING_MODELS = ("ntm", "dnc")
OPTIMIZERS = ("adam", "rmsprop")

# Adam's rate for the memory cells: the anchors' 1e-3 left some NTM seeds without the copy
# algorithm, and the NTM learned associative recall at this rate, not at 1e-3.
MEMORY_LEARNING_RATE = 3e-3
# Faster still on copy; on associative recall it kept the NTM from learning.
COPY_LEARNING_RATE = 5e-3
# The NTM paper's optimiser as pytorch-ntm sets it (`compile_memory_model(optimizer="rmsprop")`):
# RMSProp with momentum 0.9 and rho 0.95 at 1e-4, each gradient element clipped to +-10.
RMSPROP_LEARNING_RATE = 1e-4
RMSPROP_CLIPVALUE = 10.0
CLIPNORM = 50.0  # Adam's global-norm clip: the anchors'

# `memory_sequence_model`'s keyword arguments, ``optimizer`` (`compile_memory_model`'s) and
# ``learning_rate``, in named parts: the NTM paper's copy configuration (LSTM controller of 100
# units, 128 × 20 memory, one write head) for both memory cells...
MEMORY = dict(
    controller="lstm",
    controller_units=100,
    memory_size=128,
    memory_width=20,
    num_write_heads=1,
    # Collier & Beel's constant memory: with "random" or "learned" the NTM did not learn
    # associative recall.
    memory_init="constant",
)
# ... each model's defaults (the DNC reads with DeepMind's 4 heads; the LSTM baseline is the
# paper's 3 × 256 at Adam 1e-3) ...
NTM = dict(MEMORY, num_read_heads=1, optimizer="adam", learning_rate=MEMORY_LEARNING_RATE)
DNC = dict(
    MEMORY,
    num_read_heads=4,
    optimizer="adam",
    learning_rate=MEMORY_LEARNING_RATE,
    sparse_links=None,
    stop_usage_gradient=True,
)
LSTM = dict(lstm_units=256, lstm_layers=3, optimizer="adam", learning_rate=1e-3)
MODEL_DEFAULTS = {"ntm": NTM, "dnc": DNC, "lstm": LSTM}  # the HyperModel's without a task
# ... and the NTM with the paper's RMSProp, with which it learns associative recall and repeat
# copy (on batches of 2) more reliably than with Adam.
NTM_RMSPROP = dict(NTM, optimizer="rmsprop", learning_rate=RMSPROP_LEARNING_RATE)

# One preset per (task, model).
COPY_PRESETS = {
    "ntm": dict(NTM, learning_rate=COPY_LEARNING_RATE),
    # one read head: as fast as the NTM, and it copies longer sequences than with 4
    "dnc": dict(DNC, num_read_heads=1, learning_rate=COPY_LEARNING_RATE),
    "lstm": LSTM,
}
REPEAT_COPY_PRESETS = {
    "ntm": dict(NTM_RMSPROP, memory_size=32),  # a sequence needs at most 10 slots
    "dnc": DNC,
    "lstm": LSTM,
}
ASSOCIATIVE_RECALL_PRESETS = {"ntm": NTM_RMSPROP, "dnc": DNC, "lstm": LSTM}
PRIORITY_SORT_PRESETS = {"ntm": NTM, "dnc": DNC, "lstm": LSTM}

HELD_OUT = 256  # sequences the figures are measured on
# Fresh sequences of their own seed (the figures' are another) whose loss picks the best epoch:
# two evaluation batches of `DEVELOPMENT_BATCH` an epoch.
DEVELOPMENT_SEQUENCES = 128
DEVELOPMENT_BATCH = 64
LONGER_LENGTHS = (30, 50)  # copy: generalisation beyond the training lengths 1-20


def _task(name, description, presets, model_batch_sizes=()):
    return Task(
        name,
        MODELS,
        description,
        epochs=3,
        batch_size=32,
        samples=20000,
        tune_samples=5000,
        model_batch_sizes=model_batch_sizes,
        held_out=True,
        presets=presets,
    )


COPY = _task("copy", "copy a sequence of 1-20 random 8-bit vectors", COPY_PRESETS)
REPEAT_COPY = _task(
    "repeat_copy",
    "copy a sequence a given number of times",
    REPEAT_COPY_PRESETS,
    model_batch_sizes=(("ntm", 2),),  # the NTM's RMSProp learns on batches of 2
)
ASSOCIATIVE_RECALL = _task(
    "associative_recall",
    "return the item that followed the query item",
    ASSOCIATIVE_RECALL_PRESETS,
    # the DNC learns recall in fewer episodes at batch 16, the NTM's RMSProp on batches of 2
    model_batch_sizes=(("dnc", 16), ("ntm", 2)),
)
PRIORITY_SORT = _task(
    "priority_sort", "output 16 of 20 vectors sorted by their priority", PRIORITY_SORT_PRESETS
)

FAMILY = Family(
    "memory",
    "Neural Turing Machine, Differentiable Neural Computer, LSTM baseline",
    (COPY, REPEAT_COPY, ASSOCIATIVE_RECALL, PRIORITY_SORT),
)

"""The memory family's HyperModel (needs the ``tuner`` extra)."""

from keras_adl.models.memory import memory_sequence_model
from keras_adl.recipes._tuning import import_keras_tuner, tuned_learning_rate
from keras_adl.recipes.memory.build import compile_memory_model
from keras_adl.recipes.memory.spec import FAMILY, MODEL_DEFAULTS

keras_tuner = import_keras_tuner()

# The learning rates searched with each optimiser: RMSProp's sit lower, around the paper's 1e-4,
# not around Adam's.
LEARNING_RATE_RANGES = {"adam": {}, "rmsprop": dict(low=1e-5, high=1e-3)}


def _lstm_space(hp, default):
    """The LSTM baseline's sizes (it has no memory)."""
    return dict(
        lstm_units=hp.Choice("lstm_units", [64, 128, 256], default=default["lstm_units"]),
        lstm_layers=hp.Int("lstm_layers", 1, 3, default=default["lstm_layers"]),
    )


def _memory_space(hp, default):
    """A memory cell's controller and memory sizes."""
    # a sparse link keeps K entries per row: only memories of at least K slots
    least = default.get("sparse_links") or 0
    sizes = [size for size in (16, 32, 64, 128) if size >= least]
    return dict(
        controller_units=hp.Choice(
            "controller_units", [32, 64, 100], default=default["controller_units"]
        ),
        memory_size=hp.Choice("memory_size", sizes, default=default["memory_size"]),
        memory_width=hp.Choice("memory_width", [8, 16, 20], default=default["memory_width"]),
    )


# What is searched of each model, besides the learning rate.
SEARCH_SPACES = {"ntm": _memory_space, "dnc": _memory_space, "lstm": _lstm_space}


class MemorySequenceHyperModel(keras_tuner.HyperModel):
    """Searches `memory_sequence_model`: ``cell`` (``"ntm"``/``"dnc"``, or the fixed one),
    ``controller_units``, ``memory_size``, ``memory_width``, ``learning_rate`` (for the
    ``"lstm"`` baseline: ``lstm_units``, ``lstm_layers``, ``learning_rate``); compiled with
    `compile_memory_model` and the preset's optimiser. The defaults are the task's preset
    (`spec`: its optimiser, rate and memory size), or the family's `spec.MODEL_DEFAULTS`
    without a task; the settings it does not search are the preset's as well (the DNC's one
    read head on copy, ``sparse_links``, ``stop_usage_gradient``, ``memory_init``).

    Tune on ``val_bit_errors`` (objective ``keras_tuner.Objective("val_bit_errors",
    "min")``), passing the task's weights as sample weights.

    Args:
        input_dim, output_dim: the task's sizes (`keras_adl.data.algorithmic.task_dims`).
        cell: a fixed cell, or ``None`` to search over ``"ntm"`` and ``"dnc"``.
        jit_compile: compile the train step with XLA.
        task: the name of the task whose presets are the defaults (``keras-adl tune TASK``
            passes it), or ``None``.
    """

    def __init__(
        self,
        input_dim,
        output_dim,
        cell=None,
        jit_compile=True,
        name="memory_sequence",
        tunable=True,
        task=None,
    ):
        super().__init__(name=name, tunable=tunable)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.cell = cell
        self.jit_compile = jit_compile
        self.task = task

    def default(self, cell):
        """The settings of ``cell`` the search starts from: the task's preset, or the
        family's defaults."""
        if self.task is None:
            return dict(MODEL_DEFAULTS[cell])
        return FAMILY.task(self.task).preset(cell)

    def build(self, hp):
        cell = self.cell or hp.Choice("cell", ["ntm", "dnc"], default="ntm")
        settings = self.default(cell)
        optimizer = settings.pop("optimizer")
        learning_rate = tuned_learning_rate(
            hp, settings.pop("learning_rate"), **LEARNING_RATE_RANGES[optimizer]
        )
        # the preset's other settings stay as they are (the DNC's one read head on copy, its
        # link and usage options, the memory initialisation)
        settings.update(SEARCH_SPACES[cell](hp, settings))
        model = memory_sequence_model(self.input_dim, self.output_dim, cell=cell, **settings)
        return compile_memory_model(
            model, learning_rate, jit_compile=self.jit_compile, optimizer=optimizer
        )

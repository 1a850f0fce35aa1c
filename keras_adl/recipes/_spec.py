"""What a family's ``spec.py`` is made of: its tasks, their options and defaults, as plain data.

Standard library only: ``keras-adl list`` and ``--help`` read every family's spec before (and
without) TensorFlow.
"""

import dataclasses
import os

from keras_adl.training.rundir import RecipeError


@dataclasses.dataclass(frozen=True)
class Option:
    """A task's own command-line option, e.g. ``--max-length`` of the ``pairs`` task.

    Attributes:
        flag: the option as typed, ``"--max-length"``; its value reaches the recipe as
            ``options["max_length"]``.
        help: one line of help.
        type: ``int`` (checked positive), ``float`` (checked in (0, 1)), ``str``, ``"file"``
            (an existing file), ``"dir"`` (an existing directory) or ``"path"`` (an existing
            file or directory).
        default: the value when the option is not given.
        required: the task cannot run without it.
        choices: the values allowed, if only some are.
        schemes: prefixes (``"gettext"``) of values that name data by scheme instead of a
            path (``gettext:fr``); such values are passed on unchecked, for the recipe's
            loader to check.
    """

    flag: str
    help: str
    type: object = str
    default: object = None
    required: bool = False
    choices: tuple = None
    schemes: tuple = ()

    @property
    def dest(self):
        return self.flag.lstrip("-").replace("-", "_")

    def check(self, value, task_name):
        """``value``, checked: a positive integer, an existing file or directory.

        Raises:
            RecipeError: naming the option, what it expects and what it received.
        """
        if value is None:
            return value
        if self.choices is not None and value not in self.choices:
            raise RecipeError(
                f"{self.flag} must be one of {', '.join(map(str, self.choices))}; "
                f"received {value!r}"
            )
        if any(str(value).startswith(scheme + ":") for scheme in self.schemes):
            return value
        if self.type is int and value <= 0:
            raise RecipeError(f"{self.flag} must be a positive integer; received {value}")
        if self.type is float and not 0 < value < 1:
            raise RecipeError(f"{self.flag} must be a fraction in (0, 1); received {value}")
        if self.type in ("file", "dir", "path"):
            if not os.path.exists(value):
                raise RecipeError(f"{self.flag} {value!r} not found")
            if self.type == "file" and not os.path.isfile(value):
                raise RecipeError(
                    f"{self.flag} {value!r} is a directory; task {task_name!r} reads a file"
                )
            if self.type == "dir" and not os.path.isdir(value):
                raise RecipeError(
                    f"{self.flag} {value!r} is a file; task {task_name!r} reads a directory"
                )
        return value


# The ``--data`` options several families share: a plain-text corpus (`load_corpus`'s forms)
# and a fortunes directory.
CORPUS_OPTION = Option(
    "--data",
    "a UTF-8 text file (plain or .gz), a directory of .txt and .gz files or a glob (a file "
    "with blank lines is read as paragraphs, one without as one document per line), "
    "gcide.dict.dz or a WordNet directory (default: /usr/share/dictd/gcide.dict.dz)",
    "path",
)
FORTUNES_OPTION = Option("--data", "a fortunes directory (default: the installed one)", "dir")


@dataclasses.dataclass(frozen=True)
class Task:
    """A task of a family, with its models and the defaults of ``keras-adl train`` / ``tune``.

    Attributes:
        name: the task's name on the command line.
        models: model names; the first is the default.
        description: one line, shown by ``keras-adl list`` and ``--help``.
        epochs, batch_size, samples: defaults of ``train`` (``samples``: training examples;
            the memory tasks draw that many fresh sequences every epoch).
        model_batch_sizes: ``(model, batch_size)`` pairs where a model's default batch size
            differs from ``batch_size`` (`batch_size_of`).
        tune_epochs, tune_samples: defaults of ``tune``.
        options: the task's own `Option`s.
        tunable: whether ``keras-adl tune`` runs on it.
        held_out: whether its training watches a held-out loss every epoch (``--patience``
            and best-epoch keeping).
        budget_decay: whether ``--minutes`` also decays a constant learning rate linearly to
            zero over the budget (`keras_adl.training.budget.TimeBudget`); off where a decay
            hurts (the RAM's policy needs its constant rate to the end).
        checkpoint_every: the steps between mid-epoch checkpoints when none is asked for
            (``None``: 200); a task of very short steps checkpoints less often.
        presets: ``{model: settings}``: the one preset of each (task, model), the keyword
            arguments of the family's builder plus ``learning_rate`` (`preset`), read by the
            command line, the examples, the benchmarks and the HyperModels' defaults.
    """

    name: str
    models: tuple
    description: str
    epochs: int = 3
    batch_size: int = 64
    samples: int = 20000
    tune_epochs: int = 1
    tune_samples: int = 5000
    options: tuple = ()
    tunable: bool = True
    model_batch_sizes: tuple = ()
    held_out: bool = False
    budget_decay: bool = False
    checkpoint_every: int = None
    presets: dict = dataclasses.field(default_factory=dict, compare=False, hash=False)

    def batch_size_of(self, model):
        """The default batch size of ``model`` on this task."""
        return dict(self.model_batch_sizes).get(model, self.batch_size)

    def preset(self, model):
        """A copy of ``model``'s preset on this task (`presets`): a dict the caller may change."""
        return dict(self.presets[model])

    def defaults(self):
        """The default settings as a dict (shown by ``keras-adl list``)."""
        values = {"epochs": self.epochs, "batch_size": self.batch_size, "samples": self.samples}
        values.update({o.dest: o.default for o in self.options if o.default is not None})
        return values


@dataclasses.dataclass(frozen=True)
class Family:
    """A model family as ``keras-adl list`` shows it.

    Attributes:
        name: the family's name, also its folder under `keras_adl.recipes`.
        description: one line.
        tasks: its `Task` specs, in the order ``list`` shows them.
        evaluate_tasks: the task names whose runs and exports ``keras-adl evaluate`` scores on
            the user's data.
    """

    name: str
    description: str
    tasks: tuple
    evaluate_tasks: tuple = ()

    def task(self, name):
        """The `Task` named ``name``; ``KeyError`` if the family has none."""
        for task in self.tasks:
            if task.name == name:
                return task
        raise KeyError(name)

"""The protocol every task of every family implements: `TaskRecipe`.

A family's ``tasks.py`` holds one `TaskRecipe` per task (a task kind shared by several tasks,
e.g. the RAM's classification tasks, is one class given each task's `Task` spec) in a dict
``RECIPES`` by task name; `keras_adl.recipes.recipe_for` finds it. The command line, the
examples and the benchmarks ask the task, they do not branch on its name.
"""

import re
import sys

from keras_adl.training.rundir import RUN_FILE, RecipeError

PROG = "keras-adl"


def raw_bytes(inputs):
    """The bytes of each ``predict`` input as the user gave them: the command line hands
    Python undecodable bytes as lone surrogates (``surrogateescape``), which TensorFlow refuses;
    encoded back, they reach the export, which replaces them (and flags ``invalid_utf8``)."""
    return [s.encode("utf-8", "surrogateescape") if isinstance(s, str) else s for s in inputs]


def input_label(text):
    """``text`` as ``predict`` prints an input: on one line (tabs and line breaks as spaces),
    cut at 40 characters, invalid UTF-8 shown as U+FFFD."""
    if isinstance(text, str):
        text = text.encode("utf-8", "surrogateescape")
    text = re.sub(r"[\t\r\n]+", " ", text.decode("utf-8", "replace"))
    return text if len(text) <= 40 else text[:37] + "..."


class Answers:
    """The per-input account of one ``predict``: each input is answered on its own line, a
    problem with one input is a line naming its position (the others are still answered), and
    `finish` turns the failed ones into the exit status.

    Args:
        inputs: the inputs, in order (strings or bytes).
        labels: how each input is shown; `input_label` of each by default.
    """

    def __init__(self, inputs, labels=None):
        self.inputs = list(inputs)
        self.labels = list(labels) if labels is not None else [input_label(s) for s in inputs]
        self.failed = []

    def answer(self, number, text):
        """Prints input ``number`` (from 1) and its answer ``text``."""
        print(f"{self.labels[number - 1]}\t{text}")

    def fail(self, number, why):
        """Input ``number`` gets no answer: its line says why (exit status 1 at the end)."""
        print(f"{self.labels[number - 1]}\t({why})")
        self.failed.append((number, why))

    def warn(self, number, why):
        """Input ``number`` is answered with a caveat, said on standard error."""
        print(f"{PROG}: warning: input {number}: {why}", file=sys.stderr)

    def flags(self, number, outputs, index, too_long=None):
        """The warnings an export's flags call for: invalid UTF-8 replaced, input cut
        (``too_long``: what to say then, by default that it was answered from its
        beginning)."""
        if "invalid_utf8" in outputs and outputs["invalid_utf8"][index]:
            self.warn(number, "invalid UTF-8, read with U+FFFD in place of the bad bytes")
        if "truncated" in outputs and outputs["truncated"][index]:
            self.warn(number, too_long or "longer than the model reads; answered from its start")

    def finish(self):
        """Raises `RecipeError` (exit status 1) naming the inputs that got no answer."""
        if self.failed:
            numbers = ", ".join(str(n) for n, _ in self.failed[:10])
            more = "" if len(self.failed) <= 10 else ", ..."
            raise RecipeError(
                f"{len(self.failed)} of {len(self.inputs)} input(s) got no answer (input "
                f"{numbers}{more}: {self.failed[0][1]})"
            )


class TaskRecipe:
    """How keras-adl trains, tunes, exports, serves and scores one task.

    ``train`` is composed of four hooks a task implements (`data`, `build`, `fit`,
    `evaluate`); a task whose training has several phases (pretraining, then fine-tuning)
    overrides `train` itself.

    Args:
        spec: the task's `keras_adl.recipes._spec.Task` (name, models, defaults, options).
    """

    # Whether the task's exports generate text (``keras-adl predict``'s sampling settings).
    generates = False

    def __init__(self, spec):
        self.spec = spec

    @property
    def name(self):
        return self.spec.name

    def __repr__(self):
        return f"{type(self).__name__}({self.spec.name!r})"

    # -- train: data → build → fit → evaluate --------------------------------------------------

    def train(self, run):
        """Loads the data, builds, fits, evaluates; returns ``(model, history, metrics)``.
        Pictures go to ``run.out``, facts about the data to ``run.record``."""
        data = self.data(run)
        model = self.build(run, data)
        history = self.fit(run, model, data)
        return model, history, self.evaluate(run, model, data)

    def data(self, run):
        """The run's data: training, development and test splits and what the model needs to
        know of them (a vocabulary, class names), in the family's own container."""
        raise NotImplementedError

    def build(self, run, data):
        """The compiled model for ``run.model``, built in the run's strategy scope
        (``run.build``)."""
        raise NotImplementedError

    def fit(self, run, model, data):
        """`keras_adl.training.fit.fit` on the training split (the development split, if
        any, as ``validation_data``); returns the ``History``."""
        raise NotImplementedError

    def evaluate(self, run, model, data):
        """The run's figures (a dict of numbers) on the test split, and its pictures."""
        raise NotImplementedError

    # -- the other verbs ---------------------------------------------------------------------

    def tune(self, model_name, trials, epochs, samples, out, options):
        """Random search with the task's HyperModel; returns the best hyperparameters."""
        raise RecipeError(f"task {self.name!r} has no hyperparameter search")

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """Writes a SavedModel with the task's serving function to ``export_dir``."""
        raise NotImplementedError

    def predict(self, export_dir, inputs, info):
        """Runs an exported model on the command line's raw inputs; prints one line each."""
        raise NotImplementedError

    def evaluate_file(self, path, info, is_run, data):
        """``keras-adl evaluate``: the figures of the run (``is_run``) or export at ``path`` on
        the user's ``data``, for the tasks a family lists in ``evaluate_tasks``."""
        raise RecipeError(
            f"evaluate scores models on your own data; the figures of {info.get('task')!r} "
            f"are in its run's {RUN_FILE}"
        )

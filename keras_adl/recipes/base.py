"""What every model family's recipe shares: the task description, the run-directory layout, and
the fit → checkpoint → save, tune → best → print and export idioms, the step log of the training
pictures and the ``--data`` options several families share, written once.

A recipe is one module per family (`keras_adl.recipes.sequences`, `.memory`, `.vision`,
`.documents`, `.embeddings`, `.pretraining`, `.contextual`) holding a `Recipe` subclass
instance named ``RECIPE``. It owns everything a user
of that family meets: task and model names with their defaults (`Task`), data, the builders'
settings and compile recipe, the evaluation figures and pictures, the serving function, the
HyperModel and how ``predict`` prints. The command line (`keras_adl.cli`), the examples and the
benchmarks read their settings from it.

This module imports only the standard library (and `keras_adl._extras`) at import time, so
that ``keras-adl --help`` and ``keras-adl list`` answer before TensorFlow loads; every method
imports what it needs.
"""

import json
import os
import shutil

from keras_adl.extras import require
from keras_adl.recipes._spec import CORPUS_OPTION, FORTUNES_OPTION, Option, Task  # noqa: F401
from keras_adl.training.rundir import (  # noqa: F401
    BACKUP_DIR,
    CHECKPOINT_EVERY,
    MODEL_FILE,
    RUN_FILE,
    TASK_FILE,
    RecipeError,
    check_run_dir,
    read_run_or_export,
    write_json,
)

# A development split, carved from a task's training examples (or drawn with its own seed on a
# generated task) and disjoint from the test set its figures are reported on: its loss picks the
# best epoch and ends a run by --patience. The seed is fixed, so a resumed run sees the same one.
DEVELOPMENT_FRACTION = 0.1
DEVELOPMENT_SEED = 7
# Fewer training examples than this and no development split is set aside: two or three held-out
# examples give a loss too noisy to choose an epoch by, and training needs them more.
MIN_FOR_DEVELOPMENT = 20


def development_rows(count, most, seed=DEVELOPMENT_SEED):
    """``(train_rows, development_rows)`` of ``count`` training examples: a seeded
    `DEVELOPMENT_FRACTION` of them (at least 2, at most ``most``) set aside, both in their
    original order; ``None`` below `MIN_FOR_DEVELOPMENT` examples.

    >>> train, development = development_rows(30, most=5)
    >>> len(train), len(development), sorted([*train, *development]) == list(range(30))
    (27, 3, True)
    """
    import numpy as np

    if count < MIN_FOR_DEVELOPMENT:
        return None
    size = min(int(most), max(2, int(round(count * DEVELOPMENT_FRACTION))))
    order = np.random.default_rng(seed).permutation(count)
    return np.sort(order[size:]), np.sort(order[:size])


def without_development(run, reason):
    """A run of a held-out task whose data is too small for a development split: ``--patience``
    is refused in one line (as on a task without a held-out split), otherwise one line says
    that the last epoch's weights are kept. ``reason`` completes "no development split: …"."""
    if run.patience is not None:
        raise RecipeError(
            f"--patience watches a held-out loss, and {run.task!r} has no development split "
            f"here: {reason}; --minutes bounds its training time"
        )
    print(f"{run.task}: no development split: {reason}; the last epoch's weights are kept")
    run.record["development_examples"] = 0


def compile_for_training(model, loss, learning_rate, jit_compile=True):
    """Compiles ``model`` with the library's recipe: Adam with a global-norm gradient clip of 5
    and an accuracy metric (the sequence, captioning and document families).

    Args:
        model: a ``keras.Model`` from one of the builders.
        loss: a Keras loss.
        learning_rate: Adam's learning rate (float or schedule).
        jit_compile: compile the train step with XLA (leave off under ``MirroredStrategy`` on
            logical CPUs, where XLA fails on this stack).

    Returns:
        ``model``, compiled.
    """
    import keras

    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate, global_clipnorm=5.0),
        loss=loss,
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    return model


class Recipe:
    """A model family: its tasks and everything ``keras-adl`` does with them.

    Subclasses set ``family``, ``description`` and ``tasks`` and implement `train`, `tune`,
    `export` and `predict`; `build_model` is what the command line, the example and the
    benchmark of the family all call, so that they train the same model.
    """

    family = ""
    description = ""
    tasks = ()

    def task(self, name):
        for task in self.tasks:
            if task.name == name:
                return task
        raise KeyError(name)

    # -- hooks a family implements -------------------------------------------------------------

    def train(self, run):
        """Loads the data, builds, fits (`fit`), evaluates; returns ``(model, history,
        metrics)``. Pictures go to ``run.out``."""
        raise NotImplementedError

    def tune(self, task, model_name, trials, epochs, samples, out, options):
        """Random search with the family's HyperModel; returns the best hyperparameters."""
        raise NotImplementedError

    def export(self, run_dir, run_record, model, export_dir, beam_width=1):
        """Writes a SavedModel with the family's serving function to ``export_dir``."""
        raise NotImplementedError

    def predict(self, export_dir, inputs, task_info):
        """Runs an exported model on the command line's raw inputs; prints one line each."""
        raise NotImplementedError

    # The tasks whose runs and exports ``keras-adl evaluate`` scores on the user's data.
    evaluate_tasks = ()

    def evaluate_file(self, path, info, is_run, data):
        """``keras-adl evaluate``: the figures of the run (``is_run``) or export at ``path``,
        described by ``info`` (`read_run_or_export`), on the user's ``data``; for the tasks
        in `evaluate_tasks` (the others' figures are in their ``run.json``)."""
        raise RecipeError(
            f"evaluate scores models on your own data; the figures of {info.get('task')!r} "
            f"are in its run's {RUN_FILE}"
        )

    # -- shared idioms -------------------------------------------------------------------------

    @property
    def name(self):
        return self.family

    def learning_rate_scale(self, run):
        """How many times the rate ``--learning-rate`` gives the optimizer's rate is."""
        return 1.0

    def fit(self, run, model, x, y=None, steps_per_epoch=None, **fit_kwargs):
        """`keras_adl.training.fit.fit`."""
        from keras_adl.training.fit import fit

        scale = self.learning_rate_scale(run)
        return fit(run, model, x, y, steps_per_epoch, learning_rate_scale=scale, **fit_kwargs)

    @staticmethod
    def search(hypermodel, objective, trials, out, project_name, *data, **search_kwargs):
        """Random search over ``hypermodel``; prints and returns the best hyperparameters."""
        keras_tuner = import_keras_tuner()

        if isinstance(objective, tuple):
            objective = keras_tuner.Objective(*objective)
        tuner = keras_tuner.RandomSearch(
            hypermodel,
            objective=objective,
            max_trials=trials,
            directory=out,
            project_name=project_name,
        )
        tuner.search(*data, verbose=1, **search_kwargs)
        best = tuner.get_best_hyperparameters(1)[0].values
        print(json.dumps({"best_hyperparameters": best}))
        return best

    @staticmethod
    def write_task_file(export_dir, **info):
        """Writes `TASK_FILE` beside an exported SavedModel (``predict`` reads it)."""
        with open(os.path.join(export_dir, TASK_FILE), "w") as f:
            json.dump(info, f)

    @staticmethod
    def copy_file(run_dir, name, export_dir):
        """Copies a run file (a tokenizer, say) into the export directory."""
        shutil.copy(os.path.join(run_dir, name), os.path.join(export_dir, name))


def save_model(model, path):
    """`keras_adl.training.run.save_model`."""
    from keras_adl.training.run import save_model

    return save_model(model, path)


def override(settings, overrides):
    """``settings`` updated with ``overrides``, which may only name existing settings."""
    unknown = sorted(set(overrides) - set(settings))
    if unknown:
        raise ValueError(
            f"unknown setting(s) {unknown}; this model's settings are {sorted(settings)}"
        )
    settings.update(overrides)
    return settings


def cosine_decay(learning_rate, total_steps, final_fraction=0.01):
    """``learning_rate`` decaying along a cosine to ``final_fraction`` of itself over
    ``total_steps`` optimizer steps (Keras' ``CosineDecay``, serializable); constant after."""
    import keras

    return keras.optimizers.schedules.CosineDecay(
        learning_rate, max(int(total_steps), 1), alpha=final_fraction
    )


def tuned_learning_rate(hp, default, low=1e-4, high=3e-2):
    """The ``learning_rate`` hyperparameter every HyperModel searches (log scale, 1e-4 to
    3e-2 unless ``low`` and ``high`` say otherwise)."""
    return hp.Float("learning_rate", low, high, sampling="log", default=default)


def import_keras_tuner():
    """``keras_tuner``, or `MissingExtra` naming ``pip install 'keras-adl[tuner]'``."""
    return require("keras_tuner", "tuner", "hyperparameter search (keras-adl tune)")


def lazy_hypermodels(namespace, define, names):
    """PEP 562 ``__getattr__`` and ``__dir__`` for a recipe module whose HyperModels subclass
    ``keras_tuner.HyperModel``: ``define()`` (which imports keras-tuner) runs on the first
    access to one of ``names``, so importing the recipe stays light.

    Args:
        namespace: the module's ``globals()``; the classes are stored there once defined.
        define: returns a mapping holding each of ``names``.
        names: the HyperModel class names.
    """
    module = namespace["__name__"]

    def __getattr__(name):
        if name not in names:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        classes = define()
        for each in names:
            cls = classes[each]
            cls.__module__, cls.__qualname__ = module, each
            namespace[each] = cls
        return namespace[name]

    def __dir__():
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__


def tf_error_message(error):
    """The useful part of a TensorFlow runtime error: an assertion's text, else its first
    line."""
    import re

    text = str(error)
    found = re.search(r"assertion failed: \[([^\]]+)\]", text) or re.search(
        r"StringToNumberOp could not correctly convert string: ([^\n]+)", text
    )
    if found:
        return found.group(0) if "StringToNumber" in found.group(0) else found.group(1)
    return text.strip().splitlines()[0]


def step_log(run, keys):
    """`keras_adl.recipes._pictures.step_log`."""
    from keras_adl.recipes._pictures import step_log

    return step_log(run, keys)


def draw(plot, *args, **kwargs):
    """`keras_adl.recipes._pictures.draw`."""
    from keras_adl.recipes._pictures import draw

    return draw(plot, *args, **kwargs)


def plot_step_log(log, out, title):
    """`keras_adl.recipes._pictures.plot_step_log`."""
    from keras_adl.recipes._pictures import plot_step_log

    return plot_step_log(log, out, title)

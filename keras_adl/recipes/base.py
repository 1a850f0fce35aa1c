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

import dataclasses
import json
import os
import shutil

from keras_adl.extras import MissingExtra, require

# The run-directory layout, written by `train` and read by `export`.
RUN_FILE = "run.json"
MODEL_FILE = "model.keras"
BACKUP_DIR = "backup"
# Written beside an exported SavedModel: which task and model it serves (read by `predict`).
TASK_FILE = "keras_adl_task.json"
# Steps between mid-epoch checkpoints of `train` (``--checkpoint-every``).
CHECKPOINT_EVERY = 200


class RecipeError(ValueError):
    """A problem with the user's request, reported as one line (no traceback)."""


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
    "a UTF-8 text file or directory of .txt files (a file with blank lines is read as "
    "paragraphs, one without as one document per line), gcide.dict.dz or a WordNet directory "
    "(default: /usr/share/dictd/gcide.dict.dz)",
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

    def batch_size_of(self, model):
        """The default batch size of ``model`` on this task."""
        return dict(self.model_batch_sizes).get(model, self.batch_size)

    def defaults(self):
        """The default settings as a dict (shown by ``keras-adl list``)."""
        values = {"epochs": self.epochs, "batch_size": self.batch_size, "samples": self.samples}
        values.update({o.dest: o.default for o in self.options if o.default is not None})
        return values


@dataclasses.dataclass
class Run:
    """One ``train`` request, as the recipes receive it.

    Attributes:
        task, model: names (validated).
        epochs, batch_size, samples: as given or the task's defaults.
        out: the run directory.
        options: the task's own option values by ``Option.dest``.
        strategy: a ``tf.distribute`` strategy name or instance.
        callbacks: extra Keras callbacks.
        checkpoint_every: steps between mid-epoch checkpoints (``None``: at epoch ends only).
        record: what ``run.json`` will hold; recipes add their settings and data facts to it.
        jit_compile: compile the train step with XLA (turned off under a distributed
            strategy).
        keep_checkpoints: complete checkpoints kept.
        seed: the seed of the data order (arrays shuffled by `Recipe.fit`).
        run_dir: the run directory ``--out`` when this process writes elsewhere (a non-chief
            worker writes to a temporary ``out`` and reads the chief's checkpoints here).
        learning_rate: the optimizer's peak learning rate instead of the recipe's (a schedule
            keeps its shape; `Recipe.set_learning_rate`); the one setting a resume may change.
        patience: stop when the held-out loss has not improved for this many epochs (the
            tasks that pass ``validation_data`` to `Recipe.fit`, whose best epoch is kept).
        minutes: stop once this much training time is spent (across resumes).
    """

    task: str
    model: str
    epochs: int
    batch_size: int
    samples: int
    out: str
    options: dict = dataclasses.field(default_factory=dict)
    strategy: object = "auto"
    callbacks: tuple = ()
    checkpoint_every: object = CHECKPOINT_EVERY
    record: dict = dataclasses.field(default_factory=dict)
    jit_compile: bool = True
    keep_checkpoints: int = 2
    seed: int = 0
    run_dir: str = None
    learning_rate: float = None
    patience: int = None
    minutes: float = None
    _strategy: object = None

    def get_strategy(self):
        """The resolved ``tf.distribute`` strategy (XLA is turned off under a distributed one:
        it fails under ``MirroredStrategy`` on logical CPUs). Raises `RecipeError` if
        ``batch_size`` (each worker's) is smaller than the strategy's replicas on one worker."""
        if self._strategy is None:
            from keras_adl.training.distribute import get_strategy, worker_info

            strategy = get_strategy(self.strategy)
            # ``batch_size`` is each worker's here (`keras_adl.recipes.train` multiplies it
            # by the workers afterwards); every replica needs at least one example per step.
            workers = worker_info(strategy)[1]
            local_replicas = strategy.num_replicas_in_sync // workers
            if self.batch_size < local_replicas:
                raise RecipeError(
                    f"--batch-size {self.batch_size} is smaller than the {local_replicas} "
                    f"replicas of the strategy on this machine: every replica needs at least "
                    f"one example per step; pass a --batch-size of at least {local_replicas}, "
                    f"or --strategy default"
                )
            self._strategy = strategy
            self.jit_compile = (
                self.jit_compile
                and self._strategy.num_replicas_in_sync == 1
                and self.strategy != "multi_worker"
            )
        return self._strategy

    @property
    def is_chief(self):
        """Whether this process writes the run directory (always, on one machine)."""
        from keras_adl.training.distribute import worker_info

        return worker_info(self.get_strategy())[2]

    def chief_decides(self, flag):
        """``flag`` as the chief sees it, on every worker (a collective under a multi-worker
        strategy; ``flag`` itself otherwise)."""
        from keras_adl.training.distribute import gather_from_workers, is_multi_worker

        strategy = self.get_strategy()
        if not is_multi_worker(strategy):
            return bool(flag)
        return bool(gather_from_workers(strategy, int(bool(flag)))[0])

    def chief_value(self, value):
        """The integer ``value`` as the chief holds it, on every worker (a collective under a
        multi-worker strategy; ``value`` itself otherwise)."""
        from keras_adl.training.distribute import gather_from_workers, is_multi_worker

        strategy = self.get_strategy()
        if not is_multi_worker(strategy):
            return int(value)
        return int(gather_from_workers(strategy, int(value))[0])

    def check_workers_agree(self, what, value):
        """Raises `RecipeError` unless every worker holds the same integer ``value`` (a
        collective under a multi-worker strategy; nothing to check otherwise)."""
        from keras_adl.training.distribute import gather_from_workers, is_multi_worker

        strategy = self.get_strategy()
        if not is_multi_worker(strategy):
            return
        values = gather_from_workers(strategy, value)
        if len(set(values)) > 1:
            raise RecipeError(
                f"the workers disagree on {what} (one value per replica: {values}; this "
                f"worker read {os.path.join(self.run_dir or self.out, BACKUP_DIR)!r}): --out "
                f"must be one directory on storage that every worker reads, given to every "
                f"worker as the same path"
            )

    def build(self, build_fn, *args, **kwargs):
        """Calls ``build_fn(*args, jit_compile=…, **kwargs)`` inside the strategy's scope
        (variables and optimizer there), with XLA off under a distributed strategy."""
        from keras_adl.training.distribute import build_in_scope

        strategy = self.get_strategy()
        kwargs.setdefault("jit_compile", self.jit_compile)
        return build_in_scope(strategy, build_fn, *args, **kwargs)

    def path(self, name):
        return os.path.join(self.out, name)


def _given(value):
    """A run setting as a resume compares it: of a dict of options, those given (an option
    left unset matches a run recorded before the option existed)."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None}
    return value


def check_run_dir(out, task, model, settings, overwrite=False):
    """Refuses a run directory that holds another run, a finished run or other files (one
    line, saying how to start fresh); with ``overwrite`` deletes a previous run first (only a
    directory holding a keras-adl run, or an empty one).

    Args:
        out: the run directory.
        task, model: the names of the run to start or resume.
        settings: what else must match for a resume (epochs, batch size, samples, the task's
            options), as `train` writes them into ``run.json``.
        overwrite: delete a previous run in ``out`` first.

    Returns:
        Whether ``out`` holds an interrupted run of the same task, model and settings, whose
        checkpoints `Recipe.fit` will resume from.

    Raises:
        RecipeError: ``out`` cannot be used.
    """
    run_file = os.path.join(out, RUN_FILE)
    if os.path.exists(out) and not os.path.isdir(out):
        raise RecipeError(f"--out {out!r} is a file; give a directory")
    if os.path.isdir(out) and os.listdir(out) and not os.path.isfile(run_file):
        raise RecipeError(
            f"--out {out!r} is not empty and holds no keras-adl run; choose another directory"
        )
    if overwrite and os.path.isdir(out):
        shutil.rmtree(out)
    if not os.path.isfile(run_file):
        return False
    with open(run_file) as f:
        previous = json.load(f)
    fresh = "pass --overwrite to start fresh or choose another --out"
    if (previous.get("task"), previous.get("model")) != (task, model):
        raise RecipeError(
            f"--out {out!r} holds a run of task {previous.get('task')!r} with model "
            f"{previous.get('model')!r}; {fresh}"
        )
    changed = sorted(k for k, v in settings.items() if _given(previous.get(k)) != _given(v))
    if changed:
        before = ", ".join(f"{k}={previous.get(k)!r}" for k in changed)
        raise RecipeError(f"--out {out!r} holds a run of {task!r} with {before}; {fresh}")
    if previous.get("status") != "training":
        raise RecipeError(f"--out {out!r} holds a finished run of {task!r}; {fresh}")
    return os.path.isdir(os.path.join(out, BACKUP_DIR))


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

    def fit(self, run, model, x, y=None, steps_per_epoch=None, **fit_kwargs):
        """``model.fit`` on a resumable data stream, with an atomic checkpoint every
        ``run.checkpoint_every`` steps and at every epoch's end, then ``model.keras`` saved.

        The data (arrays with ``batch_size`` and ``shuffle``, a ``tf.data.Dataset`` or a
        ``PyDataset``) becomes one endless stream of global batches
        (`keras_adl.training.data.batch_stream`). An interrupted run resumes from its last
        checkpoint, mid-epoch too: same epoch, step, weights, optimizer state and position in
        the data stream (the interrupted epoch runs only its remaining steps, on the batches an
        uninterrupted run would have seen). Under ``MultiWorkerMirroredStrategy`` every worker
        runs this, only the chief writes checkpoints and ``model.keras``, and the progress bar
        shows on the chief only. Returns the Keras ``History`` of the last ``fit`` call.

        An epoch runs exactly its steps, whatever the model's ``steps_per_execution``
        (`steps_per_call`). The run stops at the first non-finite loss (`StopOnNonFinite`:
        nothing is saved after it) with a `RecipeError` naming ``--learning-rate``; the run's
        ``learning_rate`` replaces the optimizer's peak rate after the restore. With
        ``validation_data`` the held-out loss is watched every epoch (`BestEpoch`): the best
        epoch's weights become the model, and ``run.patience`` stops the run early;
        ``run.minutes`` bounds the training time (`TimeBudget`), and on a task with
        ``budget_decay`` a constant learning rate then decays linearly to zero over it. ``run.json`` records why training ended
        (``ended_by``) and the best epoch.

        Raises:
            RecipeError: the workers of a multi-worker run see different checkpoints, or the
                run diverged.
        """
        from keras_adl.training.checkpoint import StepCheckpoint
        from keras_adl.training.data import batch_stream, split_stream

        steps, stream = batch_stream(
            x,
            y,
            batch_size=fit_kwargs.pop("batch_size", None),
            steps_per_epoch=steps_per_epoch,
            shuffle=fit_kwargs.pop("shuffle", False),
            seed=run.seed,
        )
        fit_kwargs["shuffle"] = False  # the stream is shuffled already
        directory = os.path.join(run.run_dir or run.out, BACKUP_DIR)
        checkpoint = StepCheckpoint(
            directory, run.checkpoint_every, keep=run.keep_checkpoints, write=run.is_chief
        )
        # Before any collective that only a resuming worker runs (restoring builds the
        # optimizer): a worker that cannot read the chief's checkpoints fails in one line.
        run.check_workers_agree("the checkpoint step to resume from", checkpoint.resume_point()[2])
        epoch, step, global_step = checkpoint.restore(model)
        self.set_learning_rate(run, model)  # after the restore, which loads the saved rate
        if not run.is_chief:
            fit_kwargs["verbose"] = 0
        decay = any(t.budget_decay for t in self.tasks if t.name == run.task)
        stop, best, budget, callbacks = _fit_callbacks(
            run, model, checkpoint, directory, global_step, decay
        )
        history = None
        data = stream(global_step)
        per_call = getattr(model, "steps_per_execution", 1) or 1
        if step and epoch < run.epochs:
            print(f"resuming epoch {epoch + 1} at step {step + 1} of {steps}")
            part = split_stream(data)
            data = part(None)
            _set_steps_per_call(model, steps_per_call(steps - step, per_call))
            history = model.fit(
                part(steps - step),
                epochs=epoch + 1,
                initial_epoch=epoch,
                steps_per_epoch=steps - step,
                callbacks=callbacks,
                **fit_kwargs,
            )
            epoch, global_step = epoch + 1, global_step + steps - step
        elif epoch:
            print(f"resuming after epoch {epoch}")
        if epoch < run.epochs and not (stop.diverged or getattr(model, "stop_training", False)):
            checkpoint.start(epoch, 0, global_step)
            _set_steps_per_call(model, steps_per_call(steps, per_call))
            history = model.fit(
                data,
                epochs=run.epochs,
                initial_epoch=epoch,
                steps_per_epoch=steps,
                callbacks=callbacks,
                **fit_kwargs,
            )
        if stop.diverged:
            raise RecipeError(self.divergence_message(run, model, checkpoint, *stop.diverged))
        self.keep_best(run, model, best, budget)
        save_model(model, run.path(MODEL_FILE))
        checkpoint.remove()
        return history

    @staticmethod
    def keep_best(run, model, best, budget):
        """Makes the best epoch's weights the run's model (when the held-out loss was
        watched) and records in ``run.json`` why training ended and what was kept."""
        if best.best_epoch is not None:
            best.restore_best(model)
            run.record.update(
                best_epoch=best.best_epoch,
                best_val_loss=best.checkpoint.state["best_value"],
            )
        ended = "epochs"
        if budget is not None and budget.stopped:
            ended = "minutes"
        elif best.stopped:
            ended = "patience"
        run.record.update(ended_by=ended, training_seconds=round(best.checkpoint.elapsed(), 1))
        if ended != "epochs":
            print(
                f"training ended by --{ended}"
                + (
                    f"; keeping epoch {best.best_epoch} (the best held-out loss, "
                    f"{best.checkpoint.state['best_value']:.4g})"
                    if best.best_epoch is not None
                    else ""
                )
            )

    def set_learning_rate(self, run, model):
        """Gives ``model``'s optimizer the run's ``--learning-rate`` as its peak rate (a
        schedule keeps its shape); the rate used is recorded in ``run.json``."""
        from keras_adl.training.divergence import peak_learning_rate, set_peak_learning_rate

        if run.learning_rate is not None:
            set_peak_learning_rate(model.optimizer, run.learning_rate)
        run.record["learning_rate"] = peak_learning_rate(model.optimizer)

    @staticmethod
    def divergence_message(run, model, checkpoint, step, value, last_finite):
        """The one line that stops a diverged run."""
        last = "none" if last_finite is None else f"{last_finite:.4g}"
        rate = run.record.get("learning_rate")
        if checkpoint.latest():
            resume = (
                f"re-running with a lower one resumes from the last finite checkpoint in "
                f"{checkpoint.directory} (--overwrite starts afresh)"
            )
        else:
            resume = "no finite checkpoint was written, so a re-run starts afresh"
        return (
            f"{run.task}: training diverged at step {step}: the loss became {value} (last "
            f"finite loss: {last}); nothing was saved from the diverged model; try a lower "
            f"--learning-rate (this run used {rate:.3g}); {resume}"
        )

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


def _replace_atomically(path, suffix, write):
    """Calls ``write(partial)`` on a temporary name beside ``path``, then renames it to
    ``path``: ``path`` is complete or absent, whenever the process is killed."""
    import tempfile

    directory = os.path.dirname(os.path.abspath(path))
    fd, partial = tempfile.mkstemp(prefix=".partial-", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        write(partial)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def save_model(model, path):
    """``model.save(path)`` atomically (a complete ``.keras`` file or none).

    Raises:
        ValueError: a weight or optimizer value is not finite (a diverged model is not saved).
    """
    from keras_adl.training.divergence import check_finite

    check_finite(model, f"save {path}")
    _replace_atomically(path, ".keras", model.save)


def write_json(path, value):
    """Writes ``value`` as JSON to ``path`` atomically."""

    def write(partial):
        with open(partial, "w") as f:
            json.dump(value, f, indent=2)

    _replace_atomically(path, ".json", write)


def read_run_or_export(path):
    """``(info, is_run)``: the ``run.json`` of a run directory (``is_run``) or the task file of
    an export.

    Raises:
        RecipeError: ``path`` is neither.
    """
    for name, is_run in ((RUN_FILE, True), (TASK_FILE, False)):
        if os.path.isfile(os.path.join(path, name)):
            with open(os.path.join(path, name)) as f:
                return json.load(f), is_run
    raise RecipeError(
        f"{path!r} is neither a run of `keras-adl train` nor an export of `keras-adl export`"
    )


def override(settings, overrides):
    """``settings`` updated with ``overrides``, which may only name existing settings."""
    unknown = sorted(set(overrides) - set(settings))
    if unknown:
        raise ValueError(
            f"unknown setting(s) {unknown}; this model's settings are {sorted(settings)}"
        )
    settings.update(overrides)
    return settings


def steps_per_call(steps, most):
    """Steps per compiled call for an epoch of ``steps``: the largest divisor of ``steps`` not
    above ``most``, so that no call runs past the epoch's end (Keras would run a whole call and
    the epoch would hold more steps than asked)."""
    most = max(1, min(int(most), steps))
    return next(d for d in range(most, 0, -1) if steps % d == 0)


def _fit_callbacks(run, model, checkpoint, directory, global_step, decay=False):
    """``(stop, best, budget, callbacks)`` of `Recipe.fit`, in the order they must run: the
    divergence check first (it freezes the checkpoint), the best epoch before the checkpoint
    (whose epoch-end save records it), the time budget after (it checks where a checkpoint
    was just written); ``budget`` is ``None`` without ``run.minutes``."""
    from keras_adl.training.budget import BestEpoch, TimeBudget
    from keras_adl.training.divergence import StopOnNonFinite

    stop = StopOnNonFinite(global_step, checkpoint)
    best = BestEpoch(checkpoint, directory, run.patience, write=run.is_chief)
    callbacks = [stop, best, checkpoint]
    budget = None
    peak = _budget_peak(run, model, checkpoint, decay)
    if run.minutes:
        budget = TimeBudget(
            run.minutes,
            checkpoint,
            run.checkpoint_every,
            run.chief_decides,
            anneal_from=peak,
            share=run.chief_value,
        )
        callbacks.append(budget)
    return stop, best, budget, [*callbacks, *run.callbacks]


def _budget_peak(run, model, checkpoint, decay):
    """The peak rate a ``--minutes`` run of a ``decay`` task decays from (`TimeBudget`), or
    ``None`` (no ``--minutes``, a task without the decay, or an optimizer following a schedule
    of its own): ``--learning-rate`` if given, else the peak a resumed run recorded (the
    optimizer holds the decayed rate), else the optimizer's rate. A run resumed without the
    decay goes on from the recorded peak, not from the decayed rate."""
    import keras

    from keras_adl.training.divergence import peak_learning_rate

    optimizer = getattr(model.optimizer, "inner_optimizer", model.optimizer)
    if isinstance(optimizer._learning_rate, keras.optimizers.schedules.LearningRateSchedule):
        return None
    peak = run.learning_rate or checkpoint.state.get("peak_learning_rate")
    peak = float(peak or peak_learning_rate(optimizer))
    if not (decay and run.minutes):
        if "peak_learning_rate" in checkpoint.state and run.learning_rate is None:
            optimizer.learning_rate = peak
            run.record["learning_rate"] = peak
        return None
    checkpoint.state["peak_learning_rate"] = peak
    run.record.update(learning_rate=peak, learning_rate_schedule="linear to 0 over --minutes")
    return peak


def _set_steps_per_call(model, count):
    if getattr(model, "steps_per_execution", 1) != count:
        model.steps_per_execution = count
        model.train_function = None  # traced with the old count


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
    """A callback recording ``keys`` about 100 times over the run (Keras' ``History`` has
    one point per epoch), added to the run's callbacks; `plot_step_log` draws it."""
    import keras

    class StepLog(keras.callbacks.Callback):
        def __init__(self, every):
            super().__init__()
            self.every, self.seen = every, 0
            self.steps, self.values = [], {k: [] for k in keys}

        def on_train_batch_end(self, batch, logs=None):
            self.seen += 1
            if logs and self.seen % self.every == 0 and all(k in logs for k in keys):
                self.steps.append(self.seen)
                for k in keys:
                    self.values[k].append(float(logs[k]))

    steps = run.record.get("steps_per_epoch") or 100
    log = StepLog(max(1, steps * run.epochs // 100))
    run.callbacks = (*run.callbacks, log)
    return log


# The missing packages whose skipped pictures were reported (one line each per process).
_PICTURES_SKIPPED = set()


def draw(plot, *args, **kwargs):
    """``plot(*args, **kwargs)``, a `keras_adl.plotting` function drawing a run's picture:
    without matplotlib (``keras-adl[plots]``), or scikit-learn for the t-SNE map, the run goes
    on without the picture, and one line (once per process) says what to install. Returns what
    ``plot`` returns, or None when skipped. Called directly, the picture functions raise
    `keras_adl._extras.MissingExtra` instead."""
    try:
        return plot(*args, **kwargs)
    except MissingExtra as error:
        if error.package not in _PICTURES_SKIPPED:
            _PICTURES_SKIPPED.add(error.package)
            print(
                f"pictures skipped: {error.package} is not installed "
                f"(pip install 'keras-adl[{error.extra}]')"
            )
        return None


def plot_step_log(log, out, title):
    """Draws a `step_log` as ``training.png`` in ``out`` (once it holds two points)."""
    from keras_adl.plotting import plot_training_curves

    if len(log.steps) >= 2:
        draw(plot_training_curves, log.steps, log.values, os.path.join(out, "training.png"), title)

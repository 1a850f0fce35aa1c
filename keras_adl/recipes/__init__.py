"""One recipe per model family, and the registry the command line loops over.

A family is one module of this package holding ``RECIPE``, an instance of a
`keras_adl.recipes.base.Recipe` subclass, plus its line in `FAMILIES`. Importing this package
and its recipe modules loads no TensorFlow: each recipe imports what it needs when it runs.
"""

import importlib
import json
import os
import shutil

from keras_adl.recipes.base import (
    BACKUP_DIR,
    CHECKPOINT_EVERY,
    RUN_FILE,
    RecipeError,
    Run,
    check_run_dir,
    write_json,
)

# The registration line of each family, in the order `keras-adl list` shows them.
FAMILIES = (
    "sequences",
    "memory",
    "vision",
    "documents",
    "embeddings",
    "pretraining",
    "contextual",
)


def recipes():
    """The `Recipe` of every family, in `FAMILIES` order."""
    return [importlib.import_module(f"keras_adl.recipes.{name}").RECIPE for name in FAMILIES]


def all_tasks():
    """``{task name: (recipe, task)}`` over every family: the one dict of tasks."""
    found = {}
    for recipe in recipes():
        for task in recipe.tasks:
            if task.name in found:
                raise RuntimeError(f"task {task.name!r} is defined by two recipes")
            found[task.name] = (recipe, task)
    return found


def evaluate_tasks():
    """The tasks ``keras-adl evaluate`` scores, over every family, in registry order."""
    return [name for recipe in recipes() for name in recipe.evaluate_tasks]


def find(task_name, model_name=None):
    """``(recipe, task, model_name)`` for a task and an optional model name.

    Raises:
        ValueError: an unknown task, or a model the task does not have (one line, naming the
            choices).
    """
    tasks = all_tasks()
    if task_name not in tasks:
        raise ValueError(f"unknown task {task_name!r}; choose one of {sorted(tasks)}")
    recipe, task = tasks[task_name]
    model_name = model_name or task.models[0]
    if model_name not in task.models:
        raise ValueError(
            f"unknown model {model_name!r} for task {task_name!r}; choose one of "
            f"{list(task.models)}"
        )
    return recipe, task, model_name


def recipe_of(task_name):
    """The `Recipe` that owns ``task_name``."""
    return find(task_name)[0]


def check_run_options(task, learning_rate=None, patience=None, minutes=None):
    """Raises `RecipeError` for a ``--learning-rate``, ``--patience`` or ``--minutes`` that is
    not a positive number, or ``--patience`` on a task without a held-out loss to watch."""
    if learning_rate is not None and not (
        isinstance(learning_rate, (int, float))
        and not isinstance(learning_rate, bool)
        and 0 < learning_rate < float("inf")
    ):
        raise RecipeError(f"--learning-rate must be a positive number; received {learning_rate!r}")
    if patience is not None:
        if isinstance(patience, bool) or not isinstance(patience, int) or patience < 1:
            raise RecipeError(f"--patience must be a positive integer; received {patience!r}")
        if not task.held_out:
            raise RecipeError(
                f"--patience watches a held-out loss, and task {task.name!r} has no held-out "
                f"split; --minutes bounds its training time"
            )
    if minutes is not None and not (
        isinstance(minutes, (int, float)) and not isinstance(minutes, bool) and 0 < minutes
    ):
        raise RecipeError(f"--minutes must be a positive number; received {minutes!r}")


def train(
    task,
    out,
    model=None,
    epochs=None,
    batch_size=None,
    samples=None,
    strategy="auto",
    callbacks=(),
    checkpoint_every=CHECKPOINT_EVERY,
    overwrite=False,
    keep_checkpoints=2,
    seed=None,
    jit_compile=True,
    learning_rate=None,
    patience=None,
    minutes=None,
    **options,
):
    """Trains ``model`` on ``task`` as ``keras-adl train`` does; writes ``model.keras``,
    ``run.json`` and the family's pictures to ``out``.

    An interrupted run in ``out`` (same task, model and settings) resumes from its last
    checkpoint; ``out`` holding anything else is refused (`base.check_run_dir`), unless
    ``overwrite``. Unset settings take the task's defaults; ``options`` are the task's own
    options (e.g. ``data=``, ``max_length=``). ``seed`` seeds Python, NumPy and Keras
    (initial weights, dropout) and the order of shuffled arrays: two runs with the same seed
    and settings train the same model. ``jit_compile=False`` trains without XLA (it is off
    under a distributed strategy anyway; a model that samples, like the RAM, draws other random
    numbers under XLA, so compare runs of one kind). ``learning_rate`` replaces the recipe's
    peak learning rate (a schedule keeps its shape); it is the one setting that may differ when
    a run resumes, so a run that diverged (`RecipeError` naming the step) is re-run with a
    lower one from its last finite checkpoint. ``patience`` stops after that many epochs
    without a better held-out loss (tasks with ``held_out``; their best epoch becomes the
    model); ``minutes`` bounds the training time, counted across resumes and checked where
    checkpoints are written.

    Under ``strategy="multi_worker"`` every worker calls this with the same arguments (create
    the strategy first, before TensorFlow runs anything: ``get_strategy("multi_worker")``).
    ``batch_size`` is then per worker: each step trains on a global batch of ``batch_size`` ×
    workers examples, split across them. The chief writes ``out``; the other workers write to
    a temporary directory, deleted at the end, and read the chief's checkpoints in ``out``
    when they resume.

    Returns:
        ``(model, history, metrics)``.

    Raises:
        RecipeError: ``out`` holds another run, or an option is invalid.
    """
    import tempfile

    from keras_adl.training.distribute import worker_info

    recipe, task_spec, model = find(task, model)
    check_run_options(task_spec, learning_rate, patience, minutes)
    for option in task_spec.options:
        options[option.dest] = option.check(options.get(option.dest, option.default), task)
    run = Run(
        task=task,
        model=model,
        out=out,
        epochs=epochs or task_spec.epochs,
        batch_size=batch_size or task_spec.batch_size_of(model),
        samples=samples or task_spec.samples,
        options=options,
        strategy=strategy,
        callbacks=tuple(callbacks),
        checkpoint_every=checkpoint_every,
        keep_checkpoints=keep_checkpoints,
        seed=seed or 0,
        jit_compile=jit_compile,
        learning_rate=learning_rate,
        patience=patience,
        minutes=minutes,
    )
    settings = dict(
        epochs=run.epochs, batch_size=run.batch_size, samples=run.samples, options=options
    )
    # Before any build: XLA is off under a distributed strategy.
    index, workers, chief = worker_info(run.get_strategy())
    if seed is not None:
        import keras

        keras.utils.set_random_seed(seed)
    if chief:
        check_run_dir(out, task, model, settings, overwrite)
    run.record.update(task=task, model=model, **settings, seed=seed, status="training")
    if workers > 1:
        run.batch_size *= workers
        run.record.update(workers=workers, global_batch_size=run.batch_size)
    if not chief:
        run.run_dir, run.out = out, tempfile.mkdtemp(prefix=f"keras-adl-worker{index}-")
    fresh = not os.path.exists(run.out)
    os.makedirs(run.out, exist_ok=True)
    write_json(run.path(RUN_FILE), run.record)
    try:
        keras_model, history, metrics = recipe.train(run)
    except (ValueError, FileNotFoundError):
        if chief and not os.path.exists(run.path(BACKUP_DIR)):  # bad data: leave nothing
            if fresh:
                shutil.rmtree(out, ignore_errors=True)
            else:
                os.remove(run.path(RUN_FILE))
        raise
    finally:
        if not chief:
            shutil.rmtree(run.out, ignore_errors=True)
    run.record.update(status="finished", metrics=metrics)
    if chief:
        write_json(run.path(RUN_FILE), run.record)
        print(json.dumps(metrics))
    return keras_model, history, metrics

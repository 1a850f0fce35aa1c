"""The model families' recipes: every task's data, model, figures and serving, and `train`.

A family is a folder of this package (``keras_adl/recipes/<family>/``), each file one concern:

- ``spec.py``: ``FAMILY``, its tasks, models, options and defaults as plain data (standard
  library only: all that ``keras-adl list`` and ``--help`` import);
- ``data.py``, ``build.py``, ``evaluate.py``, ``plots.py``, ``serving.py``,
  ``hypermodels.py``: the data of each task, the one place its models are built and compiled,
  its figures, its pictures, its serving functions, its HyperModels;
- ``tasks.py``: ``RECIPES``, one `keras_adl.recipes._recipe.TaskRecipe` per task by name,
  composing the rest.

This package itself loads no TensorFlow: `families` and `find` read the specs, and
`recipe_for` imports a family's ``tasks.py`` (and TensorFlow with it) when a task is run.
"""

import importlib

# RecipeError is documented where it is defined; importing it from here keeps working.
from keras_adl.training.rundir import CHECKPOINT_EVERY, RecipeError  # noqa: F401

__all__ = [
    "FAMILIES",
    "all_tasks",
    "check_run_options",
    "evaluate_tasks",
    "families",
    "find",
    "recipe_for",
    "train",
]

# The families, in the order `keras-adl list` shows them.
FAMILIES = (
    "sequences",
    "memory",
    "vision",
    "documents",
    "embeddings",
    "pretraining",
    "contextual",
    "tagging",
)


def families():
    """The ``FAMILY`` spec of every family, in `FAMILIES` order.

    Returns:
        A list of `keras_adl.recipes._spec.Family`.

    Example:

    >>> [family.name for family in families()] == list(FAMILIES)
    True
    >>> memory = families()[1]
    >>> memory.name, memory.tasks[0].name, memory.tasks[0].models
    ('memory', 'copy', ('ntm', 'dnc', 'lstm'))
    """
    return [importlib.import_module(f"keras_adl.recipes.{name}.spec").FAMILY for name in FAMILIES]


def all_tasks():
    """``{task name: (family, task)}`` over every family: the one dict of tasks.

    Returns:
        A dict from each task's name to its ``(family, task)`` specs, in `FAMILIES` order.

    Raises:
        RuntimeError: two families define a task of the same name.

    Example:

    >>> tasks = all_tasks()
    >>> family, task = tasks["word2vec"]
    >>> family.name, task.name, task.models
    ('embeddings', 'word2vec', ('skipgram', 'cbow'))
    >>> next(iter(tasks))  # the first family's first task
    'dates'
    """
    found = {}
    for family in families():
        for task in family.tasks:
            if task.name in found:
                raise RuntimeError(f"task {task.name!r} is defined by two families")
            found[task.name] = (family, task)
    return found


def evaluate_tasks():
    """The tasks ``keras-adl evaluate`` scores, over every family, in registry order."""
    return [name for family in families() for name in family.evaluate_tasks]


def find(task_name, model_name=None):
    """``(family, task, model_name)`` for a task and an optional model name.

    Args:
        task_name: a task's name (``keras-adl list``).
        model_name: one of the task's models; ``None`` for its first (default) one.

    Returns:
        ``(family, task, model_name)``: the family's and the task's specs, and the model's name.

    Raises:
        ValueError: an unknown task, or a model the task does not have (one line, naming the
            choices).

    Example:

    >>> family, task, model_name = find("copy")  # the task's first model is its default
    >>> family.name, task.name, model_name
    ('memory', 'copy', 'ntm')
    >>> find("copy", "dnc")[2]
    'dnc'
    >>> find("copy", "gpt")
    Traceback (most recent call last):
    ...
    ValueError: unknown model 'gpt' for task 'copy'; choose one of ['ntm', 'dnc', 'lstm']
    """
    tasks = all_tasks()
    if task_name not in tasks:
        raise ValueError(f"unknown task {task_name!r}; choose one of {sorted(tasks)}")
    family, task = tasks[task_name]
    model_name = model_name or task.models[0]
    if model_name not in task.models:
        raise ValueError(
            f"unknown model {model_name!r} for task {task_name!r}; choose one of "
            f"{list(task.models)}"
        )
    return family, task, model_name


def recipe_for(task_name):
    """The `keras_adl.recipes._recipe.TaskRecipe` of ``task_name``: the one place where a
    family's heavy modules (its ``tasks.py``, and TensorFlow with it) are imported by name.

    Args:
        task_name: a task's name.

    Returns:
        A `keras_adl.recipes._recipe.TaskRecipe`.

    Raises:
        ValueError: an unknown task.
    """
    family = find(task_name)[0]
    return importlib.import_module(f"keras_adl.recipes.{family.name}.tasks").RECIPES[task_name]


def _check_positive(flag, value, integer=False, finite=True):
    if value is None:
        return
    if integer:
        good = isinstance(value, int) and not isinstance(value, bool) and value >= 1
        expected = "a positive integer"
    else:
        good = (
            isinstance(value, (int, float))
            and not isinstance(value, bool)
            and 0 < value
            and (value < float("inf") or not finite)
        )
        expected = "a positive number"
    if not good:
        raise RecipeError(f"{flag} must be {expected}; received {value!r}")


def check_run_options(task, learning_rate=None, patience=None, minutes=None):
    """Raises `RecipeError` for a ``--learning-rate``, ``--patience`` or ``--minutes`` that is
    not a positive number, or ``--patience`` on a task without a held-out loss to watch."""
    _check_positive("--learning-rate", learning_rate)
    _check_positive("--patience", patience, integer=True)
    if patience is not None and not task.held_out:
        raise RecipeError(
            f"--patience watches a held-out loss, and task {task.name!r} has no held-out "
            f"split; --minutes bounds its training time"
        )
    _check_positive("--minutes", minutes, finite=False)


def checkpoint_interval(spec, checkpoint_every):
    """The steps between mid-epoch checkpoints of a run of task ``spec``: ``checkpoint_every``,
    or for ``"task"`` the task's own (`Task.checkpoint_every`, else `CHECKPOINT_EVERY`)."""
    if checkpoint_every == "task":
        return spec.checkpoint_every or CHECKPOINT_EVERY
    return checkpoint_every


def train(
    task,
    out,
    model=None,
    epochs=None,
    batch_size=None,
    samples=None,
    strategy="auto",
    callbacks=(),
    checkpoint_every="task",
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
    checkpoint; ``out`` holding anything else is refused (`check_run_dir`), unless
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

    Args:
        task: the task's name (``keras-adl list``).
        out: the run directory.
        model: one of the task's models; ``None`` for its first (default) one.
        epochs: passes over the training data.
        batch_size: examples per training step (per worker under ``"multi_worker"``).
        samples: training examples (the memory tasks draw this many fresh sequences every
            epoch).
        strategy: ``"auto"``, ``"mirrored"``, ``"multi_worker"`` or ``"default"``.
        callbacks: more Keras callbacks for ``fit``.
        checkpoint_every: steps between mid-epoch checkpoints; ``"task"``: the task's own
            (`CHECKPOINT_EVERY` unless its spec sets one); ``None``: at epoch ends only.
        overwrite: delete the run that ``out`` holds and start fresh.
        keep_checkpoints: complete checkpoints kept in ``out/backup`` during training.
        seed: the seed of the initial weights, dropout and data order.
        jit_compile: train with XLA.
        learning_rate: the optimizer's peak learning rate (``None``: the recipe's).
        patience: epochs without a better held-out loss before stopping (``None``: no limit).
        minutes: the training time allowed (``None``: no limit).
        **options: the task's own options.

    Returns:
        ``(model, history, metrics)``.

    Raises:
        RecipeError: ``out`` holds another run, or an option is invalid.
    """
    _, spec, model = find(task, model)
    check_run_options(spec, learning_rate, patience, minutes)
    for option in spec.options:
        options[option.dest] = option.check(options.get(option.dest, option.default), task)
    # The library's boundary: TensorFlow loads here, once the request is checked.
    from keras_adl.recipes._train import Run, train_run

    run = Run(
        task=task,
        model=model,
        out=out,
        epochs=epochs or spec.epochs,
        batch_size=batch_size or spec.batch_size_of(model),
        samples=samples or spec.samples,
        options=options,
        strategy=strategy,
        callbacks=tuple(callbacks),
        checkpoint_every=checkpoint_interval(spec, checkpoint_every),
        keep_checkpoints=keep_checkpoints,
        seed=seed or 0,
        jit_compile=jit_compile,
        learning_rate=learning_rate,
        patience=patience,
        minutes=minutes,
        budget_decay=spec.budget_decay,
    )
    return train_run(recipe_for(task), run, seed, overwrite)

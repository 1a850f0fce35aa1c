"""One recipe per model family, and the registry the command line loops over.

A family is one module of this package holding ``RECIPE``, an instance of a
`keras_adl.recipes.base.Recipe` subclass, plus its line in `FAMILIES`. Importing this package
and its recipe modules loads no TensorFlow: each recipe imports what it needs when it runs.
"""

import importlib

# The registration line of each family, in the order `keras-adl list` shows them.
FAMILIES = ("sequences", "memory", "vision", "documents")


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

"""``keras-adl tune``: the random search every family's HyperModels run through."""

import json

from keras_adl.extras import require


def import_keras_tuner():
    """``keras_tuner``, or `MissingExtra` naming ``pip install 'keras-adl[tuner]'``."""
    return require("keras_tuner", "tuner", "hyperparameter search (keras-adl tune)")


def search(hypermodel, objective, trials, out, project_name, *data, **search_kwargs):
    """Random search over ``hypermodel``; prints and returns the best hyperparameters.

    Args:
        hypermodel: a ``keras_tuner.HyperModel`` of a family's ``hypermodels.py``.
        objective: a metric name, or ``(name, "min" | "max")``.
        trials: the number of trials.
        out, project_name: where keras-tuner keeps its trials.
        *data, **search_kwargs: ``tuner.search``'s data and arguments.
    """
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


def tuned_learning_rate(hp, default, low=1e-4, high=3e-2):
    """The ``learning_rate`` hyperparameter every HyperModel searches (log scale, 1e-4 to
    3e-2 unless ``low`` and ``high`` say otherwise)."""
    return hp.Float("learning_rate", low, high, sampling="log", default=default)

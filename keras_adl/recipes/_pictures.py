"""How a run draws its pictures: without the ``plots`` extra it goes on without them, and the
step log behind ``training.png``."""

import os

import keras

from keras_adl.extras import MissingExtra
from keras_adl.plotting import plot_training_curves

# The missing packages whose skipped pictures were reported (one line each per process).
_PICTURES_SKIPPED = set()


def draw(plot, *args, **kwargs):
    """``plot(*args, **kwargs)``, a function drawing a run's picture: without matplotlib
    (``keras-adl[plots]``), or scikit-learn for the t-SNE map, the run goes on without the
    picture, and one line (once per process) says what to install. Returns what ``plot``
    returns, or None when skipped. Called directly, the picture functions raise
    `keras_adl.extras.MissingExtra` instead."""
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


class StepLog(keras.callbacks.Callback):
    """Records ``keys`` of the training logs every ``every`` steps (Keras' ``History`` has one
    point per epoch)."""

    def __init__(self, keys, every):
        super().__init__()
        self.keys, self.every, self.seen = tuple(keys), every, 0
        self.steps, self.values = [], {k: [] for k in keys}

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if logs and self.seen % self.every == 0 and all(k in logs for k in self.keys):
            self.steps.append(self.seen)
            for k in self.keys:
                self.values[k].append(float(logs[k]))


def step_log(run, keys):
    """A `StepLog` recording ``keys`` about 100 times over the run, added to the run's
    callbacks; `plot_step_log` draws it."""
    steps = run.record.get("steps_per_epoch") or 100
    log = StepLog(keys, max(1, steps * run.epochs // 100))
    run.callbacks = (*run.callbacks, log)
    return log


def plot_step_log(log, out, title):
    """Draws a `step_log` as ``training.png`` in ``out`` (once it holds two points)."""
    if len(log.steps) >= 2:
        draw(plot_training_curves, log.steps, log.values, os.path.join(out, "training.png"), title)

"""Callbacks shared by the benchmarks and recipes."""

import time

import keras

__all__ = ["TimeLimit"]


class TimeLimit(keras.callbacks.Callback):
    """Stops training once ``seconds`` of wall-clock time have passed since training began
    (checked after every batch, so the last step finishes), and counts the steps run.

    Args:
        seconds: the training budget.

    Attributes:
        steps: batches trained so far.
        elapsed: seconds from the start of training to the end of the last batch.
    """

    def __init__(self, seconds):
        super().__init__()
        if not seconds > 0:
            raise ValueError(f"TimeLimit: `seconds` must be positive; received {seconds!r}.")
        self.seconds = seconds
        self.steps = 0
        self.elapsed = 0.0

    def on_train_begin(self, logs=None):
        self.start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1
        self.elapsed = time.perf_counter() - self.start
        if self.elapsed > self.seconds:
            self.model.stop_training = True

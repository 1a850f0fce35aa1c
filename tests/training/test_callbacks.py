"""TimeLimit stops a fit once its budget is spent and counts the steps run (on a fake clock:
the test asserts the rule, not how fast this machine trains)."""

import itertools

import keras
import numpy as np
import pytest

from keras_adl.training import callbacks
from keras_adl.training.callbacks import TimeLimit


class _Clock:
    """Stands in for the `time` module: each reading is `tick` seconds after the last."""

    def __init__(self, tick):
        self.readings = itertools.count(0.0, tick)

    def perf_counter(self):
        return next(self.readings)


def _fit(limit, epochs):
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.zeros((64, 2), "float32"), np.zeros((64, 1), "float32")
    return model.fit(x, y, batch_size=8, epochs=epochs, verbose=0, callbacks=[limit])


def test_time_limit_stops_after_the_batch_that_spends_the_budget(monkeypatch):
    monkeypatch.setattr(callbacks, "time", _Clock(1.0))  # every batch takes one second
    limit = TimeLimit(2.5)
    history = _fit(limit, epochs=3)
    assert limit.steps == 3 and limit.elapsed == 3.0  # 1 s, 2 s, then 3 s > 2.5 s: stop
    assert len(history.history["loss"]) == 1  # the first epoch, cut short


def test_time_limit_never_stops_a_fit_within_its_budget(monkeypatch):
    monkeypatch.setattr(callbacks, "time", _Clock(0.0))  # a clock that does not move
    limit = TimeLimit(1e-9)
    history = _fit(limit, epochs=2)
    assert limit.steps == 16 and limit.elapsed == 0.0  # 2 epochs of 8 batches, all run
    assert len(history.history["loss"]) == 2


def test_time_limit_refuses_a_budget_that_is_not_positive():
    for seconds in (0, -1.0):
        with pytest.raises(ValueError, match=f"`seconds` must be positive; received {seconds}"):
            TimeLimit(seconds)

"""TimeLimit stops a fit once its budget is spent and counts the steps run."""

import keras
import numpy as np
import pytest

from keras_adl.training.callbacks import TimeLimit


def test_time_limit_stops_training_and_counts_steps():
    model = keras.Sequential([keras.Input((2,)), keras.layers.Dense(1)])
    model.compile("sgd", "mse")
    x, y = np.zeros((64, 2), "float32"), np.zeros((64, 1), "float32")
    limit = TimeLimit(1e-9)  # spent after the first batch
    model.fit(x, y, batch_size=8, epochs=3, verbose=0, callbacks=[limit])
    assert limit.steps == 1
    generous = TimeLimit(600)
    model.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=[generous])
    assert generous.steps == 16
    with pytest.raises(ValueError, match="`seconds` must be positive; received 0"):
        TimeLimit(0)

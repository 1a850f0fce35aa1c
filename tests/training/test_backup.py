"""`StepBackup` and `Recipe.fit`: checkpoints every N steps, resume mid-epoch."""

import json
import os

import keras
import numpy as np
import pytest

from keras_adl.recipes.base import Recipe, Run


class _Stop(keras.callbacks.Callback):
    def __init__(self, epoch, step):
        super().__init__()
        self.epoch, self.step, self.current = epoch, step, 0

    def on_epoch_begin(self, epoch, logs=None):
        self.current = epoch

    def on_train_batch_end(self, batch, logs=None):
        if (self.current, batch + 1) == (self.epoch, self.step):
            raise KeyboardInterrupt


class _Steps(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.seen = []

    def on_train_batch_end(self, batch, logs=None):
        self.seen.append(batch)


def _model():
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(0.1), loss="mse", jit_compile=False)
    return model


@pytest.mark.parametrize("stop_epoch", [0, 1])
def test_fit_resumes_mid_epoch_with_the_checkpointed_weights(tmp_path, stop_epoch):
    x = np.random.default_rng(0).normal(size=(40, 3)).astype("float32")
    y = x.sum(-1, keepdims=True)
    out = str(tmp_path)
    # 10 steps an epoch, a checkpoint every 4 steps; stop after 7 steps of `stop_epoch`.
    run = Run(
        task="t",
        model="m",
        epochs=3,
        batch_size=4,
        samples=40,
        out=out,
        checkpoint_every=4,
        callbacks=(_Stop(stop_epoch, 7),),
    )
    model = _model()
    with pytest.raises(KeyboardInterrupt):
        Recipe().fit(run, model, x, y, batch_size=4, shuffle=False, verbose=0)
    with open(os.path.join(out, "backup", "progress.json")) as f:
        assert json.load(f) == {"epoch": stop_epoch, "step": 4}
    resumed, steps = _model(), _Steps()
    run.callbacks = (steps,)
    history = Recipe().fit(run, resumed, x, y, batch_size=4, shuffle=False, verbose=0)
    # The rest of the interrupted epoch (6 steps), then the remaining whole epochs.
    assert len(steps.seen) == 6 + 10 * (2 - stop_epoch)
    assert history.epoch[-1] == 2
    assert not os.path.exists(os.path.join(out, "backup"))
    assert os.path.isfile(os.path.join(out, "model.keras"))


def test_resume_restores_weights_and_optimizer_state(tmp_path):
    x = np.ones((8, 3), "float32")
    y = np.full((8, 1), 5.0, "float32")
    run = Run(
        task="t",
        model="m",
        epochs=2,
        batch_size=4,
        samples=8,
        out=str(tmp_path),
        checkpoint_every=1,
        callbacks=(_Stop(1, 1),),
    )
    model = _model()
    with pytest.raises(KeyboardInterrupt):
        Recipe().fit(run, model, x, y, batch_size=4, shuffle=False, verbose=0)
    resumed = _model()
    resumed.build((None, 3))
    run.callbacks = ()

    class _Check(keras.callbacks.Callback):
        def on_train_batch_begin(self, batch, logs=None):
            if not hasattr(self, "weights"):  # the state saved after step 1 of epoch 1
                self.weights = [w.numpy().copy() for w in self.model.weights]
                self.iterations = int(self.model.optimizer.iterations.numpy())

    check = _Check()
    run.callbacks = (check,)
    Recipe().fit(run, resumed, x, y, batch_size=4, shuffle=False, verbose=0)
    assert check.iterations == 3  # 2 steps of epoch 0 and 1 of epoch 1
    np.testing.assert_allclose(check.weights[0], model.weights[0].numpy(), rtol=1e-6)

"""`StepCheckpoint` and `keras_adl.training.fit.fit`: atomic checkpoints every N steps, resume mid-epoch."""

import json
import os

import keras
import numpy as np
import pytest

from keras_adl.training.checkpoint import StepCheckpoint
from keras_adl.training.data import batch_stream, split_stream
from keras_adl.training.fit import fit
from keras_adl.training.run import Run


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
        fit(run, model, x, y, batch_size=4, shuffle=False, verbose=0)
    # Epoch ends and every 4th global step are checkpoints; the last two are kept.
    kept = sorted(os.listdir(os.path.join(out, "backup")))
    expected = {0: ["ckpt-000000004"], 1: ["ckpt-000000012", "ckpt-000000016"]}[stop_epoch]
    assert kept == expected
    last = int(kept[-1][5:])
    with open(os.path.join(out, "backup", kept[-1], "progress.json")) as f:
        progress = json.load(f)
        assert progress.pop("state")["elapsed"] > 0  # training time, counted across resumes
        assert progress == {
            "epoch": stop_epoch,
            "step": last - 10 * stop_epoch,
            "global_step": last,
            "optimizer": "Adam",
        }
    resumed, steps = _model(), _Steps()
    run.callbacks = (steps,)
    history = fit(run, resumed, x, y, batch_size=4, shuffle=False, verbose=0)
    # The rest of the interrupted epoch, then the remaining whole epochs.
    assert len(steps.seen) == 30 - last
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
        fit(run, model, x, y, batch_size=4, shuffle=False, verbose=0)
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
    fit(run, resumed, x, y, batch_size=4, shuffle=False, verbose=0)
    assert check.iterations == 3  # 2 steps of epoch 0 and 1 of epoch 1
    np.testing.assert_allclose(check.weights[0], model.weights[0].numpy(), rtol=1e-6)


def test_resumed_run_ends_with_the_uninterrupted_runs_weights(tmp_path):
    # Shuffled arrays: the resumed run must continue the same data stream (epoch orders and
    # position) with the same optimizer state, so the final weights agree.
    x = np.random.default_rng(1).normal(size=(36, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")

    def run(out, callbacks=()):
        return Run(
            task="t",
            model="m",
            epochs=3,
            batch_size=5,
            samples=36,
            out=str(out),
            checkpoint_every=3,
            callbacks=callbacks,
        )

    keras.utils.set_random_seed(0)
    whole = _model()
    start = [w.numpy().copy() for w in whole.weights]
    fit(run(tmp_path / "a"), whole, x, y, batch_size=5, shuffle=True, verbose=0)
    interrupted = _model()
    interrupted.set_weights(start)
    with pytest.raises(KeyboardInterrupt):
        fit(
            run(tmp_path / "b", (_Stop(1, 5),)),
            interrupted,
            x,
            y,
            batch_size=5,
            shuffle=True,
            verbose=0,
        )
    resumed = _model()  # other initial weights: all state must come from the checkpoint
    fit(run(tmp_path / "b"), resumed, x, y, batch_size=5, shuffle=True, verbose=0)
    for a, b in zip(resumed.get_weights(), whole.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_checkpoints_are_atomic_and_pruned(tmp_path):
    model = _model()
    model.build((None, 3))
    directory = str(tmp_path / "backup")
    os.makedirs(os.path.join(directory, ".partial-killed"))  # a writer killed mid-save
    os.makedirs(os.path.join(directory, "ckpt-000000009"))  # no progress.json: incomplete
    checkpoint = StepCheckpoint(directory, every=2, keep=2)
    checkpoint.set_model(model)
    assert not os.path.exists(os.path.join(directory, ".partial-killed"))
    assert checkpoint.latest() is None and checkpoint.resume_point() == (0, 0, 0)
    for step in (1, 2, 3):
        checkpoint.start(0, step, step)
        checkpoint.save()
    names = sorted(os.listdir(directory))
    assert names == ["ckpt-000000002", "ckpt-000000003", "ckpt-000000009"]
    assert checkpoint.resume_point() == (0, 3, 3)
    assert sorted(os.listdir(os.path.join(directory, names[1]))) == [
        "model.weights.h5",
        "progress.json",
    ]
    with pytest.raises(ValueError, match="`keep` must be an integer >= 1; received 0"):
        StepCheckpoint(directory, keep=0)
    with pytest.raises(ValueError, match="`every` must be a positive integer or None"):
        StepCheckpoint(directory, every=-3)
    reader = StepCheckpoint(directory, write=False)
    reader.set_model(model)
    reader.save()
    reader.remove()  # a reader neither writes nor deletes
    assert sorted(os.listdir(directory)) == names


class _Numbered(keras.utils.PyDataset):
    """Batch i of epoch e holds the value 100 * e + i; the order changes every epoch."""

    def __init__(self):
        super().__init__()
        self.epoch = 0

    def __len__(self):
        return 3

    def __getitem__(self, index):
        value = 100 * self.epoch + (index + self.epoch) % 3
        return np.full((2, 1), value, "float32"), np.zeros((2, 1), "float32")

    def on_epoch_end(self):
        self.epoch += 1


@pytest.mark.parametrize("kind", ["arrays", "dataset", "pydataset"])
def test_batch_stream_starts_anywhere_with_the_same_batches(kind):
    import tensorflow as tf

    if kind == "arrays":
        x = np.arange(10, dtype="float32")[:, None]
        steps, stream = batch_stream(x, x, batch_size=4, shuffle=True, seed=3)
        assert steps == 3
    elif kind == "dataset":  # rebuilt for every stream, as by a new process

        def stream(start):
            ds = tf.data.Dataset.range(7).shuffle(7, seed=2).batch(2)
            return batch_stream(ds)[1](start)

        steps = batch_stream(tf.data.Dataset.range(7).batch(2))[0]
        assert steps == 4
    else:
        steps, stream = batch_stream(_Numbered())
        assert steps == 3

    def first(x):
        return tf.nest.flatten(x)[0].numpy().ravel().tolist()

    whole = [first(b) for b in stream(0).take(4 * steps)]
    assert whole[:steps] != whole[steps : 2 * steps]  # a new order every epoch
    for start in (1, steps, 2 * steps + 1):
        assert [first(b) for b in stream(start).take(4)] == whole[start : start + 4]


def test_split_stream_pieces_continue_one_pass():
    import tensorflow as tf

    def values(ds):
        return [int(v) for v in ds]

    shuffled = tf.data.Dataset.range(6).shuffle(6, seed=1).repeat(3)
    whole = values(shuffled)
    part = split_stream(tf.data.Dataset.range(6).shuffle(6, seed=1).repeat(3))
    assert values(part(4)) + values(part(5)) + values(part(None)) == whole


def test_batch_stream_of_a_generator_dataset_needs_no_count():
    # from_generator has unknown cardinality: with steps_per_epoch it must not be counted
    # (an endless generator would never finish).
    import itertools

    import tensorflow as tf

    ds = tf.data.Dataset.from_generator(
        lambda: ((np.full((2,), i, "float32"),) for i in itertools.count()),
        output_signature=(tf.TensorSpec((2,), tf.float32),),
    )
    steps, stream = batch_stream(ds, steps_per_epoch=5)
    assert steps == 5
    assert [int(b[0][0]) for b in stream(7).take(3)] == [7, 8, 9]
    finite = tf.data.Dataset.range(6).filter(lambda v: v % 2 == 0)  # unknown, counted: 3
    assert batch_stream(finite)[0] == 3


def test_a_checkpoint_of_another_optimizer_is_refused_in_one_line(tmp_path):
    """Resuming into a model compiled with another optimiser (a recipe whose optimiser
    changed between versions) names the checkpoint and the way out, not a Keras shape error."""
    x = np.ones((8, 3), "float32")
    adam = _model()
    adam.fit(
        x, x[:, :1], batch_size=4, epochs=1, verbose=0, callbacks=[StepCheckpoint(str(tmp_path), 1)]
    )
    sgd = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    sgd.compile(optimizer=keras.optimizers.SGD(0.1, momentum=0.9), loss="mse")
    with pytest.raises(ValueError, match="state of a Adam optimizer.*with SGD.*--overwrite"):
        StepCheckpoint(str(tmp_path), 1).restore(sgd)
    again = _model()
    assert StepCheckpoint(str(tmp_path), 1).restore(again)[2] == 2  # the same optimiser resumes
    np.testing.assert_allclose(again.get_weights()[0], adam.get_weights()[0])


def test_a_checkpoint_of_the_same_optimizer_otherwise_configured_is_refused(tmp_path):
    """RMSprop with momentum saves more variables than without: Keras only warns and skips
    the optimizer's state; the resume refuses instead."""
    x = np.ones((8, 3), "float32")
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.RMSprop(0.1, momentum=0.9), loss="mse")
    model.fit(x, x[:, :1], batch_size=4, verbose=0, callbacks=[StepCheckpoint(str(tmp_path), 1)])
    plain = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    plain.compile(optimizer=keras.optimizers.RMSprop(0.1), loss="mse")
    with pytest.raises(ValueError, match="does not fit this model and optimizer.*Skipping"):
        StepCheckpoint(str(tmp_path), 1).restore(plain)

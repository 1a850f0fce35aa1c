"""Diverged runs stop in one line and save nothing non-finite; epochs hold exactly their steps
under ``steps_per_execution``; ``--learning-rate`` sets a schedule's peak."""

import json
import os

import keras
import numpy as np
import pytest

from keras_adl.recipes import RecipeError
from keras_adl.training.checkpoint import list_checkpoints
from keras_adl.training.divergence import (
    ScaledSchedule,
    StopOnNonFinite,
    check_finite,
    non_finite_variables,
    peak_learning_rate,
    set_peak_learning_rate,
)
from keras_adl.training.fit import fit, steps_per_call
from keras_adl.training.run import Run, save_model
from tests.training.test_checkpoint import _Steps


class _Poison(keras.callbacks.Callback):
    """Sets the first weight to NaN after global step ``at`` (of the first ``fit``)."""

    def __init__(self, at):
        super().__init__()
        self.at, self.seen = at, 0

    def on_train_batch_end(self, batch, logs=None):
        self.seen += 1
        if self.seen == self.at:
            kernel = self.model.weights[0]
            kernel.assign(np.full(kernel.shape, np.nan, "float32"))


def _data():
    x = np.random.default_rng(0).normal(size=(40, 3)).astype("float32")
    return x, x.sum(-1, keepdims=True)


def _model(steps_per_execution=1, rate=0.01):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    model.compile(
        optimizer=keras.optimizers.Adam(rate),
        loss="mse",
        jit_compile=False,
        steps_per_execution=steps_per_execution,
    )
    return model


def _run(out, **kwargs):
    return Run(task="t", model="m", epochs=3, batch_size=4, samples=40, out=out, **kwargs)


def test_a_nan_loss_stops_the_run_in_one_line_and_keeps_only_finite_checkpoints(tmp_path):
    out = str(tmp_path)
    x, y = _data()
    run = _run(out, checkpoint_every=4, callbacks=(_Poison(13),))
    model = _model()
    with pytest.raises(RecipeError) as caught:
        fit(run, model, x, y, batch_size=4, verbose=0)
    message = str(caught.value)
    assert "\n" not in message
    assert "t: training diverged at step 14" in message
    assert "--learning-rate" in message and "resumes from the last finite checkpoint" in message
    assert not os.path.exists(os.path.join(out, "model.keras"))
    kept = list_checkpoints(os.path.join(out, "backup"))
    assert [step for step, _ in kept] == [10, 12]  # the epoch end and step 12; none after 13
    # Re-run with a lower rate (the poisoning gone): it resumes at step 12 and finishes.
    steps = _Steps()
    resumed = _model()
    run = _run(out, checkpoint_every=4, callbacks=(steps,), learning_rate=0.005)
    fit(run, resumed, x, y, batch_size=4, verbose=0)
    assert len(steps.seen) == 30 - 12
    assert run.record["learning_rate"] == pytest.approx(0.005)
    assert float(resumed.optimizer.learning_rate) == pytest.approx(0.005)
    assert not non_finite_variables(keras.saving.load_model(os.path.join(out, "model.keras")))


def test_a_run_that_diverges_before_any_checkpoint_says_it_starts_afresh(tmp_path):
    x, y = _data()
    run = _run(str(tmp_path), checkpoint_every=None, callbacks=(_Poison(2),))
    with pytest.raises(RecipeError, match="no finite checkpoint was written"):
        fit(run, _model(), x, y, batch_size=4, verbose=0)
    assert not os.path.exists(os.path.join(str(tmp_path), "backup"))


def test_stop_on_non_finite_records_the_step_and_the_last_finite_loss():
    stop = StopOnNonFinite(first_step=100)
    stop.set_model(_model())
    stop.on_epoch_begin(0)
    stop.on_train_batch_end(1, {"loss": 0.5})  # a compiled call of 2 steps
    stop.on_train_batch_end(3, {"loss": float("inf")})
    assert stop.diverged == (104, float("inf"), 0.5)
    assert stop.model.stop_training


def test_a_diverged_model_is_neither_saved_nor_exported(tmp_path):
    import tensorflow as tf

    from keras_adl.training.export import export_serving_fn

    model = _model()
    model.weights[1].assign(np.array([np.inf], "float32"))
    assert non_finite_variables(model) == [model.weights[1].path]
    with pytest.raises(ValueError, match="refusing to save .*NaN or infinite.*--learning-rate"):
        save_model(model, str(tmp_path / "model.keras"))
    assert not os.listdir(tmp_path)
    serve = tf.function(model, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    with pytest.raises(ValueError, match="refusing to export to .*export.*NaN or infinite"):
        export_serving_fn(model, str(tmp_path / "export"), serve)
    assert not os.listdir(tmp_path)
    model.weights[1].assign(np.array([0.0], "float32"))
    check_finite(model, "export")  # a finite model passes


@pytest.mark.parametrize(
    "steps, most, expected", [(41, 100, 41), (200, 100, 100), (241, 100, 1), (10, 4, 2)]
)
def test_steps_per_call_divides_the_epoch(steps, most, expected):
    assert steps_per_call(steps, most) == expected


def test_an_epoch_holds_its_steps_under_steps_per_execution(tmp_path):
    x, y = _data()  # 10 steps an epoch; compiled calls of 4 would round it up to 12
    run = _run(str(tmp_path), checkpoint_every=None)
    model = _model(steps_per_execution=4)
    history = fit(run, model, x, y, batch_size=4, verbose=0)
    assert int(model.optimizer.iterations) == 30
    assert len(history.epoch) == 3


def test_checkpoints_count_every_step_of_a_compiled_call(tmp_path):
    x, y = _data()

    class Interrupt(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            if batch + 1 == 6:
                raise KeyboardInterrupt

    out = str(tmp_path)
    run = _run(out, checkpoint_every=4, callbacks=(Interrupt(),))
    with pytest.raises(KeyboardInterrupt):
        # Calls of 2 steps (10 = 5 × 2): the checkpoint at step 4 records 4 steps.
        fit(run, _model(steps_per_execution=4), x, y, batch_size=4, verbose=0)
    ((step, path),) = list_checkpoints(os.path.join(out, "backup"))
    with open(os.path.join(path, "progress.json")) as f:
        assert json.load(f)["global_step"] == step == 4


def test_set_peak_learning_rate_keeps_a_schedules_shape():
    warm = keras.optimizers.schedules.CosineDecay(
        0.0, decay_steps=100, warmup_target=2e-3, warmup_steps=10
    )
    optimizer = keras.optimizers.Adam(warm)
    assert peak_learning_rate(optimizer) == pytest.approx(2e-3)
    set_peak_learning_rate(optimizer, 1e-3)
    assert isinstance(optimizer._learning_rate, ScaledSchedule)
    assert peak_learning_rate(optimizer) == pytest.approx(1e-3)
    for step in (0, 5, 10, 60):
        assert float(optimizer._learning_rate(step)) == pytest.approx(float(warm(step)) / 2)
    set_peak_learning_rate(optimizer, 4e-3)  # scales the original, not the scaled one
    assert peak_learning_rate(optimizer) == pytest.approx(4e-3)
    config = keras.optimizers.schedules.serialize(optimizer._learning_rate)
    again = keras.optimizers.schedules.deserialize(config)
    assert float(again(10)) == pytest.approx(4e-3)
    constant = keras.optimizers.SGD(0.1)
    set_peak_learning_rate(constant, 0.02)
    assert peak_learning_rate(constant) == pytest.approx(0.02)
    with pytest.raises(ValueError, match="--learning-rate must be a positive number"):
        set_peak_learning_rate(constant, -1.0)


# -- the best epoch, --patience and --minutes ---------------------------------------------------


class _Weights(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.by_epoch = []

    def on_epoch_end(self, epoch, logs=None):
        self.by_epoch.append([w.copy() for w in self.model.get_weights()])


def test_patience_stops_and_the_best_epochs_weights_become_the_model(tmp_path):
    x, y = _data()
    # The held-out targets are the opposite function: the held-out loss is best after epoch 1
    # and grows as the model learns the training one.
    out = str(tmp_path)
    seen = _Weights()
    run = _run(out, checkpoint_every=None, callbacks=(seen,), patience=2)
    run.epochs = 10
    model = _model(rate=0.05)
    history = fit(run, model, x, y, batch_size=4, verbose=0, validation_data=(x, -y))
    assert len(history.epoch) == 3  # epoch 1 best, then 2 without improvement
    assert run.record["best_epoch"] == 1 and run.record["ended_by"] == "patience"
    assert run.record["best_val_loss"] == pytest.approx(history.history["val_loss"][0])
    for kept, best in zip(model.get_weights(), seen.by_epoch[0]):
        np.testing.assert_allclose(kept, best)
    saved = keras.saving.load_model(os.path.join(out, "model.keras"))
    for kept, best in zip(saved.get_weights(), seen.by_epoch[0]):
        np.testing.assert_allclose(kept, best)


def test_the_best_epoch_survives_a_resume(tmp_path):
    x, y = _data()
    out = str(tmp_path)

    class Interrupt(keras.callbacks.Callback):
        def __init__(self):
            super().__init__()
            self.epoch = 0

        def on_epoch_begin(self, epoch, logs=None):
            self.epoch = epoch

        def on_train_batch_end(self, batch, logs=None):
            if (self.epoch, batch + 1) == (2, 5):
                raise KeyboardInterrupt

    run = _run(out, checkpoint_every=None, callbacks=(Interrupt(),))
    with pytest.raises(KeyboardInterrupt):
        fit(run, _model(rate=0.05), x, y, batch_size=4, verbose=0, validation_data=(x, -y))
    _, path = list_checkpoints(os.path.join(out, "backup"))[-1]  # epoch 2's end
    with open(os.path.join(path, "progress.json")) as f:
        state = json.load(f)["state"]
    assert state["best_epoch"] == 1 and state["epochs_since_best"] == 1
    run = _run(out, checkpoint_every=None, patience=2)
    run.epochs = 10
    history = fit(run, _model(rate=0.05), x, y, batch_size=4, verbose=0, validation_data=(x, -y))
    assert history.epoch == [2]  # the resumed epoch 3 is the second without improvement
    assert run.record["best_epoch"] == 1 and run.record["ended_by"] == "patience"


def test_minutes_end_the_run_at_a_checkpoint_and_keep_the_model(tmp_path):
    x, y = _data()
    out = str(tmp_path)
    steps = _Steps()
    run = _run(out, checkpoint_every=4, callbacks=(steps,), minutes=1e-9)
    fit(run, _model(), x, y, batch_size=4, verbose=0)
    assert len(steps.seen) == 4  # the first checkpoint boundary
    assert run.record["ended_by"] == "minutes" and run.record["training_seconds"] >= 0
    assert os.path.isfile(os.path.join(out, "model.keras"))
    assert not os.path.exists(os.path.join(out, "backup"))


def test_training_time_is_counted_across_resumes(tmp_path):
    from keras_adl.training.checkpoint import StepCheckpoint, read_progress

    x, y = _data()
    out = str(tmp_path)
    run = _run(out, checkpoint_every=None, callbacks=(_Poison(25),))
    with pytest.raises(RecipeError):
        fit(run, _model(), x, y, batch_size=4, verbose=0)
    checkpoint = StepCheckpoint(os.path.join(out, "backup"))
    first = read_progress(checkpoint.latest())["state"]["elapsed"]
    assert first > 0
    model = _model()
    checkpoint.restore(model)
    assert checkpoint.elapsed() == pytest.approx(first)
    checkpoint.set_model(model)
    checkpoint.on_train_begin()
    checkpoint.on_train_end()
    assert checkpoint.elapsed() >= first


def test_patience_needs_a_held_out_split_and_stopping_values_are_checked():
    from keras_adl.recipes import check_run_options, find

    _, word2vec, _ = find("word2vec")
    with pytest.raises(RecipeError, match="'word2vec' has no held-out split; --minutes"):
        check_run_options(word2vec, patience=2)
    _, dates, _ = find("dates")
    check_run_options(dates, 1e-3, 2, 30.0)
    with pytest.raises(RecipeError, match="--patience must be a positive integer"):
        check_run_options(dates, patience=0)
    with pytest.raises(RecipeError, match="--minutes must be a positive number"):
        check_run_options(dates, minutes=-1)
    with pytest.raises(RecipeError, match="--learning-rate must be a positive number"):
        check_run_options(dates, learning_rate=float("nan"))


class _InterruptAt(keras.callbacks.Callback):
    def __init__(self, batch):
        super().__init__()
        self.batch = batch

    def on_train_batch_end(self, batch, logs=None):
        if batch + 1 == self.batch:
            raise KeyboardInterrupt


class _Clock:
    """A stand-in for the run's `StepCheckpoint`: its training time is set by hand."""

    def __init__(self):
        self.seconds, self.global_step, self.state = 0.0, 0, {}

    def elapsed(self):
        return self.seconds


def test_minutes_decay_a_constant_rate_linearly_to_zero_on_the_chiefs_clock():
    from keras_adl.training.budget import TimeBudget

    model, clock, shared = _model(rate=0.02), _Clock(), []

    def chief(milliseconds):  # the collective: every worker gets the chief's value
        shared.append(milliseconds)
        return 15_000

    budget = TimeBudget(1.0, clock, every=None, anneal_from=0.02, share=chief)
    budget.set_model(model)
    budget.on_train_begin()  # a resumed run starts at the rate its time gives: 15 s of 60
    assert float(model.optimizer.learning_rate) == pytest.approx(0.015)
    clock.seconds = 45.0
    budget.share = lambda milliseconds: milliseconds
    budget.on_epoch_end(0)
    assert float(model.optimizer.learning_rate) == pytest.approx(0.005) and not budget.stopped
    clock.seconds = 61.0
    budget.on_epoch_end(1)
    assert float(model.optimizer.learning_rate) == 0.0 and budget.stopped
    assert shared == [0]  # what this worker's clock said, before the chief's replaced it


def _decaying(run):
    """``run`` of a task whose --minutes decay the rate (``budget_decay``)."""
    run.budget_decay = True
    return run


class _Ticking:
    """Stands in for the `time` module of the checkpoints: each reading 10 ms after the last, so
    these tiny fits spend a little of a one-minute budget and never all of it, however slow the
    machine."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self):
        self.now += 0.01
        return self.now


def test_a_minutes_run_records_its_peak_and_resumes_from_it(tmp_path, monkeypatch):
    from keras_adl.training import checkpoint

    monkeypatch.setattr(checkpoint, "time", _Ticking())
    x, y = _data()
    out, peak = str(tmp_path), float(np.float32(0.02))
    run = _run(out, checkpoint_every=4, callbacks=(_InterruptAt(6),), minutes=1.0)
    model = _model(rate=0.02)
    with pytest.raises(KeyboardInterrupt):
        fit(_decaying(run), model, x, y, batch_size=4, verbose=0)
    assert 0 < float(model.optimizer.learning_rate) < peak  # decayed a little
    run = _run(out, checkpoint_every=None, minutes=1.0)
    resumed = _model(rate=0.02)
    fit(_decaying(run), resumed, x, y, batch_size=4, verbose=0)
    # The checkpoint holds a decayed rate; the peak came back from its state.
    assert run.record["learning_rate"] == peak
    assert run.record["learning_rate_schedule"] == "linear to 0 over --minutes"
    assert 0 < float(resumed.optimizer.learning_rate) < peak
    # Resumed without --minutes: the recorded peak, not the decayed rate.
    run = _run(out, checkpoint_every=4, callbacks=(_InterruptAt(6),), minutes=1.0)
    run.epochs = 5
    with pytest.raises(KeyboardInterrupt):
        fit(_decaying(run), _model(rate=0.02), x, y, batch_size=4, verbose=0)
    run = _run(out, checkpoint_every=None)
    run.epochs = 5
    plain = _model(rate=0.02)
    fit(_decaying(run), plain, x, y, batch_size=4, verbose=0)
    assert float(plain.optimizer.learning_rate) == peak and run.record["learning_rate"] == peak
    # A task without budget_decay, or an optimizer with a schedule of its own: no decay.
    constant = _run(str(tmp_path / "c"), checkpoint_every=None, minutes=1.0)
    model = _model(rate=0.02)
    fit(constant, model, x, y, batch_size=4, verbose=0)
    assert float(model.optimizer.learning_rate) == peak
    assert "learning_rate_schedule" not in constant.record
    scheduled = _run(str(tmp_path / "s"), checkpoint_every=None, minutes=1.0)
    model = _model(rate=keras.optimizers.schedules.ExponentialDecay(0.02, 10, 0.5))
    fit(_decaying(scheduled), model, x, y, batch_size=4, verbose=0)
    assert "learning_rate_schedule" not in scheduled.record

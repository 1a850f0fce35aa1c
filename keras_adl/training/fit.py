"""The resumable fit: one function owns the loop every family's ``train`` runs.

`fit` turns the data into an endless stream of global batches (`keras_adl.training.data`),
restores the last checkpoint (`keras_adl.training.checkpoint`), agrees with the other workers
on where to resume (`keras_adl.training.run.Run`), trains with the divergence check, the
best-epoch keeping and the time budget (`keras_adl.training.divergence`,
`keras_adl.training.budget`), and saves ``model.keras``.
"""

import os

import keras

from keras_adl.training.budget import BestEpoch, TimeBudget
from keras_adl.training.checkpoint import StepCheckpoint
from keras_adl.training.data import batch_stream, split_stream
from keras_adl.training.divergence import (
    StopOnNonFinite,
    peak_learning_rate,
    set_peak_learning_rate,
)
from keras_adl.training.run import save_model
from keras_adl.training.rundir import BACKUP_DIR, MODEL_FILE, RecipeError

__all__ = ["fit", "keep_best", "set_learning_rate", "divergence_message", "steps_per_call"]


def fit(run, model, x, y=None, steps_per_epoch=None, learning_rate_scale=1.0, **fit_kwargs):
    """``model.fit`` on a resumable data stream, with an atomic checkpoint every
    ``run.checkpoint_every`` steps and at every epoch's end, then ``model.keras`` saved.

    The data (arrays with ``batch_size`` and ``shuffle``, a ``tf.data.Dataset`` or a
    ``PyDataset``) becomes one endless stream of global batches
    (`keras_adl.training.data.batch_stream`). An interrupted run resumes from its last
    checkpoint, mid-epoch too: same epoch, step, weights, optimizer state and position in the
    data stream (the interrupted epoch runs only its remaining steps, on the batches an
    uninterrupted run would have seen). Under ``MultiWorkerMirroredStrategy`` every worker runs
    this, only the chief writes checkpoints and ``model.keras``, and the progress bar shows on
    the chief only.

    An epoch runs exactly its steps, whatever the model's ``steps_per_execution``
    (`steps_per_call`). The run stops at the first non-finite loss (`StopOnNonFinite`: nothing
    is saved after it) with a `RecipeError` naming ``--learning-rate``; the run's
    ``learning_rate`` replaces the optimizer's peak rate after the restore. With
    ``validation_data`` the held-out loss is watched every epoch (`BestEpoch`): the best epoch's
    weights become the model, and ``run.patience`` stops the run early; ``run.minutes`` bounds
    the training time (`TimeBudget`), and with ``run.budget_decay`` a constant learning rate
    then decays linearly to zero over it. ``run.json`` records why training ended
    (``ended_by``) and the best epoch.

    Args:
        run: the `keras_adl.training.run.Run`.
        model: a compiled model, built in the run's strategy scope (`Run.build`).
        x: the data, as `batch_stream` takes it.
        y: the targets, as `batch_stream` takes them.
        steps_per_epoch: as `batch_stream` takes it.
        learning_rate_scale: the optimizer's rate is this many times the rate ``run.json``
            records and ``--learning-rate`` gives (word2vec's SGD: a per-example rate).
        **fit_kwargs: ``batch_size``, ``shuffle`` (arrays) and ``model.fit``'s own arguments.

    Returns:
        The Keras ``History`` of the last ``model.fit`` call.

    Raises:
        RecipeError: the workers of a multi-worker run see different checkpoints, or the run
            diverged.
    """
    steps, stream = batch_stream(
        x,
        y,
        batch_size=fit_kwargs.pop("batch_size", None),
        steps_per_epoch=steps_per_epoch,
        shuffle=fit_kwargs.pop("shuffle", False),
        seed=run.seed,
    )
    fit_kwargs["shuffle"] = False  # the stream is shuffled already
    directory = os.path.join(run.run_dir or run.out, BACKUP_DIR)
    checkpoint = StepCheckpoint(
        directory, run.checkpoint_every, keep=run.keep_checkpoints, write=run.is_chief
    )
    # Before any collective that only a resuming worker runs (restoring builds the optimizer):
    # a worker that cannot read the chief's checkpoints fails in one line.
    run.check_workers_agree("the checkpoint step to resume from", checkpoint.resume_point()[2])
    position = checkpoint.restore(model)
    set_learning_rate(run, model, learning_rate_scale)  # after the restore, which loads it
    if not run.is_chief:
        fit_kwargs["verbose"] = 0
    stop, best, budget, callbacks = _fit_callbacks(run, model, checkpoint, directory, position)
    history = _fit_epochs(run, model, stream, steps, position, checkpoint, callbacks, fit_kwargs)
    if stop.diverged:
        raise RecipeError(divergence_message(run, checkpoint, *stop.diverged))
    keep_best(run, model, best, budget)
    save_model(model, run.path(MODEL_FILE))
    checkpoint.remove()
    return history


def _fit_epochs(run, model, stream, steps, position, checkpoint, callbacks, fit_kwargs):
    """The ``model.fit`` calls of `fit` from the restored ``(epoch, step, global_step)``: the
    rest of an interrupted epoch first, then the remaining epochs."""
    epoch, step, global_step = position
    stop = callbacks[0]
    history = None
    data = stream(global_step)
    per_call = getattr(model, "steps_per_execution", 1) or 1
    if step and epoch < run.epochs:
        print(f"resuming epoch {epoch + 1} at step {step + 1} of {steps}")
        part = split_stream(data)
        data = part(None)
        _set_steps_per_call(model, steps_per_call(steps - step, per_call))
        history = model.fit(
            part(steps - step),
            epochs=epoch + 1,
            initial_epoch=epoch,
            steps_per_epoch=steps - step,
            callbacks=callbacks,
            **fit_kwargs,
        )
        epoch, global_step = epoch + 1, global_step + steps - step
    elif epoch:
        print(f"resuming after epoch {epoch}")
    if epoch < run.epochs and not (stop.diverged or getattr(model, "stop_training", False)):
        checkpoint.start(epoch, 0, global_step)
        _set_steps_per_call(model, steps_per_call(steps, per_call))
        history = model.fit(
            data,
            epochs=run.epochs,
            initial_epoch=epoch,
            steps_per_epoch=steps,
            callbacks=callbacks,
            **fit_kwargs,
        )
    return history


def keep_best(run, model, best, budget):
    """Makes the best epoch's weights the run's model (when the held-out loss was watched) and
    records in ``run.json`` why training ended and what was kept."""
    if best.best_epoch is not None:
        best.restore_best(model)
        run.record.update(
            best_epoch=best.best_epoch,
            best_val_loss=best.checkpoint.state["best_value"],
        )
    ended = "epochs"
    if budget is not None and budget.stopped:
        ended = "minutes"
    elif best.stopped:
        ended = "patience"
    run.record.update(ended_by=ended, training_seconds=round(best.checkpoint.elapsed(), 1))
    if ended != "epochs":
        kept = ""
        if best.best_epoch is not None:
            kept = (
                f"; keeping epoch {best.best_epoch} (the best held-out loss, "
                f"{best.checkpoint.state['best_value']:.4g})"
            )
        print(f"training ended by --{ended}{kept}")


def set_learning_rate(run, model, scale=1.0):
    """Gives ``model``'s optimizer the run's ``--learning-rate`` (times ``scale``) as its peak
    rate (a schedule keeps its shape); the rate used, divided by ``scale``, is recorded in
    ``run.json``."""
    if run.learning_rate is not None:
        set_peak_learning_rate(model.optimizer, run.learning_rate * scale)
    run.record["learning_rate"] = peak_learning_rate(model.optimizer) / scale


def divergence_message(run, checkpoint, step, value, last_finite):
    """The one line that stops a diverged run."""
    last = "none" if last_finite is None else f"{last_finite:.4g}"
    rate = run.record.get("learning_rate")
    if checkpoint.latest():
        resume = (
            f"re-running with a lower one resumes from the last finite checkpoint in "
            f"{checkpoint.directory} (--overwrite starts afresh)"
        )
    else:
        resume = "no finite checkpoint was written, so a re-run starts afresh"
    return (
        f"{run.task}: training diverged at step {step}: the loss became {value} (last finite "
        f"loss: {last}); nothing was saved from the diverged model; try a lower "
        f"--learning-rate (this run used {rate:.3g}); {resume}"
    )


def steps_per_call(steps, most):
    """Steps per compiled call for an epoch of ``steps``: the largest divisor of ``steps`` not
    above ``most``, so that no call runs past the epoch's end (Keras would run a whole call and
    the epoch would hold more steps than asked)."""
    most = max(1, min(int(most), steps))
    return next(d for d in range(most, 0, -1) if steps % d == 0)


def _fit_callbacks(run, model, checkpoint, directory, position):
    """``(stop, best, budget, callbacks)`` of `fit`, in the order they must run: the divergence
    check first (it freezes the checkpoint), the best epoch before the checkpoint (whose
    epoch-end save records it), the time budget after (it checks where a checkpoint was just
    written); ``budget`` is ``None`` without ``run.minutes``."""
    stop = StopOnNonFinite(position[2], checkpoint)
    best = BestEpoch(checkpoint, directory, run.patience, write=run.is_chief)
    callbacks = [stop, best, checkpoint]
    budget = None
    peak = _budget_peak(run, model, checkpoint)
    if run.minutes:
        budget = TimeBudget(
            run.minutes,
            checkpoint,
            run.checkpoint_every,
            run.chief_decides,
            anneal_from=peak,
            share=run.chief_value,
        )
        callbacks.append(budget)
    return stop, best, budget, [*callbacks, *run.callbacks]


def _budget_peak(run, model, checkpoint):
    """The peak rate a ``--minutes`` run with ``budget_decay`` decays from (`TimeBudget`), or
    ``None`` (no ``--minutes``, no decay, or an optimizer following a schedule of its own):
    ``--learning-rate`` if given, else the peak a resumed run recorded (the optimizer holds the
    decayed rate), else the optimizer's rate. A run resumed without the decay goes on from the
    recorded peak, not from the decayed rate."""
    optimizer = getattr(model.optimizer, "inner_optimizer", model.optimizer)
    if isinstance(optimizer._learning_rate, keras.optimizers.schedules.LearningRateSchedule):
        return None
    peak = run.learning_rate or checkpoint.state.get("peak_learning_rate")
    peak = float(peak or peak_learning_rate(optimizer))
    if not (run.budget_decay and run.minutes):
        if "peak_learning_rate" in checkpoint.state and run.learning_rate is None:
            optimizer.learning_rate = peak
            run.record["learning_rate"] = peak
        return None
    checkpoint.state["peak_learning_rate"] = peak
    run.record.update(learning_rate=peak, learning_rate_schedule="linear to 0 over --minutes")
    return peak


def _set_steps_per_call(model, count):
    if getattr(model, "steps_per_execution", 1) != count:
        model.steps_per_execution = count
        model.train_function = None  # traced with the old count

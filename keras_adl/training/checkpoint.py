"""`StepCheckpoint`: atomic checkpoints every N steps and at every epoch's end, kept to the last
k, that record where in the data stream training stopped.

A checkpoint is a directory ``ckpt-<global step>`` holding the model's weights with the
optimizer's state (``model.weights.h5``) and ``progress.json`` (``epoch``: the epoch the next
step belongs to; ``step``: steps of that epoch already done; ``global_step``: batches consumed
since training began; ``optimizer``: the optimizer's class, which a resume must match, and
every one of its saved variables must load; ``state``: the training time so far and what the
callbacks of `keras_adl.training.budget` keep, such as the best epoch's held-out loss). It is
written under a temporary name in the same directory and renamed into place, so a checkpoint is
either complete or absent, whenever the writer is killed.
`keras_adl.training.fit.fit` restores the latest one and restarts the data stream at its
``global_step``.

Under ``MultiWorkerMirroredStrategy`` only the chief keeps checkpoints (the weights are the
same on every worker); the others save too, to a temporary directory deleted at once, because
saving reads variables whose values are synchronised across workers, and every worker must run
the same collective operations in the same order. Every worker reads the chief's directory on
resume, so it must be on storage they all see (the usual ``tf.distribute`` rule), and
`Recipe.fit` checks that they agree.
"""

import json
import os
import shutil
import tempfile
import time
import warnings

import keras

from keras_adl.training.divergence import non_finite_variables

__all__ = ["StepCheckpoint", "list_checkpoints", "read_progress"]


PREFIX = "ckpt-"
WEIGHTS_FILE = "model.weights.h5"
PROGRESS_FILE = "progress.json"
_PARTIAL = ".partial-"


def list_checkpoints(directory):
    """The complete checkpoints in ``directory``, oldest first: ``[(global_step, path)]``."""
    if not os.path.isdir(directory):
        return []
    found = []
    for name in os.listdir(directory):
        path = os.path.join(directory, name)
        if name.startswith(PREFIX) and os.path.isfile(os.path.join(path, PROGRESS_FILE)):
            try:
                found.append((int(name[len(PREFIX) :]), path))
            except ValueError:
                continue
    return sorted(found)


def read_progress(path):
    """A checkpoint's ``{"epoch", "step", "global_step", "optimizer"}`` (no ``"optimizer"`` in
    checkpoints written before the optimizer's name was recorded)."""
    with open(os.path.join(path, PROGRESS_FILE)) as f:
        return json.load(f)


def _optimizer_name(model):
    """The class of ``model``'s optimizer (the wrapped one under mixed precision)."""
    optimizer = getattr(model, "optimizer", None)
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)
    return None if optimizer is None else type(optimizer).__name__


def _fsync(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class StepCheckpoint(keras.callbacks.Callback):
    """Checkpoints the model and optimizer every ``every`` steps and at every epoch's end.

    Args:
        directory: where the checkpoints live (removed by `remove` after a finished run).
        every: steps between mid-epoch checkpoints; ``None`` for epoch ends only.
        keep: complete checkpoints kept (the oldest are deleted); at least 1.
        write: ``False`` on the workers that only read (non-chief workers): they save to a
            temporary directory, deleted at once (see the module's docstring).
    """

    def __init__(self, directory, every=None, keep=2, write=True):
        super().__init__()
        if every is not None and (not isinstance(every, int) or every <= 0):
            raise ValueError(
                f"StepCheckpoint: `every` must be a positive integer or None; received {every!r}."
            )
        if not isinstance(keep, int) or keep < 1:
            raise ValueError(f"StepCheckpoint: `keep` must be an integer >= 1; received {keep!r}.")
        self.directory, self.every, self.keep, self.write = directory, every, keep, write
        self.epoch = self.step = self.global_step = 0
        self.frozen = False  # set when the run diverged: nothing is saved after that
        self.state = {}  # the callbacks' own state, saved in progress.json (training/budget.py)
        self._seconds_before = 0.0  # training time of the run before this ``fit`` began
        self._started = None
        self._done = 0  # steps of the current epoch that Keras has reported in this ``fit``
        if write and os.path.isdir(directory):  # a writer killed mid-save leaves a partial dir
            for name in os.listdir(directory):
                if name.startswith(_PARTIAL):
                    shutil.rmtree(os.path.join(directory, name), ignore_errors=True)

    def latest(self):
        """Path of the newest complete checkpoint, or ``None``."""
        found = list_checkpoints(self.directory)
        return found[-1][1] if found else None

    def resume_point(self):
        """``(epoch, step, global_step)`` of the newest checkpoint (zeros without one)."""
        path = self.latest()
        if path is None:
            return 0, 0, 0
        progress = read_progress(path)
        return int(progress["epoch"]), int(progress["step"]), int(progress["global_step"])

    def restore(self, model):
        """Loads the newest checkpoint's weights and optimizer state into ``model`` (built and
        compiled, under the strategy it was built with) and continues its count from there.

        Args:
            model: the model.

        Returns:
            ``(epoch, step, global_step)``, zeros when there is no checkpoint.
        """
        path = self.latest()
        if path is None:
            return 0, 0, 0
        saved, current = read_progress(path).get("optimizer"), _optimizer_name(model)
        if saved is not None and saved != current:  # Keras would skip or misplace its state
            raise ValueError(
                f"the checkpoint {path} holds the state of a {saved} optimizer, and this model "
                f"is compiled with {current} (a run written with other settings, or by another "
                f"version?); start the run afresh (keras-adl train --overwrite, or another --out)"
            )
        optimizer = getattr(model, "optimizer", None)
        if optimizer is not None and not optimizer.built:
            with model.distribute_strategy.scope():
                optimizer.build(model.trainable_variables)
        afresh = (
            "(written with other settings, or by another version?); start the run afresh "
            "(keras-adl train --overwrite, or another --out)"
        )
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                model.load_weights(os.path.join(path, WEIGHTS_FILE))
            except ValueError as error:
                raise ValueError(
                    f"the checkpoint {path} does not fit this model and optimizer {afresh}. "
                    f"Keras said: {error}"
                ) from error
        for warning in caught:
            # Keras 3 only warns when an optimizer's variables do not match in number (the
            # same class configured otherwise, e.g. RMSprop with and without momentum).
            if "Skipping variable loading" in str(warning.message):
                raise ValueError(
                    f"the checkpoint {path} does not fit this model and optimizer {afresh}. "
                    f"Keras said: {warning.message}"
                )
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
        self.state = dict(read_progress(path).get("state", {}))
        self._seconds_before = float(self.state.get("elapsed", 0.0))
        self.start(*self.resume_point())
        return self.epoch, self.step, self.global_step

    def elapsed(self):
        """Seconds of training in this run so far, across resumes (up to the last checkpoint
        of an interrupted process)."""
        running = time.monotonic() - self._started if self._started is not None else 0.0
        return self._seconds_before + running

    def on_train_begin(self, logs=None):
        self._started = time.monotonic()

    def on_train_end(self, logs=None):
        self._seconds_before = self.elapsed()
        self._started = None

    def start(self, epoch, step, global_step):
        """The next ``fit`` call begins at ``step`` of ``epoch``, ``global_step`` batches in."""
        self.epoch, self.step, self.global_step = epoch, step, global_step

    def on_epoch_begin(self, epoch, logs=None):
        if epoch != self.epoch:
            self.epoch, self.step = epoch, 0
        self._done = 0

    def on_train_batch_end(self, batch, logs=None):
        # Keras calls this once per compiled call of ``steps_per_execution`` steps, with the
        # index of the call's last step.
        ran = max(batch + 1 - self._done, 1)
        self._done = batch + 1
        before = self.global_step
        self.step += ran
        self.global_step += ran
        last_of_epoch = batch + 1 >= self.params.get("steps")  # the epoch's end saves
        if self.every and self.global_step // self.every > before // self.every:
            if not last_of_epoch:
                self.save()

    def on_epoch_end(self, epoch, logs=None):
        steps = self.params.get("steps")
        if self.model.stop_training and steps and self._done < steps:
            self.save()  # stopped inside the epoch (a time budget): resume at this step
            return
        self.epoch, self.step = epoch + 1, 0
        self.save()

    def save(self):
        """Writes a checkpoint of the current state (atomically), then prunes to ``keep``;
        nothing once `frozen`, or while a weight or optimizer value is not finite."""
        if self.frozen or non_finite_variables(self.model):
            return
        if not self.write:
            scratch = tempfile.mkdtemp(prefix="keras-adl-checkpoint-")
            try:
                self.model.save_weights(os.path.join(scratch, WEIGHTS_FILE))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
            return
        os.makedirs(self.directory, exist_ok=True)
        partial = tempfile.mkdtemp(prefix=_PARTIAL, dir=self.directory)
        weights = os.path.join(partial, WEIGHTS_FILE)
        self.model.save_weights(weights)
        progress = os.path.join(partial, PROGRESS_FILE)
        with open(progress, "w") as f:
            json.dump(
                {
                    "epoch": self.epoch,
                    "step": self.step,
                    "global_step": self.global_step,
                    "optimizer": _optimizer_name(self.model),
                    "state": {**self.state, "elapsed": self.elapsed()},
                },
                f,
            )
            f.flush()
            os.fsync(f.fileno())
        _fsync(weights)
        final = os.path.join(self.directory, f"{PREFIX}{self.global_step:09d}")
        if os.path.exists(final):  # the same step saved again (a resumed run): swap it out
            self._delete(final)
        os.replace(partial, final)
        _fsync(self.directory)
        for _, old in list_checkpoints(self.directory)[: -self.keep]:
            self._delete(old)

    def _delete(self, path):
        # Renamed out of the checkpoint namespace first, so no reader sees it half-deleted.
        trash = tempfile.mkdtemp(prefix=_PARTIAL, dir=self.directory)
        os.replace(path, os.path.join(trash, "old"))
        shutil.rmtree(trash, ignore_errors=True)

    def remove(self):
        """Deletes the checkpoints (after a finished run); only a writer does."""
        if self.write:
            shutil.rmtree(self.directory, ignore_errors=True)

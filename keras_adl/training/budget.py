"""Training that keeps its best epoch and knows when to stop: `BestEpoch` and `TimeBudget`.

Both keep their state in the run's `keras_adl.training.checkpoint.StepCheckpoint` (its
``state``, saved in every checkpoint's ``progress.json``), so a resumed run goes on counting
where the interrupted one stopped: the best held-out loss so far and its epoch, the epochs
since, and the training time spent.

Under ``MultiWorkerMirroredStrategy`` every worker runs the same callbacks at the same steps:
the held-out loss Keras logs is already the workers' mean, and the time budget is the chief's
clock, shared by a collective (``decide``) at each check, so every worker stops at the same step.
"""

import math
import os
import shutil
import tempfile

import keras

__all__ = ["BestEpoch", "TimeBudget"]


BEST_WEIGHTS_FILE = "best.weights.h5"


class BestEpoch(keras.callbacks.Callback):
    """Watches ``monitor`` (the held-out loss) at every epoch's end, writes the best epoch's
    weights to ``directory`` and, with ``patience``, stops ``patience`` epochs after the last
    improvement.

    Args:
        checkpoint: the run's `StepCheckpoint` (its ``state`` holds ``best_value``,
            ``best_epoch`` and ``epochs_since_best``).
        directory: where `BEST_WEIGHTS_FILE` is written (the run's checkpoint directory).
        patience: epochs without improvement before stopping (``None``: never stop early).
        monitor: the logged figure, lower is better.
        write: ``False`` on a worker that only reads (it saves to a scratch directory, so that
            every worker runs the same collective reads).

    Attributes:
        stopped: whether patience ended the run.
    """

    def __init__(self, checkpoint, directory, patience=None, monitor="val_loss", write=True):
        super().__init__()
        if patience is not None and (not isinstance(patience, int) or patience < 1):
            raise ValueError(f"--patience must be a positive integer; received {patience!r}")
        self.checkpoint, self.directory = checkpoint, directory
        self.patience, self.monitor, self.write = patience, monitor, write
        self.stopped = False

    @property
    def path(self):
        return os.path.join(self.directory, BEST_WEIGHTS_FILE)

    @property
    def best_epoch(self):
        """The best epoch so far (1-based), or ``None``."""
        return self.checkpoint.state.get("best_epoch")

    def on_epoch_end(self, epoch, logs=None):
        value = (logs or {}).get(self.monitor)
        if value is None or not math.isfinite(float(value)):
            return
        state = self.checkpoint.state
        best = state.get("best_value")
        if best is None or float(value) < best:
            state.update(best_value=float(value), best_epoch=epoch + 1, epochs_since_best=0)
            self._save()
            return
        state["epochs_since_best"] = state.get("epochs_since_best", 0) + 1
        if self.patience and state["epochs_since_best"] >= self.patience:
            self.stopped = True
            self.model.stop_training = True

    def _save(self):
        target = self.directory if self.write else tempfile.mkdtemp(prefix="keras-adl-best-")
        os.makedirs(target, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=".partial-", suffix=".weights.h5", dir=target)
        os.close(fd)
        try:
            self.model.save_weights(partial, overwrite=True)
            if self.write:
                os.replace(partial, self.path)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
            if not self.write:
                shutil.rmtree(target, ignore_errors=True)

    def restore_best(self, model):
        """Loads the best epoch's weights into ``model``; returns whether it did."""
        if self.best_epoch is None or not os.path.isfile(self.path):
            return False
        model.load_weights(self.path)
        return True


class TimeBudget(keras.callbacks.Callback):
    """Stops training once ``minutes`` of training time are spent, counted across resumes,
    checked where the checkpoint saves (every ``every`` steps and at every epoch's end), so the
    run stops where a checkpoint stands.

    With ``anneal_from`` (a peak learning rate) the optimizer's constant rate also decays
    linearly from that peak to zero over the budget, in steps: it is set at the same checks
    (and when training begins, so a resumed run goes on from its rate): the schedule of budgeted
    training (Li, Yumer & Ramanan 2020, "Budgeted Training"), which the run's length in steps,
    unknown in advance, cannot give.

    Args:
        minutes: the budget.
        checkpoint: the run's `StepCheckpoint` (its ``state["elapsed"]`` holds the seconds
            spent before this process).
        every: the checkpoint's steps between saves (``None``: epoch ends only).
        decide: ``flag -> flag`` shared by every worker (the chief's); identity on one machine.
        anneal_from: the peak rate to decay from, or ``None`` to leave the rate alone.
        share: ``int -> int`` shared by every worker (the chief's), for the elapsed time the
            rate follows; identity on one machine.

    Attributes:
        stopped: whether the budget ended the run.
    """

    def __init__(self, minutes, checkpoint, every=None, decide=None, anneal_from=None, share=None):
        super().__init__()
        if not (isinstance(minutes, (int, float)) and 0 < minutes < math.inf):
            raise ValueError(f"--minutes must be a positive number; received {minutes!r}")
        self.seconds = 60.0 * minutes
        self.checkpoint, self.every = checkpoint, every
        self.decide = decide or (lambda flag: flag)
        self.share = share or (lambda value: value)
        self.anneal_from = None if anneal_from is None else float(anneal_from)
        self.stopped = False
        self._seen = 0  # the checkpoint's global step at the last batch end

    def on_train_begin(self, logs=None):
        self._seen = self.checkpoint.global_step
        self._anneal()

    def on_train_batch_end(self, batch, logs=None):
        step = self.checkpoint.global_step  # counted by the checkpoint, which runs first
        if self.every and step // self.every > self._seen // self.every:
            self._check()
        self._seen = step

    def on_epoch_end(self, epoch, logs=None):
        if not self.model.stop_training:
            self._check()

    def rate_at(self, seconds):
        """The annealed rate after ``seconds`` of training."""
        return self.anneal_from * max(0.0, 1.0 - seconds / self.seconds)

    def _anneal(self):
        if self.anneal_from is None:
            return
        milliseconds = self.share(int(1000 * self.checkpoint.elapsed()))  # the chief's clock
        optimizer = getattr(self.model.optimizer, "inner_optimizer", self.model.optimizer)
        optimizer.learning_rate = self.rate_at(milliseconds / 1000.0)

    def _check(self):
        self._anneal()
        if self.decide(self.checkpoint.elapsed() >= self.seconds):
            self.stopped = True
            self.model.stop_training = True

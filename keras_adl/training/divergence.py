"""Runs that diverge stop and say so; nothing non-finite is saved; the learning rate can be set.

- `StopOnNonFinite`: a callback that stops ``fit`` at the first non-finite loss and records
  the step, the value and the last finite loss (`keras_adl.training.fit.fit` turns that
  into one line naming ``--learning-rate``).
- `non_finite_variables`: the names of a model's variables holding NaN or infinity (the
  checkpoints, ``model.keras`` and the exports refuse such a model).
- `peak_learning_rate` and `set_peak_learning_rate`: the largest rate an optimizer's schedule
  reaches, and a new one for it with the schedule's shape kept (`ScaledSchedule`), which is
  what ``keras-adl train --learning-rate`` sets.
"""

import math

import keras
import numpy as np

__all__ = [
    "StopOnNonFinite",
    "check_finite",
    "non_finite_variables",
    "ScaledSchedule",
    "peak_learning_rate",
    "set_peak_learning_rate",
]


# Steps at which a schedule without a known peak is probed (warm-ups end within these).
_PROBE_STEPS = (0, *(2**k for k in range(25)))


def non_finite_variables(model):
    """The paths of ``model``'s variables (weights and optimizer state) that hold a NaN or an
    infinity; empty when every value is finite."""
    variables = list(model.weights)
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and getattr(optimizer, "built", False):
        variables += list(optimizer.variables)
    bad = []
    for variable in variables:
        value = keras.ops.convert_to_numpy(variable.value)
        if np.issubdtype(value.dtype, np.floating) and not np.isfinite(value).all():
            bad.append(variable.path)
    return bad


def check_finite(model, what):
    """Raises `ValueError` naming ``what`` and the first variables if ``model`` holds a
    non-finite value (a diverged model is never saved or exported)."""
    bad = non_finite_variables(model)
    if bad:
        shown = ", ".join(bad[:3]) + (f" and {len(bad) - 3} more" if len(bad) > 3 else "")
        raise ValueError(
            f"refusing to {what}: the model holds NaN or infinite values ({shown}); it diverged "
            f"in training: train it again with a lower --learning-rate"
        )


@keras.saving.register_keras_serializable(package="keras_adl")
class ScaledSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """``factor`` times another schedule: the same shape (warm-up, decay) at another rate.

    Args:
        schedule: a ``LearningRateSchedule`` (or its serialized config).
        factor: the positive multiplier.

    Example:

    >>> inner = keras.optimizers.schedules.PolynomialDecay(1.0, 10, end_learning_rate=0.0)
    >>> float(ScaledSchedule(inner, 0.5)(5))
    0.25
    """

    def __init__(self, schedule, factor):
        if isinstance(schedule, dict):
            schedule = keras.optimizers.schedules.deserialize(schedule)
        if not isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
            raise TypeError(
                f"ScaledSchedule: `schedule` must be a LearningRateSchedule; received "
                f"{type(schedule).__name__}."
            )
        if not factor > 0:
            raise ValueError(f"ScaledSchedule: `factor` must be positive; received {factor!r}.")
        self.schedule, self.factor = schedule, float(factor)

    def __call__(self, step):
        return self.schedule(step) * self.factor

    def get_config(self):
        return {
            "schedule": keras.optimizers.schedules.serialize(self.schedule),
            "factor": self.factor,
        }


def _schedule_peak(schedule):
    if isinstance(schedule, ScaledSchedule):
        return schedule.factor * _schedule_peak(schedule.schedule)
    for name in ("warmup_target", "initial_learning_rate"):
        value = getattr(schedule, name, None)
        if value is not None:
            return float(value)
    return max(float(keras.ops.convert_to_numpy(schedule(step))) for step in _PROBE_STEPS)


def peak_learning_rate(optimizer):
    """The largest learning rate ``optimizer`` uses: its constant rate, or its schedule's peak
    (a warm-up's target, a decay's start)."""
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)  # LossScaleOptimizer
    rate = optimizer._learning_rate
    if isinstance(rate, keras.optimizers.schedules.LearningRateSchedule):
        return _schedule_peak(rate)
    return float(keras.ops.convert_to_numpy(optimizer.learning_rate))


def set_peak_learning_rate(optimizer, rate):
    """Makes ``rate`` the peak learning rate of ``optimizer``: a constant rate is replaced, a
    schedule is scaled so that its peak is ``rate`` (its shape is kept).

    Args:
        optimizer: a Keras optimizer.
        rate: the new peak learning rate.

    Raises:
        ValueError: ``rate`` is not a positive finite number.
    """
    if not (isinstance(rate, (int, float)) and 0 < rate < math.inf):
        raise ValueError(f"--learning-rate must be a positive number; received {rate!r}")
    optimizer = getattr(optimizer, "inner_optimizer", optimizer)
    current = optimizer._learning_rate
    if isinstance(current, keras.optimizers.schedules.LearningRateSchedule):
        inner = current.schedule if isinstance(current, ScaledSchedule) else current
        peak = _schedule_peak(inner)
        if not peak > 0:
            raise ValueError(
                f"--learning-rate cannot scale a schedule whose peak is {peak}; it has no rate"
            )
        optimizer._learning_rate = ScaledSchedule(inner, rate / peak)
    else:
        optimizer.learning_rate = rate


class StopOnNonFinite(keras.callbacks.Callback):
    """Stops ``fit`` at the first non-finite training loss.

    Keras reports the running mean of the loss over the epoch, once per compiled call, so the
    first non-finite value is seen at the end of the call in which the model diverged.

    Args:
        first_step: the global step at which this ``fit`` starts (a resumed run's).
        checkpoint: a `keras_adl.training.checkpoint.StepCheckpoint` to freeze when the run
            diverges, so that it saves nothing after that point.

    Attributes:
        diverged: ``None``, or ``(step, value, last_finite)`` once the loss is not finite.
    """

    def __init__(self, first_step=0, checkpoint=None):
        super().__init__()
        self.step = first_step
        self.checkpoint = checkpoint
        self.last_finite = None
        self.diverged = None
        self._done = 0

    def on_epoch_begin(self, epoch, logs=None):
        self._done = 0

    def on_train_batch_end(self, batch, logs=None):
        self.step += max(batch + 1 - self._done, 1)  # one callback per compiled call
        self._done = batch + 1
        loss = (logs or {}).get("loss")
        if loss is None or self.diverged:
            return
        loss = float(loss)
        if math.isfinite(loss):
            self.last_finite = loss
            return
        self.diverged = (self.step, loss, self.last_finite)
        if self.checkpoint is not None:
            self.checkpoint.frozen = True
        self.model.stop_training = True

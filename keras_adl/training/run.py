"""One ``train`` request as every family receives it: its settings, its strategy and the
collectives that keep the workers of a multi-worker run in step."""

import dataclasses
import os

from keras_adl.training.distribute import (
    build_in_scope,
    gather_from_workers,
    get_strategy,
    is_multi_worker,
    worker_info,
)
from keras_adl.training.divergence import check_finite
from keras_adl.training.rundir import (
    BACKUP_DIR,
    CHECKPOINT_EVERY,
    RecipeError,
    replace_atomically,
)

__all__ = ["Run", "save_model"]


@dataclasses.dataclass
class Run:
    """One ``train`` request, as the recipes receive it.

    Attributes:
        task: the task's name (validated).
        model: the model's name (validated).
        epochs: as given or the task's default.
        batch_size: as given or the task's default.
        samples: as given or the task's default.
        out: the run directory.
        options: the task's own option values by ``Option.dest``.
        strategy: a ``tf.distribute`` strategy name or instance.
        callbacks: extra Keras callbacks.
        checkpoint_every: steps between mid-epoch checkpoints (``None``: at epoch ends only).
        record: what ``run.json`` will hold; recipes add their settings and data facts to it.
        jit_compile: compile the train step with XLA (turned off under a distributed
            strategy).
        keep_checkpoints: complete checkpoints kept.
        seed: the seed of the data order (arrays shuffled by `keras_adl.training.fit.fit`).
        run_dir: the run directory ``--out`` when this process writes elsewhere (a non-chief
            worker writes to a temporary ``out`` and reads the chief's checkpoints here).
        learning_rate: the optimizer's peak learning rate instead of the recipe's (a schedule
            keeps its shape); the one setting a resume may change.
        patience: stop when the held-out loss has not improved for this many epochs (runs
            that fit with ``validation_data``, whose best epoch is kept).
        minutes: stop once this much training time is spent (across resumes).
        budget_decay: under ``minutes``, also decay a constant learning rate linearly to zero
            over the budget (the task's ``budget_decay``).
    """

    task: str
    model: str
    epochs: int
    batch_size: int
    samples: int
    out: str
    options: dict = dataclasses.field(default_factory=dict)
    strategy: object = "auto"
    callbacks: tuple = ()
    checkpoint_every: object = CHECKPOINT_EVERY
    record: dict = dataclasses.field(default_factory=dict)
    jit_compile: bool = True
    keep_checkpoints: int = 2
    seed: int = 0
    run_dir: str = None
    learning_rate: float = None
    patience: int = None
    minutes: float = None
    budget_decay: bool = False
    _strategy: object = None

    def get_strategy(self):
        """The resolved ``tf.distribute`` strategy (XLA is turned off under a distributed one:
        it fails under ``MirroredStrategy`` on logical CPUs). Raises `RecipeError` if
        ``batch_size`` (each worker's) is smaller than the strategy's replicas on one worker."""
        if self._strategy is None:
            strategy = get_strategy(self.strategy)
            # ``batch_size`` is each worker's here (`keras_adl.recipes.train` multiplies it
            # by the workers afterwards); every replica needs at least one example per step.
            workers = worker_info(strategy)[1]
            local_replicas = strategy.num_replicas_in_sync // workers
            if self.batch_size < local_replicas:
                raise RecipeError(
                    f"--batch-size {self.batch_size} is smaller than the {local_replicas} "
                    f"replicas of the strategy on this machine: every replica needs at least "
                    f"one example per step; pass a --batch-size of at least {local_replicas}, "
                    f"or --strategy default"
                )
            self._strategy = strategy
            self.jit_compile = (
                self.jit_compile
                and self._strategy.num_replicas_in_sync == 1
                and self.strategy != "multi_worker"
            )
        return self._strategy

    @property
    def is_chief(self):
        """Whether this process writes the run directory (always, on one machine)."""
        return worker_info(self.get_strategy())[2]

    def chief_decides(self, flag):
        """``flag`` as the chief sees it, on every worker (a collective under a multi-worker
        strategy; ``flag`` itself otherwise)."""
        return bool(self.chief_value(bool(flag)))

    def chief_value(self, value):
        """The integer ``value`` as the chief holds it, on every worker (a collective under a
        multi-worker strategy; ``value`` itself otherwise)."""
        strategy = self.get_strategy()
        if not is_multi_worker(strategy):
            return int(value)
        return int(gather_from_workers(strategy, int(value))[0])

    def check_workers_agree(self, what, value):
        """Raises `RecipeError` unless every worker holds the same integer ``value`` (a
        collective under a multi-worker strategy; nothing to check otherwise)."""
        strategy = self.get_strategy()
        if not is_multi_worker(strategy):
            return
        values = gather_from_workers(strategy, value)
        if len(set(values)) > 1:
            raise RecipeError(
                f"the workers disagree on {what} (one value per replica: {values}; this "
                f"worker read {os.path.join(self.run_dir or self.out, BACKUP_DIR)!r}): --out "
                f"must be one directory on storage that every worker reads, given to every "
                f"worker as the same path"
            )

    def build(self, build_fn, *args, **kwargs):
        """Calls ``build_fn(*args, jit_compile=…, **kwargs)`` inside the strategy's scope
        (variables and optimizer there), with XLA off under a distributed strategy."""
        strategy = self.get_strategy()
        kwargs.setdefault("jit_compile", self.jit_compile)
        return build_in_scope(strategy, build_fn, *args, **kwargs)

    def path(self, name):
        return os.path.join(self.out, name)


def save_model(model, path):
    """``model.save(path)`` atomically (a complete ``.keras`` file or none).

    Args:
        model: the model.
        path: the ``.keras`` file.

    Raises:
        ValueError: a weight or optimizer value is not finite (a diverged model is not saved).
    """
    check_finite(model, f"save {path}")
    replace_atomically(path, ".keras", model.save)

"""`keras_adl.recipes.train` once the request is checked: the run directory, the workers' roles,
the task's ``train`` and ``run.json``."""

import json
import os
import shutil
import tempfile

import keras

from keras_adl.training.distribute import worker_info
from keras_adl.training.run import Run
from keras_adl.training.rundir import BACKUP_DIR, RUN_FILE, check_run_dir, write_json

__all__ = ["Run", "train_run"]


def train_run(recipe, run, seed, overwrite):
    """`train` once the request is checked: the run directory, the workers' roles, the
    recipe's ``train``, and ``run.json`` at the end (a run that failed on bad data leaves
    nothing behind)."""
    settings = dict(
        epochs=run.epochs, batch_size=run.batch_size, samples=run.samples, options=run.options
    )
    # Before any build: XLA is off under a distributed strategy.
    index, workers, chief = worker_info(run.get_strategy())
    if seed is not None:
        keras.utils.set_random_seed(seed)
    out = run.out
    if chief:
        check_run_dir(out, run.task, run.model, settings, overwrite)
    run.record.update(task=run.task, model=run.model, **settings, seed=seed, status="training")
    if workers > 1:
        run.batch_size *= workers
        run.record.update(workers=workers, global_batch_size=run.batch_size)
    if not chief:
        run.run_dir, run.out = out, tempfile.mkdtemp(prefix=f"keras-adl-worker{index}-")
    fresh = not os.path.exists(run.out)
    os.makedirs(run.out, exist_ok=True)
    write_json(run.path(RUN_FILE), run.record)
    try:
        keras_model, history, metrics = recipe.train(run)
    except (ValueError, FileNotFoundError):
        if chief and not os.path.exists(run.path(BACKUP_DIR)):  # bad data: leave nothing
            if fresh:
                shutil.rmtree(out, ignore_errors=True)
            else:
                os.remove(run.path(RUN_FILE))
        raise
    finally:
        if not chief:
            shutil.rmtree(run.out, ignore_errors=True)
    run.record.update(status="finished", metrics=metrics)
    if chief:
        write_json(run.path(RUN_FILE), run.record)
        print(json.dumps(metrics))
    return keras_model, history, metrics

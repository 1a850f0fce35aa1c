"""`StepBackup`: Keras' ``BackupAndRestore`` that also knows where in an epoch it stopped.

Keras 3.15's ``BackupAndRestore(save_freq=N)`` saves every N steps, but on restore it only
sets the epoch: the interrupted epoch starts again from its first step, and its mid-epoch
saves record epoch 0 until the first epoch of the resumed run ends. This callback records the
step reached in the epoch and the right epoch, so that `keras_adl.recipes.base.Recipe.fit` can
run just the remaining steps of the interrupted epoch.
"""

import json
import os
import shutil

import keras

PROGRESS_FILE = "progress.json"


class StepBackup(keras.callbacks.BackupAndRestore):
    """Backs up the model and optimizer every ``save_freq`` steps and at every epoch's end.

    Args:
        backup_dir: where the backup lives (removed by `remove` after a finished run).
        save_freq: steps between mid-epoch backups; ``None`` for epoch ends only.
    """

    def __init__(self, backup_dir, save_freq=None):
        super().__init__(backup_dir, save_freq=save_freq or "epoch", delete_checkpoint=False)
        self._step = 0
        self._offset = 0

    def resume_point(self):
        """``(epoch, step)`` of the backup: epochs finished, and steps done in the next one
        (``(0, 0)`` when there is no backup)."""
        path = os.path.join(self.backup_dir, PROGRESS_FILE)
        if not os.path.isfile(path):
            return 0, 0
        with open(path) as f:
            progress = json.load(f)
        return int(progress["epoch"]), int(progress["step"])

    def expect_partial_epoch(self, step):
        """The next ``fit`` call runs the rest of an epoch whose first ``step`` steps are done."""
        self._offset = step

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_train_batch_end(self, batch, logs=None):
        self._step = self._offset + batch + 1
        super().on_train_batch_end(batch, logs)

    def on_epoch_end(self, epoch, logs=None):
        self._step = 0
        self._offset = 0
        super().on_epoch_end(epoch, logs)
        if self.save_freq != "epoch":  # the epoch's end is a checkpoint too: count afresh
            self._batches_seen_since_last_saving = 0
            self._save_model()

    def _save_model(self):
        super()._save_model()
        with open(os.path.join(self.backup_dir, PROGRESS_FILE), "w") as f:
            json.dump({"epoch": self._current_epoch, "step": self._step}, f)

    def restore(self, model):
        """Loads the backup's weights and optimizer state into ``model`` (as a resumed ``fit``
        does), for a run whose training had ended when it stopped."""
        self.set_model(model)
        self.on_train_begin()

    def remove(self):
        """Deletes the backup (after a finished run)."""
        shutil.rmtree(self.backup_dir, ignore_errors=True)

"""The memory family's tasks: one `MemoryTask` per algorithmic task; `CopyTask` also scores
longer sequences and reads bit vectors for ``predict``."""

import collections

from keras_adl.recipes._recipe import TaskRecipe
from keras_adl.recipes._tuning import search
from keras_adl.recipes.memory import data, spec
from keras_adl.recipes.memory.build import build_model
from keras_adl.recipes.memory.evaluate import draw_addressing, evaluate
from keras_adl.recipes.memory.serving import export_memory_model, predict_copies
from keras_adl.training.fit import fit
from keras_adl.training.rundir import RecipeError, write_task_file

# What `MemoryTask.data` hands to the other hooks: the endless training stream and the
# development sequences ``(inputs, targets, weights)``.
MemoryData = collections.namedtuple("MemoryData", "training development")


class MemoryTask(TaskRecipe):
    """A memory task: fresh random sequences every step (`data`), a memory model or the LSTM
    baseline of the task's preset, bit errors per held-out sequence. The tasks differ in their
    sequences (by the task's name in `keras_adl.data.algorithmic`), their presets and batch
    sizes (`spec`), the longer lengths they are scored at (`longer_lengths`) and whether
    ``predict`` reads their inputs from the command line."""

    longer_lengths = ()

    def build_model(self, model_name, jit_compile=True, **overrides):
        """The compiled model ``keras-adl train TASK --model MODEL`` trains; ``overrides``
        replace preset values (e.g. a smaller memory)."""
        preset = self.spec.preset(model_name)
        return build_model(*data.dims(self.name), model_name, preset, jit_compile, **overrides)

    def development(self, count=spec.DEVELOPMENT_SEQUENCES):
        """``count`` development sequences of the task (`data.development`)."""
        return data.development(self.name, count)

    def data(self, run):
        return MemoryData(data.training(self.name, run.batch_size), self.development())

    def build(self, run, memory_data):
        model = run.build(self.build_model, run.model)
        run.record["settings"] = self.spec.preset(run.model)
        return model

    def fit(self, run, model, memory_data):
        run.record["development_sequences"] = spec.DEVELOPMENT_SEQUENCES
        return fit(
            run,
            model,
            memory_data.training,
            steps_per_epoch=max(run.samples // run.batch_size, 1),
            shuffle=False,
            validation_data=memory_data.development,
            validation_batch_size=spec.DEVELOPMENT_BATCH,
        )

    def evaluate(self, run, model, memory_data):
        """Held-out bit errors per sequence (and at `longer_lengths`) and, for a memory model,
        a picture of its addressing."""
        metrics = evaluate(self.name, model, self.longer_lengths)
        if run.model in spec.ADDRESSING_MODELS:
            draw_addressing(self.name, run.model, model, run.out)
        return metrics

    def hypermodel(self, model_name):
        """The `MemorySequenceHyperModel` searching ``model_name`` from the task's preset."""
        from keras_adl.recipes.memory.hypermodels import MemorySequenceHyperModel

        return MemorySequenceHyperModel(*data.dims(self.name), cell=model_name, task=self.name)

    def tune(self, model_name, trials, epochs, samples, out, options):
        """Random search on the bit errors of development sequences (not the figures' seed)."""
        batch_size = self.spec.batch_size_of(model_name)
        validation = self.development(max(samples // 5, 64))
        return search(
            self.hypermodel(model_name),
            ("val_bit_errors", "min"),
            trials,
            out,
            f"{self.name}_{model_name}",
            data.training(self.name, batch_size),
            steps_per_epoch=max(samples // batch_size, 1),
            validation_data=validation,
            epochs=epochs,
            shuffle=False,
        )

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """A SavedModel whose ``serve`` (``serving_default``) maps ``inputs [None, None, D]``
        float32 to the logits ``[B, T, output_dim]``."""
        export_memory_model(model, export_dir)
        write_task_file(export_dir, task=record["task"], model=record["model"])

    def predict(self, export_dir, inputs, info):
        raise RecipeError(
            f"predict reads copy-task bit vectors; a {info['task']!r} model takes "
            "[batch, time, features] arrays through the Python API"
        )


class CopyTask(MemoryTask):
    """Copy: also scored on sequences longer than the training ones, and served on bit
    vectors typed on the command line."""

    longer_lengths = spec.LONGER_LENGTHS

    def predict(self, export_dir, inputs, info):
        """Prints each bit vector (a string of 0/1) and the exported model's copy of it."""
        predict_copies(export_dir, inputs)


RECIPES = {
    "copy": CopyTask(spec.COPY),
    "repeat_copy": MemoryTask(spec.REPEAT_COPY),
    "associative_recall": MemoryTask(spec.ASSOCIATIVE_RECALL),
    "priority_sort": MemoryTask(spec.PRIORITY_SORT),
}

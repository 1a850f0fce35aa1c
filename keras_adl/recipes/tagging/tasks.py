"""The tagging family's task: `DateFieldsTask`, date fields tagged by cross-view training."""

from keras_adl.conventions import NUM_SPECIAL_TOKENS
from keras_adl.recipes._recipe import TaskRecipe
from keras_adl.recipes._tuning import search
from keras_adl.recipes.tagging import data, spec
from keras_adl.recipes.tagging.build import build_model
from keras_adl.recipes.tagging.evaluate import evaluate
from keras_adl.recipes.tagging.serving import export_tagger, predict
from keras_adl.training.fit import fit
from keras_adl.training.rundir import write_task_file


class DateFieldsTask(TaskRecipe):
    """A `cross_view_tagger` on ``--labelled`` labelled date sequences and ``--samples``
    unlabelled ones (``--unlabelled off``: the labels alone); scored on held-out sequences."""

    def tagging_data(self, model_name, options, samples, seed=0):
        """The `data.TaggingData` of a run: ``options`` holds ``labelled``, ``unlabelled``
        (``"on"``/``"off"``) and ``views`` as the command line gives them."""
        return data.date_field_data(
            self.name, options, samples, seed, characters=spec.CHARACTERS[model_name]
        )

    def build_model(self, model_name, tagging_data, jit_compile=True, **overrides):
        """The compiled tagger ``keras-adl train date_fields --model MODEL`` trains, with the
        auxiliaries of ``tagging_data.views``; ``overrides`` replace preset values."""
        return build_model(
            *self.model_arguments(model_name, tagging_data), jit_compile, **overrides
        )

    def model_arguments(self, model_name, tagging_data):
        """The builder's ``(preset, vocabulary size, tasks, views, characters)`` for
        ``tagging_data``, shared by `build_model` and `hypermodel`."""
        return (
            self.spec.preset(model_name),
            len(tagging_data.vocabulary) + NUM_SPECIAL_TOKENS,
            {tagging_data.task: len(tagging_data.tag_names)},
            tagging_data.views,
            tagging_data.characters,
        )

    def data(self, run):
        tagging_data = self.tagging_data(run.model, run.options, run.samples, run.seed)
        data.write_vocabulary(tagging_data.vocabulary, tagging_data.tag_names, run.out)
        run.record.update(
            settings=self.spec.preset(run.model),
            labelled_sequences=len(tagging_data.labelled[0]),
            unlabelled_sequences=0 if tagging_data.unlabelled is None else run.samples,
            views=list(tagging_data.views),
            tag_names=list(tagging_data.tag_names),
            steps_per_epoch=data.steps_per_epoch(tagging_data.unlabelled),
        )
        return tagging_data

    def build(self, run, tagging_data):
        return run.build(self.build_model, run.model, tagging_data)

    def fit(self, run, model, tagging_data):
        dataset = data.training_dataset(tagging_data, run.batch_size, seed=run.seed)
        steps = data.steps_per_epoch(tagging_data.unlabelled)
        return fit(run, model, dataset, steps_per_epoch=steps, shuffle=False)

    def evaluate(self, run, model, tagging_data):
        return evaluate(model, tagging_data, run.out, title=f"{run.model} on {run.task}")

    def hypermodel(self, model_name, tagging_data):
        """The `CrossViewTaggerHyperModel` searching ``model_name`` with the auxiliaries of
        ``tagging_data.views``."""
        from keras_adl.recipes.tagging.hypermodels import CrossViewTaggerHyperModel

        return CrossViewTaggerHyperModel(*self.model_arguments(model_name, tagging_data))

    def tune(self, model_name, trials, epochs, samples, out, options):
        """Random search on the token accuracy of `spec.DEVELOPMENT_SEQUENCES` labelled
        development sequences (drawn apart from the training and held-out ones): labels beyond
        ``--labelled``, which a user with few labels may not have to spare."""
        tagging_data = self.tagging_data(model_name, options, samples)
        words, tags = data.development_sequences()
        table = data.character_table(tagging_data.vocabulary) if tagging_data.characters else None
        return search(
            self.hypermodel(model_name, tagging_data),
            ("val_accuracy", "max"),
            trials,
            out,
            f"{self.name}_{model_name}",
            data.training_dataset(tagging_data, self.spec.batch_size),
            validation_data=(data.model_inputs(words, table), {self.name: tags}),
            epochs=epochs,
            steps_per_epoch=data.steps_per_epoch(tagging_data.unlabelled),
            shuffle=False,
        )

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """A SavedModel with the signature ``texts [None]`` string (`export_tagger`)."""
        words, tags = data.read_vocabulary(run_dir)
        characters = spec.CHARACTERS[record["model"]]
        export_tagger(model, export_dir, record["task"], words, tags, characters)
        write_task_file(export_dir, task=record["task"], model=record["model"])

    def predict(self, export_dir, inputs, info):
        predict(export_dir, inputs)


RECIPES = {"date_fields": DateFieldsTask(spec.DATE_FIELDS)}

"""The fine-tuning task (`Finetuning`): the fortune topics, from scratch or from a pretraining
run."""

import dataclasses
import functools

from keras_adl.recipes._development import MIN_FOR_DEVELOPMENT, too_few_to_tune, without_development
from keras_adl.recipes._pictures import step_log
from keras_adl.recipes.pretraining import data, spec
from keras_adl.recipes.pretraining.build import load_pretrained
from keras_adl.recipes.pretraining.evaluate import classifier_figures
from keras_adl.recipes.pretraining.plots import pictures
from keras_adl.recipes.pretraining.serving import make_text_classifier_serving_fn, predict_classes
from keras_adl.recipes.pretraining.transformer_task import SearchData, TransformerTask
from keras_adl.training.fit import fit
from keras_adl.training.rundir import RUN_FILE, RecipeError, read_run_file


@dataclasses.dataclass
class Fortunes:
    """What `Finetuning.data` hands to the other hooks: the fortunes and their development
    split, the vocabulary, the settings, the ``--init`` run and whether its weights start the
    model, the windows per fortune, the training batches and their steps per epoch, whether
    they carry the LM targets, and the step log the fit records."""

    documents: object
    development: tuple
    tokenizer: object
    settings: dict
    init: str
    pretrained: bool
    windows: int
    dataset: object
    steps: int
    lm_targets: bool
    log: object = None


class Finetuning(TransformerTask):
    """A classifier of the fortune topics (the documents family's split, so the two families
    are compared on the same held-out fortunes), from scratch or from a pretraining run
    (``--init RUN``: its vocabulary and sizes and, unless ``--weights random``, its weights).
    A fortune is read as up to ``--windows`` windows: each trains with the fortune's label,
    and a fortune is classified by the product of its windows' probabilities."""

    @staticmethod
    def init_run(init, model_name):
        """The ``run.json`` of ``--init``, checked to be the pretraining run ``model_name``
        fine-tunes from (`INIT_TASKS`)."""
        try:
            info = read_run_file(init, RUN_FILE)
        except FileNotFoundError:
            info = {}
        expected = spec.INIT_TASKS[model_name]
        if info.get("task") != expected:
            raise RecipeError(
                f"--init must be a {expected} run directory for {model_name}; {init!r} holds "
                f"{info.get('task') or 'no run'}"
            )
        return info

    def start(self, options, model_name, train_docs):
        """``(tokenizer, sizes)`` of fine-tuning: with ``--init``, the pretraining run's
        vocabulary and model sizes; otherwise a vocabulary learned on ``train_docs``."""
        init = options.get("init")
        if not init:
            return data.learn_tokenizer(train_docs, options["vocab_size"]), {}
        info = self.init_run(init, model_name)
        sizes = {k: v for k, v in info["settings"].items() if k in spec.SIZES}
        return data.load_tokenizer(init), sizes

    def data(self, run):
        init = run.options.get("init")
        if init:  # a wrong --init is refused before the fortunes are read
            self.init_run(init, run.model)
        documents, development = data.fortunes(run.options.get("data"), run.samples)
        train_docs = documents.train_docs
        if development is None:
            without_development(
                run,
                f"{len(train_docs)} training fortunes are too few to set some aside (it takes "
                f"{MIN_FOR_DEVELOPMENT})",
            )
        settings = self.spec.preset(run.model)
        tokenizer, sizes = self.start(run.options, run.model, train_docs)
        settings.update(sizes)
        data.save_tokenizer(tokenizer, run.out)
        pretrained = bool(init) and run.options.get("weights") == "pretrained"
        windows = run.options.get("windows", spec.FINETUNE_WINDOWS)
        run.record.update(
            settings=settings,
            init=init,
            weights="pretrained" if pretrained else "random",
            class_names=documents.class_names,
            train_documents=len(train_docs),
            windows=windows,
        )
        # Each model reads the same windows; the auxiliary LM targets only matter to a
        # gpt_classifier built with its LM output (lm_loss_weight > 0).
        lm_targets = settings.get("lm_loss_weight", 0.0) > 0
        dataset = data.text_classes(
            tokenizer,
            train_docs,
            documents.train_labels,
            min(run.batch_size, len(train_docs)),
            settings["sequence_length"],
            True,
            run.model,
            lm_targets,
            windows,
        )
        steps = int(dataset.cardinality())
        return Fortunes(
            documents,
            development,
            tokenizer,
            settings,
            init,
            pretrained,
            windows,
            dataset,
            steps,
            lm_targets,
        )

    def build(self, run, fortunes):
        sizes = {k: v for k, v in fortunes.settings.items() if k in spec.SIZES}

        def build(jit_compile=True):
            pretrained = None
            if fortunes.pretrained:
                pretrained = load_pretrained(fortunes.init, run.model)
            return self.build_model(
                run.model,
                fortunes.tokenizer.size,
                num_classes=len(fortunes.documents.class_names),
                total_steps=fortunes.steps * run.epochs,
                pretrained=pretrained,
                jit_compile=jit_compile,
                **sizes,
            )

        return run.build(build)

    def fit(self, run, model, fortunes):
        run.record["steps_per_epoch"] = fortunes.steps
        fortunes.log = step_log(run, ("loss", spec.CLASSIFIER_ACCURACY[run.model]))
        validation = None
        if fortunes.development is not None:  # its loss picks the best epoch
            run.record["development_documents"] = len(fortunes.development[0])
            validation = self._development_classes(
                fortunes.tokenizer,
                fortunes.development,
                fortunes.settings["sequence_length"],
                run.model,
                fortunes.lm_targets,
                fortunes.windows,
            )
        return fit(
            run,
            model,
            fortunes.dataset.repeat(),
            steps_per_epoch=fortunes.steps,
            shuffle=False,
            validation_data=validation,
        )

    @staticmethod
    def _development_classes(tokenizer, development, length, model_name, lm_targets, windows):
        """The development fortunes as Keras' ``validation_data``: window by window, each
        window with its fortune's label."""
        return data.text_classes(
            tokenizer, *development, 128, length, False, model_name, lm_targets, windows
        )

    def evaluate(self, run, model, fortunes):
        length = fortunes.settings["sequence_length"]
        documents, tokenizer = fortunes.documents, fortunes.tokenizer
        pictures(run, model, fortunes.log, tokenizer, documents.test_docs, length, "fine-tuning")
        return classifier_figures(model, run.model, tokenizer, length, documents, fortunes.windows)

    def search_data(self, model_name, samples, options):
        """The training fortunes, scored on the development split by Keras' validation
        accuracy, window by window (each window with its fortune's label), not by each
        fortune's summed log-probabilities as ``train`` reports."""
        documents, development = data.fortunes(options.get("data"), samples)
        train_docs = documents.train_docs
        if development is None:
            raise too_few_to_tune(len(train_docs), "training fortunes")
        init = options.get("init")
        tokenizer, sizes = self.start(options, model_name, train_docs)
        pretrained = None
        if init and options.get("weights") == "pretrained":
            pretrained = functools.partial(load_pretrained, init, model_name)
        length = sizes.get("sequence_length", spec.SIZES["sequence_length"])
        lm_targets = "lm_loss_weight" in self.spec.preset(model_name)
        windows = options.get("windows", spec.FINETUNE_WINDOWS)
        batch_size = min(self.spec.batch_size, len(train_docs))
        dataset = data.text_classes(
            tokenizer,
            train_docs,
            documents.train_labels,
            batch_size,
            length,
            True,
            model_name,
            lm_targets,
            windows,
        )
        steps = int(dataset.cardinality())
        validation = self._development_classes(
            tokenizer, development, length, model_name, lm_targets, windows
        )
        objective = (f"val_{spec.CLASSIFIER_ACCURACY[model_name]}", "max")
        num_classes = len(documents.class_names)
        return SearchData(
            tokenizer,
            dataset.repeat(),
            steps,
            validation,
            objective,
            num_classes,
            pretrained,
            sizes,
        )

    def serving_fn(self, model, tokenizer, record):
        """Raw texts to classes, read as the run trained: up to its ``windows`` windows."""
        return make_text_classifier_serving_fn(
            model,
            record["model"],
            tokenizer,
            record["settings"]["sequence_length"],
            record["class_names"],
            record.get("windows", 1),  # runs from before windows read one
        )

    def predict(self, export_dir, inputs, info):
        """Prints each text's class, its probability and the number of windows read."""
        predict_classes(export_dir, inputs)

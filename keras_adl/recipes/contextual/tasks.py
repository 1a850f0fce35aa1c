"""The contextual family's tasks: the biLM (`BilmTask`), CoVe's translator (`CoveTask`), both
exported as embedders (`EmbedderTask`), and the classifier over their features
(`FeaturesTask`)."""

import collections
import json
import os

from keras_adl.recipes._development import (
    MIN_FOR_DEVELOPMENT,
    too_few_to_tune,
    without_development,
)
from keras_adl.recipes._pictures import plot_step_log, step_log
from keras_adl.recipes._recipe import TaskRecipe
from keras_adl.recipes._tuning import search
from keras_adl.recipes.contextual import data, evaluate, serving, spec
from keras_adl.recipes.contextual.build import build_bilm, build_classifier, build_cove
from keras_adl.recipes.contextual.sources import read_tokenizer_config, read_word_vectors, sources
from keras_adl.recipes.contextual.streaming import StreamedWindows
from keras_adl.recipes.sequences.data import fitting_pairs, held_out_dataset
from keras_adl.text.tokenizer import WordVectorPairTokenizer
from keras_adl.text.wordpiece import learn_wordpiece
from keras_adl.training.fit import fit
from keras_adl.training.rundir import RecipeError, write_task_file


class EmbedderTask(TaskRecipe):
    """A pretraining task whose export maps raw strings to per-word vectors: ``predict``
    prints each text's words and the shape of its vectors, ``outputs[output_key]``."""

    output_key = "vectors"
    layered = False  # one set of vectors per layer (the biLM's)

    def predict(self, export_dir, inputs, info):
        outputs = serving.serve_texts(export_dir, inputs)
        serving.print_embeddings(inputs, outputs, self.output_key, self.layered)


# -- pretrain_bilm -----------------------------------------------------------------------------

# What `BilmTask.data` hands to the other hooks: the corpus (`StreamedWindows`: the held-out
# windows, the vocabulary and the training words' counts) and the batches.
BilmData = collections.namedtuple("BilmData", "corpus train validation")


class BilmTask(EmbedderTask):
    """ELMo's character-level biLM on a corpus cut into windows, streamed from disk
    (`keras_adl.recipes.contextual.streaming`); its export maps raw strings to every biLM
    layer."""

    output_key = "layers"
    layered = True

    @staticmethod
    def corpus(source, samples, vocab_size, max_words=spec.MAX_WORDS):
        """The corpus streamed from ``source`` (``--data``; ``None``: the installed GCIDE),
        split and counted: a `StreamedWindows`."""
        return StreamedWindows(source, samples, vocab_size, max_words)

    def build_model(self, model_name, vocab_size, jit_compile=True, **overrides):
        """The compiled `elmo_bilm` ``keras-adl train pretrain_bilm`` trains, with
        ``vocab_size`` output words; ``overrides`` replace preset values."""
        return build_bilm(self.spec.preset(model_name), vocab_size, jit_compile, **overrides)

    def data(self, run):
        max_words = run.options["max_words"]
        corpus = self.corpus(
            run.options.get("data"), run.samples, run.options["vocab_size"], max_words
        )
        if corpus.train_windows < run.batch_size or not corpus.held:
            raise RecipeError(
                f"{corpus.train_windows} training and {len(corpus.held)} held-out windows of 2 "
                f"to {max_words} words: give more text (at least {run.batch_size} training "
                "windows)"
            )
        settings = self.spec.preset(run.model)
        run.record.update(
            settings=settings,
            data=run.options.get("data") or "gcide",
            streamed=True,
            documents=corpus.documents,
            train_windows=corpus.train_windows,
            held_out_windows=len(corpus.held),
            vocabulary=corpus.vocabulary.size,
            steps_per_epoch=run.options["steps"],
        )
        with open(run.path(spec.VOCABULARY_FILE), "w") as f:
            json.dump(corpus.vocabulary.to_config(), f)
        datasets = data.bilm_datasets(corpus, run.batch_size, settings["max_characters"])
        return BilmData(corpus, *datasets)

    def build(self, run, bilm_data):
        return run.build(self.build_model, run.model, bilm_data.corpus.vocabulary.size)

    def fit(self, run, model, bilm_data):
        log = step_log(run, ("loss", "forward_perplexity", "backward_perplexity"))
        history = fit(
            run,
            model,
            bilm_data.train,
            steps_per_epoch=run.options["steps"],
            validation_data=bilm_data.validation,
            shuffle=False,
        )
        plot_step_log(log, run.out, "biLM")
        return history

    def train(self, run):
        """`TaskRecipe.train`, whose figures also read the history (the training over
        held-out perplexity of every epoch)."""
        bilm_data = self.data(run)
        model = self.build(run, bilm_data)
        history = self.fit(run, model, bilm_data)
        return model, history, self.evaluate(run, model, bilm_data, history)

    def evaluate(self, run, model, bilm_data, history=None):
        return evaluate.bilm_figures(
            model, bilm_data.validation, bilm_data.corpus, run.options["max_words"], history
        )

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """A SavedModel from raw strings to every biLM layer (windows of `spec.MAX_WORDS`)."""
        max_characters = record["settings"]["max_characters"]
        serving.export_bilm(model, export_dir, max_characters, spec.MAX_WORDS)
        write_task_file(export_dir, task=record["task"], model=record["model"])


# -- cove --------------------------------------------------------------------------------------

# What `CoveTask.data` hands to the other hooks: the tokenizer, the fixed word vectors, the
# training pairs that fit, the held-out and development pairs (``(sources, targets)``; the
# development pairs ``None`` when there are none) and the batch size.
CoveData = collections.namedtuple(
    "CoveData", "tokenizer vectors sources targets held_out development batch_size"
)


class CoveTask(EmbedderTask):
    """CoVe: English → LANG translation over fixed word vectors; its export maps raw English
    strings to ``[GloVe; CoVe]`` vectors."""

    def data(self, run):
        options, max_length = run.options, run.options["max_length"]
        if not options.get("vectors"):
            raise RecipeError("cove needs --vectors, a `keras-adl train word2vec` run directory")
        words, vectors = read_word_vectors(options["vectors"])
        pairs = data.translation_pairs(options["data"], options["validation_split"], run.samples)
        if pairs.development is None:
            without_development(
                run,
                f"{len(pairs.sources)} training pairs are too few to set some aside (it takes "
                f"{MIN_FOR_DEVELOPMENT})",
            )
        tokenizer = WordVectorPairTokenizer(
            words, learn_wordpiece(pairs.targets, options["vocab_size"])
        )
        sources, targets, too_long = fitting_pairs(
            tokenizer, pairs.sources, pairs.targets, max_length
        )
        if not sources:
            raise RecipeError(f"every training pair is longer than --max-length {max_length}")
        held_out = fitting_pairs(tokenizer, *pairs.held_out, max_length)[:2]
        run.record.update(
            settings=self.spec.preset(run.model),
            data=options["data"],
            vectors=os.path.abspath(options["vectors"]),
            source_vocabulary=tokenizer.source_size,
            target_vocabulary=tokenizer.target_size,
            train_pairs=len(sources),
            train_pairs_too_long=too_long,
            held_out_pairs=len(held_out[0]),
            max_length=max_length,
        )
        with open(run.path(spec.TOKENIZER_FILE), "w") as f:
            json.dump(tokenizer.to_config(), f)
        development = self._development(run, tokenizer, pairs.development, max_length)
        batch_size = min(run.batch_size, len(sources))
        return CoveData(tokenizer, vectors, sources, targets, held_out, development, batch_size)

    @staticmethod
    def _development(run, tokenizer, development, max_length):
        """The development pairs that fit ``max_length`` (``None`` if none do), recorded."""
        if development is None:
            return None
        development = fitting_pairs(tokenizer, *development, max_length)[:2]
        run.record["development_pairs"] = len(development[0])
        if not development[0]:
            without_development(
                run, f"every development pair is longer than --max-length {max_length}"
            )
            return None
        return development

    def build(self, run, cove_data):
        tokenizer = cove_data.tokenizer
        preset = self.spec.preset(run.model)
        return run.build(
            build_cove, preset, tokenizer.source_size, tokenizer.target_size, cove_data.vectors
        )

    def fit(self, run, model, cove_data):
        tokenizer, batch_size = cove_data.tokenizer, cove_data.batch_size
        max_length = run.options["max_length"]
        dataset = tokenizer.dataset(
            cove_data.sources, cove_data.targets, batch_size, max_length, max_length
        )
        validation = None
        if cove_data.development is not None:  # its loss picks the best epoch
            validation = held_out_dataset(tokenizer, *cove_data.development, batch_size, max_length)
        return fit(run, model, dataset, shuffle=False, validation_data=validation)

    def evaluate(self, run, model, cove_data):
        tokenizer, max_length = cove_data.tokenizer, run.options["max_length"]
        held = held_out_dataset(tokenizer, *cove_data.held_out, cove_data.batch_size, max_length)
        return evaluate.cove_figures(
            run.model, model, tokenizer, held, cove_data.held_out, max_length, run.out
        )

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """A SavedModel from raw English strings to ``[GloVe; CoVe]`` vectors."""
        tokenizer = WordVectorPairTokenizer.from_config(read_tokenizer_config(run_dir))
        serving.export_cove(model, export_dir, tokenizer, record["max_length"])
        write_task_file(export_dir, task=record["task"], model=record["model"])


# -- fortunes_features -------------------------------------------------------------------------

# What `FeaturesTask.data` hands to the other hooks: ``--features``, what they read
# (`sources`), the classifier's input shapes, the fortunes (test split included) and the
# development split (``None`` when too few).
FeaturesData = collections.namedtuple(
    "FeaturesData", "features sources shapes documents development"
)


class FeaturesTask(TaskRecipe):
    """Fortune topics by a bidirectional GRU over frozen per-word features (``--features``):
    word vectors, CoVe or ELMo."""

    def build_model(
        self, model_name, features, sources, num_classes, jit_compile=True, **overrides
    ):
        """The compiled classifier ``keras-adl train fortunes_features`` trains over
        ``features`` read from ``sources``; ``overrides`` replace preset values."""
        preset = self.spec.preset(model_name)
        return build_classifier(preset, features, sources, num_classes, jit_compile, **overrides)

    def data(self, run):
        features = run.options["features"]
        found = sources(features, run.options)
        documents, development = data.fortunes(run.options.get("data"), run.samples)
        if development is None:
            without_development(
                run,
                f"{len(documents.train_docs)} training fortunes are too few to set some aside "
                f"(it takes {MIN_FOR_DEVELOPMENT})",
            )
        else:
            run.record["development_documents"] = len(development[0])
        run.record.update(
            features=features,
            settings=self.spec.preset(run.model),
            class_names=documents.class_names,
            train_documents=len(documents.train_docs),
            max_words=spec.DOCUMENT_WORDS,
        )
        with open(run.path(spec.TOKENIZER_FILE), "w") as f:
            json.dump({"words": found["words"]}, f)
        shapes = data.input_shapes(features, found)
        return FeaturesData(features, found, shapes, documents, development)

    def build(self, run, features_data):
        classes = len(features_data.documents.class_names)
        return run.build(
            self.build_model, run.model, features_data.features, features_data.sources, classes
        )

    def _dataset(self, features_data, texts, labels, batch_size, shuffle):
        words = features_data.sources["words"]
        return data.classifier_dataset(
            features_data.shapes, words, texts, labels, batch_size, shuffle
        )

    def fit(self, run, model, features_data):
        documents = features_data.documents
        batch_size = min(run.batch_size, len(documents.train_docs))
        dataset = self._dataset(
            features_data, documents.train_docs, documents.train_labels, batch_size, True
        )
        validation = None
        if features_data.development is not None:  # its loss picks the best epoch
            validation = self._dataset(features_data, *features_data.development, batch_size, False)
        return fit(run, model, dataset, shuffle=False, validation_data=validation)

    def evaluate(self, run, model, features_data):
        documents = features_data.documents
        batch_size = min(run.batch_size, len(documents.train_docs))
        held = self._dataset(
            features_data, documents.test_docs, documents.test_labels, batch_size, False
        )
        return evaluate.classifier_figures(
            model, features_data.features, held, len(documents.test_docs), run.out
        )

    def hypermodel(self, features, found, num_classes):
        """The `ContextualClassifierHyperModel` searching the classifier over ``features``."""
        from keras_adl.recipes.contextual.hypermodels import ContextualClassifierHyperModel

        return ContextualClassifierHyperModel(features, found, num_classes)

    def tune(self, model_name, trials, epochs, samples, out, options):
        """Random search on the development split's accuracy (the test fortunes stay for the
        reported figures); the pretrained features stay those of ``--features``."""
        features = options.get("features") or spec.DEFAULT_FEATURES
        found = sources(features, options)
        documents, development = data.fortunes(options.get("data"), samples)
        if development is None:
            raise too_few_to_tune(len(documents.train_docs), "training fortunes")
        shapes = data.input_shapes(features, found)
        batch = self.spec.batch_size
        return search(
            self.hypermodel(features, found, len(documents.class_names)),
            ("val_accuracy", "max"),
            trials,
            out,
            f"{self.name}_{features}",
            data.classifier_dataset(
                shapes, found["words"], documents.train_docs, documents.train_labels, batch, True
            ),
            validation_data=data.classifier_dataset(
                shapes, found["words"], *development, batch, False
            ),
            epochs=epochs,
            shuffle=False,
        )

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """A SavedModel from raw strings to the topic."""
        words = read_tokenizer_config(run_dir)["words"]
        serving.export_classifier(model, export_dir, words, record["class_names"])
        write_task_file(export_dir, task=record["task"], model=record["model"])

    def predict(self, export_dir, inputs, info):
        serving.print_topics(inputs, serving.serve_texts(export_dir, inputs))


RECIPES = {
    "pretrain_bilm": BilmTask(spec.PRETRAIN_BILM),
    "cove": CoveTask(spec.COVE_TASK),
    "fortunes_features": FeaturesTask(spec.FORTUNES_FEATURES),
}

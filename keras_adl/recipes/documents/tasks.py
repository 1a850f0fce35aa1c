"""The documents family's tasks: one `HanTask` per way of getting documents."""

import collections
import json
import os

from keras_adl.recipes._development import (
    MIN_FOR_DEVELOPMENT,
    too_few_to_tune,
    without_development,
)
from keras_adl.recipes._recipe import TaskRecipe
from keras_adl.recipes._tuning import search
from keras_adl.recipes.documents import data, spec
from keras_adl.recipes.documents.build import build_model
from keras_adl.recipes.documents.evaluate import evaluate
from keras_adl.recipes.documents.serving import export_han, predict
from keras_adl.text import DocumentTokenizer
from keras_adl.training.fit import fit
from keras_adl.training.rundir import write_task_file

# What `HanTask.data` hands to the other hooks.
HanData = collections.namedtuple("HanData", "documents tokenizer development")


class HanTask(TaskRecipe):
    """A HAN classifying documents: the tasks differ in where their documents come from
    (`documents`), how their development split is made (`development`) and whether their
    ``(S, W)`` is fixed (`shape`) or follows the data."""

    shape = None

    def documents(self, source, samples):
        """The task's `keras_adl.recipes.documents.data.Documents` (``source``: ``--data``)."""
        raise NotImplementedError

    def development(self, documents, labels):
        """``(train_docs, train_labels, development)``: a seeded share of the training
        documents set aside (`data.development_split`)."""
        return data.development_split(documents, labels)

    def tokenizer(self, documents, max_sentences=None, max_words=None, lengths=None):
        """The `DocumentTokenizer` of the training ``documents``, padding to the task's shape,
        to ``max_sentences`` × ``max_words``, or to what the data needs (`data.tokenizer`)."""
        return data.tokenizer(documents, self.shape, max_sentences, max_words, lengths)

    def build_model(
        self, model_name, vocab_size, num_classes, shape=None, jit_compile=True, **overrides
    ):
        """The compiled `han_classifier` ``keras-adl train TASK --model MODEL`` trains, reading
        documents of ``shape`` ``(S, W)`` (default: the task's); ``overrides`` replace preset
        values."""
        preset = self.spec.preset(model_name)
        shape = shape or self.shape
        return build_model(preset, vocab_size, num_classes, shape, jit_compile, **overrides)

    def data(self, run):
        documents = self.documents(run.options.get("data"), run.samples)
        train_docs, train_labels, development = self.development(
            documents.train_docs, documents.train_labels
        )
        documents = documents._replace(train_docs=train_docs, train_labels=train_labels)
        if development is None:
            without_development(
                run,
                f"{len(train_docs)} training documents are too few to set some aside (it "
                f"takes {MIN_FOR_DEVELOPMENT})",
            )
        lengths = data.document_lengths(train_docs)  # counted once: the sizes and the share cut
        options = run.options
        tokenizer = self.tokenizer(
            train_docs, options.get("max_sentences"), options.get("max_words"), lengths
        )
        with open(run.path(spec.TOKENIZER_FILE), "w") as f:
            json.dump(tokenizer.to_config(), f)
        self._record(run, documents, tokenizer, lengths, development)
        return HanData(documents, tokenizer, development)

    def _record(self, run, documents, tokenizer, lengths, development):
        """Prints the shares the tokenizer's shape cuts and records the data in ``run.json``."""
        shape = (tokenizer.max_sentences, tokenizer.max_words)
        cut = data.cut_shares(*lengths, *shape)
        print(
            f"documents of at most {shape[0]} sentences of {shape[1]} words: "
            f"{cut['sentences_cut']:.1%} of the training sentences and "
            f"{cut['words_cut']:.1%} of their words are cut (--max-sentences, --max-words)"
        )
        run.record.update(
            data=run.options.get("data") or run.task,
            class_names=documents.class_names,
            max_sentences=shape[0],
            max_words=shape[1],
            train_documents=len(documents.train_docs),
            settings=self.spec.preset(run.model),
            **cut,
        )
        if development is not None:
            run.record["development_documents"] = len(development[0])

    def build(self, run, han_data):
        tokenizer = han_data.tokenizer
        return run.build(
            self.build_model,
            run.model,
            tokenizer.vocabulary_size,
            len(han_data.documents.class_names),
            (tokenizer.max_sentences, tokenizer.max_words),
        )

    def fit(self, run, model, han_data):
        documents, tokenizer = han_data.documents, han_data.tokenizer
        batch_size = min(run.batch_size, len(documents.train_docs))
        dataset = tokenizer.dataset(
            documents.train_docs, documents.train_labels, batch_size, seed=0
        )
        validation = None
        if han_data.development is not None:  # its loss picks the best epoch
            validation = data.development_dataset(tokenizer, han_data.development, batch_size)
        # shuffled by tf.data
        return fit(run, model, dataset, shuffle=False, validation_data=validation)

    def evaluate(self, run, model, han_data):
        title = f"{run.model} on {run.task}"
        return evaluate(model, han_data.tokenizer, han_data.documents, run.out, title)

    def hypermodel(self, model_name, vocab_size, num_classes, shape):
        """The `HierarchicalAttentionHyperModel` searching ``model_name`` on documents of
        ``shape`` ``(S, W)``."""
        from keras_adl.recipes.documents.hypermodels import HierarchicalAttentionHyperModel

        encoder = self.spec.preset(model_name)["encoder"]
        return HierarchicalAttentionHyperModel(vocab_size, num_classes, *shape, encoder=encoder)

    def tune(self, model_name, trials, epochs, samples, out, options):
        """Random search on the development split's accuracy (the test documents stay for the
        reported figures)."""
        documents = self.documents(options.get("data"), samples)
        train_docs, train_labels, development = self.development(
            documents.train_docs, documents.train_labels
        )
        if development is None:
            raise too_few_to_tune(len(train_docs), "training documents")
        tokenizer = self.tokenizer(
            train_docs, options.get("max_sentences"), options.get("max_words")
        )
        batch = min(self.spec.batch_size, len(train_docs))
        shape = (tokenizer.max_sentences, tokenizer.max_words)
        return search(
            self.hypermodel(
                model_name, tokenizer.vocabulary_size, len(documents.class_names), shape
            ),
            ("val_accuracy", "max"),
            trials,
            out,
            f"{self.name}_{model_name}",
            tokenizer.dataset(train_docs, train_labels, batch, seed=0),
            validation_data=data.development_dataset(tokenizer, development, batch),
            epochs=epochs,
            shuffle=False,
        )

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """A SavedModel with a raw-text signature ``documents [None]`` string."""
        with open(os.path.join(run_dir, spec.TOKENIZER_FILE)) as f:
            tokenizer = DocumentTokenizer.from_config(json.load(f))
        export_han(model, export_dir, tokenizer, class_names=record["class_names"])
        write_task_file(export_dir, task=record["task"], model=record["model"])

    def predict(self, export_dir, inputs, info):
        predict(export_dir, inputs)


class NeedleTask(HanTask):
    """Generated documents whose class is given by one key sentence."""

    shape = spec.NEEDLE_SHAPE
    sentences = spec.NEEDLE_SENTENCES

    def documents(self, source, samples):
        return data.needle(samples, sentences=self.sentences)

    def development(self, documents, labels):
        return data.needle_development(documents, labels, self.sentences)


class LongNeedleTask(NeedleTask):
    """The needle among 20 to 40 sentences."""

    shape = spec.NEEDLE_LONG_SHAPE
    sentences = spec.NEEDLE_LONG_SENTENCES


class FortunesTask(HanTask):
    """Debian's fortunes by topic."""

    shape = spec.FORTUNES_SHAPE

    def documents(self, source, samples):
        return data.fortune_topics(source, samples)


class UserDocumentsTask(HanTask):
    """The user's labelled documents; their ``(S, W)`` follows the data."""

    def documents(self, source, samples):
        return data.user_documents(source, samples)


RECIPES = {
    "needle": NeedleTask(spec.NEEDLE),
    "needle_long": LongNeedleTask(spec.NEEDLE_LONG),
    "fortunes": FortunesTask(spec.FORTUNES),
    "documents": UserDocumentsTask(spec.DOCUMENTS),
}

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
from keras_adl.recipes.documents.streaming import StreamedDocuments
from keras_adl.text import DocumentTokenizer
from keras_adl.training.fit import fit
from keras_adl.training.rundir import write_task_file

# What `HanTask.data` hands to the other hooks: the `data.Documents` (their training documents
# ``None`` when streamed), the tokenizer, the development split or ``None``, the training
# documents' count, and ``batches(batch_size, seed) -> (dataset, steps per epoch or None)``.
HanData = collections.namedtuple(
    "HanData", "documents tokenizer development train_documents batches"
)


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

    def prepare(self, options, samples):
        """``(HanData, cut)``: the documents split, the tokenizer built on the training ones,
        and the shares of their sentences and words its shape cuts (`data.cut_shares`)."""
        documents = self.documents(options.get("data"), samples)
        train_docs, train_labels, development = self.development(
            documents.train_docs, documents.train_labels
        )
        documents = documents._replace(train_docs=train_docs, train_labels=train_labels)
        lengths = data.document_lengths(train_docs)  # counted once: the sizes and the share cut
        tokenizer = self.tokenizer(
            train_docs, options.get("max_sentences"), options.get("max_words"), lengths
        )
        cut = data.cut_shares(*lengths, tokenizer.max_sentences, tokenizer.max_words)

        def batches(batch_size, seed=0):
            batch_size = min(batch_size, len(train_docs))
            return tokenizer.dataset(train_docs, train_labels, batch_size, seed=seed), None

        return HanData(documents, tokenizer, development, len(train_docs), batches), cut

    def data(self, run):
        han_data, cut = self.prepare(run.options, run.samples)
        if han_data.development is None:
            without_development(
                run,
                f"{han_data.train_documents} training documents are too few to set some aside "
                f"(it takes {MIN_FOR_DEVELOPMENT})",
            )
        with open(run.path(spec.TOKENIZER_FILE), "w") as f:
            json.dump(han_data.tokenizer.to_config(), f)
        self._record(run, han_data, cut)
        return han_data

    def _record(self, run, han_data, cut):
        """Prints the shares the tokenizer's shape cuts and records the data in ``run.json``."""
        tokenizer, development = han_data.tokenizer, han_data.development
        shape = (tokenizer.max_sentences, tokenizer.max_words)
        print(
            f"documents of at most {shape[0]} sentences of {shape[1]} words: "
            f"{cut['sentences_cut']:.1%} of the training sentences and "
            f"{cut['words_cut']:.1%} of their words are cut (--max-sentences, --max-words)"
        )
        run.record.update(
            data=run.options.get("data") or run.task,
            class_names=han_data.documents.class_names,
            max_sentences=shape[0],
            max_words=shape[1],
            train_documents=han_data.train_documents,
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
        dataset, steps = han_data.batches(run.batch_size, seed=0)
        batch_size = min(run.batch_size, han_data.train_documents)
        validation = None
        if han_data.development is not None:  # its loss picks the best epoch
            validation = data.development_dataset(
                han_data.tokenizer, han_data.development, batch_size
            )
        # shuffled by tf.data
        return fit(
            run, model, dataset, steps_per_epoch=steps, shuffle=False, validation_data=validation
        )

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
        han_data, _ = self.prepare(options, samples)
        if han_data.development is None:
            raise too_few_to_tune(han_data.train_documents, "training documents")
        tokenizer = han_data.tokenizer
        batch = min(self.spec.batch_size, han_data.train_documents)
        dataset, steps = han_data.batches(batch, seed=0)
        shape = (tokenizer.max_sentences, tokenizer.max_words)
        return search(
            self.hypermodel(
                model_name,
                tokenizer.vocabulary_size,
                len(han_data.documents.class_names),
                shape,
            ),
            ("val_accuracy", "max"),
            trials,
            out,
            f"{self.name}_{model_name}",
            dataset,
            validation_data=data.development_dataset(tokenizer, han_data.development, batch),
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
    """The user's labelled documents, streamed from disk (`streaming.StreamedDocuments`);
    their ``(S, W)`` follows the data."""

    def documents(self, source, samples):
        return data.user_documents(source, samples)

    def prepare(self, options, samples):
        """`HanTask.prepare` of documents streamed from disk: split, counted and written per
        class in one pass; each epoch reads them again."""
        max_sentences, max_words = options.get("max_sentences"), options.get("max_words")
        streamed = StreamedDocuments(
            options.get("data"), samples, max(spec.MAX_SENTENCES, max_sentences or 0)
        )
        tokenizer = streamed.tokenizer(max_sentences, max_words)
        cut = streamed.lengths.cut_shares(tokenizer.max_sentences, tokenizer.max_words)
        documents = data.Documents(
            None, None, streamed.test_docs, streamed.test_labels, streamed.class_names, None
        )
        print(
            f"{streamed.documents} documents read: {streamed.train_documents} train, "
            f"{len(streamed.test_docs)} test kept"
        )

        def batches(batch_size, seed=0):
            return streamed.dataset(tokenizer, batch_size, seed)

        han_data = HanData(
            documents, tokenizer, streamed.development, streamed.train_documents, batches
        )
        return han_data, cut


RECIPES = {
    "needle": NeedleTask(spec.NEEDLE),
    "needle_long": LongNeedleTask(spec.NEEDLE_LONG),
    "fortunes": FortunesTask(spec.FORTUNES),
    "documents": UserDocumentsTask(spec.DOCUMENTS),
}

"""The pretraining tasks: masked-LM (`MaskedLmPretraining`) and causal-LM
(`LanguageModelPretraining`) pretraining on a corpus, the two kinds of `Pretraining`."""

import dataclasses

from keras_adl.data.text_streams import temporary_file
from keras_adl.recipes._development import MIN_FOR_DEVELOPMENT, without_development
from keras_adl.recipes._pictures import step_log
from keras_adl.recipes.pretraining import data, spec
from keras_adl.recipes.pretraining.evaluate import causal_lm_figures, masked_lm_figures
from keras_adl.recipes.pretraining.plots import pictures
from keras_adl.recipes.pretraining.serving import make_generation_endpoints, predict_generation
from keras_adl.recipes.pretraining.streaming import StreamedCorpus
from keras_adl.recipes.pretraining.transformer_task import SearchData, TransformerTask, model_sizes
from keras_adl.training.fit import fit
from keras_adl.training.rundir import RecipeError


@dataclasses.dataclass
class Corpus:
    """What `Pretraining.data` hands to the other hooks: the vocabulary, the training and
    held-out documents, the settings, the development split as ``validation_data`` (or
    ``None``), the steps per epoch, the masked-LM ``segments``, the causal LM's ``windows``
    and the step log the fit records."""

    tokenizer: object
    train: list
    held_out: list
    settings: dict
    validation: object
    segments: str
    steps: int = None
    windows: tuple = None
    log: object = None
    streamed: object = None  # a corpus streamed from disk (`streaming.StreamedCorpus`)
    encoded: object = None  # the causal LM's pieces of it, on disk (`streaming.EncodedPieces`)


class Pretraining(TransformerTask):
    """Pretraining on a corpus: the tasks differ in their examples (`count`, `dataset`), their
    development split (`development_data`), their figures and their exports."""

    # The step log's quantities, the pictures' title and the search's objective.
    logged = ()
    what = ""
    objective = ()

    def development_data(self, tokenizer, development, batch_size, length, segments, batches):
        """The development documents as Keras' ``validation_data`` (``batches`` batches), or
        ``None`` when they hold too little text for it."""
        raise NotImplementedError

    def count(self, run, corpus):
        """Sets ``corpus.steps`` (and the task's examples) and records them."""
        raise NotImplementedError

    def dataset(self, run, corpus):
        """The endless training batches."""
        raise NotImplementedError

    def figures(self, run, model, corpus):
        """The run's figures on the held-out documents."""
        raise NotImplementedError

    def data(self, run):
        """A ``--data`` corpus is streamed from disk (`streaming.StreamedCorpus`); the default
        corpus (GCIDE and the fortunes, of a fixed size) is read into memory."""
        if run.options.get("data") is not None:
            return self.streamed_data(run)
        sizes = model_sizes(run.options)  # refused before the corpus is read
        segments = run.options.get("segments", spec.SEGMENTS)
        given, held_out = data.corpus(
            run.options.get("data"), run.samples, run.options.get("segments") == "pairs"
        )
        train, development = data.development_split(given)
        tokenizer = data.learn_tokenizer(train, run.options["vocab_size"])
        data.save_tokenizer(tokenizer, run.out)
        preset = self.spec.preset(run.model)
        validation = None
        if development is not None:  # its loss picks the best epoch
            validation = self.development_data(
                tokenizer,
                development,
                run.batch_size,
                preset["sequence_length"],
                segments,
                spec.DEVELOPMENT_BATCHES,
            )
        if validation is None:
            train = self._without_development(run, given, train, development)
        else:
            run.record["development_documents"] = len(development)
        settings = dict(preset, **sizes)
        run.record.update(
            settings=settings,
            data=run.options.get("data") or "gcide+fortunes",
            train_documents=len(train),
            held_out_documents=len(held_out),
            vocabulary=tokenizer.size,
        )
        corpus = Corpus(tokenizer, train, held_out, settings, validation, segments)
        self.count(run, corpus)
        return corpus

    def streamed_data(self, run):
        """`data` of a ``--data`` corpus, streamed from disk (`streaming.StreamedCorpus`):
        split and sampled in one pass, the tokenizer learned on the sample."""
        sizes = model_sizes(run.options)  # refused before the corpus is read
        segments = run.options.get("segments", spec.SEGMENTS)
        streamed = StreamedCorpus(run.options["data"], run.samples, pairs=segments == "pairs")
        tokenizer = data.learn_tokenizer(streamed.sample, run.options["vocab_size"])
        data.save_tokenizer(tokenizer, run.out)
        settings = dict(self.spec.preset(run.model), **sizes)
        validation = None
        if streamed.development:
            validation = self.development_data(
                tokenizer,
                streamed.development,
                run.batch_size,
                settings["sequence_length"],
                segments,
                spec.DEVELOPMENT_BATCHES,
            )
        if validation is None:
            without_development(
                run,
                f"{len(streamed.sample)} distinct training documents are too few to set some "
                f"aside (it takes {MIN_FOR_DEVELOPMENT}), or those set aside hold too little "
                "text to score",
            )
        else:
            run.record["development_documents"] = len(streamed.development)
        run.record.update(
            settings=settings,
            data=run.options["data"],
            streamed=True,
            documents=streamed.documents,
            train_documents=streamed.train_documents,
            held_out_documents=len(streamed.held_out),
            vocabulary=tokenizer.size,
        )
        corpus = Corpus(tokenizer, None, streamed.held_out, settings, validation, segments)
        corpus.streamed = streamed
        self.read_stream(run, corpus)
        self.count(run, corpus)
        return corpus

    def read_stream(self, run, corpus):
        """What the task prepares of a streamed corpus before counting its examples."""

    @staticmethod
    def _without_development(run, given, train, development):
        """The training documents of a run without a development split (`without_development`):
        a split too small to score goes back into training."""
        reason = (
            f"{len(set(given))} distinct training documents are too few to set some aside "
            f"(it takes {MIN_FOR_DEVELOPMENT})"
        )
        if development is not None:
            train = given  # back into training
            reason = f"the {len(development)} documents set aside hold too little text to score"
        without_development(run, reason)
        return train

    def build(self, run, corpus):
        sizes = {k: v for k, v in corpus.settings.items() if k in spec.SIZES}
        return run.build(
            self.build_model,
            run.model,
            corpus.tokenizer.size,
            total_steps=corpus.steps * run.epochs,
            segments=corpus.segments,
            **sizes,
        )

    def fit(self, run, model, corpus):
        dataset = self.dataset(run, corpus)
        corpus.log = step_log(run, self.logged)
        return fit(
            run,
            model,
            dataset,
            steps_per_epoch=corpus.steps,
            shuffle=False,
            validation_data=corpus.validation,
        )

    def evaluate(self, run, model, corpus):
        texts = [s for d in corpus.held_out for s in data.sentences_of(d)]
        length = corpus.settings["sequence_length"]
        pictures(run, model, corpus.log, corpus.tokenizer, texts, length, self.what)
        return self.figures(run, model, corpus)

    def search_data(self, model_name, samples, options):
        """The training documents train reads, scored on its development split (the held-out
        documents stay for the reported figures)."""
        segments = options.get("segments", spec.SEGMENTS)
        length, batch_size = spec.SIZES["sequence_length"], self.spec.batch_size
        streamed = None
        if options.get("data") is not None:  # streamed from disk, as train reads it
            streamed = StreamedCorpus(options["data"], samples, pairs=segments == "pairs")
            train, development = None, streamed.development or None
            tokenizer = data.learn_tokenizer(streamed.sample, options["vocab_size"])
        else:
            blocks = options.get("segments") == "pairs"
            train, development = data.development_split(data.corpus(None, samples, blocks)[0])
            tokenizer = data.learn_tokenizer(train, options["vocab_size"])
        validation = None
        if development is not None:
            validation = self.development_data(
                tokenizer, development, batch_size, length, segments, spec.EVALUATION_BATCHES
            )
        if validation is None:
            raise RecipeError(
                f"tune scores trials on a development split, and the corpus is too small "
                f"to set one aside (it takes {MIN_FOR_DEVELOPMENT} distinct training "
                f"documents with text for a batch)"
            )
        if streamed is not None:
            corpus = Corpus(tokenizer, None, streamed.held_out, {}, None, segments)
            corpus.streamed = streamed
            steps, dataset = self.streamed_search_batches(corpus, batch_size, length, options)
        else:
            steps, dataset = self.search_batches(tokenizer, train, batch_size, length, options)
        return SearchData(tokenizer, dataset, steps, validation, self.objective)

    def streamed_search_batches(self, corpus, batch_size, length, options):
        """``(steps per epoch, batches)`` of ``tune`` on a corpus streamed from disk."""
        raise NotImplementedError

    def search_batches(self, tokenizer, train, batch_size, length, options):
        """``(steps per epoch, batches)`` of ``tune``."""
        raise NotImplementedError


class MaskedLmPretraining(Pretraining):
    """BERT's masked LM (and, with ``--segments pairs``, next-sentence prediction); reports
    held-out masked-token accuracy against the most frequent token. Not exported: its encoder
    is used through ``finetune --init``."""

    logged = ("loss", "mlm_accuracy")
    what = "masked LM"
    objective = ("val_mlm_accuracy", "max")

    def development_data(self, tokenizer, development, batch_size, length, segments, batches):
        return data.mlm_development(tokenizer, development, batch_size, length, segments, batches)

    def count(self, run, corpus):
        if corpus.streamed is not None:
            streamed = corpus.streamed
            pairs = corpus.segments == "pairs"
            examples = streamed.train_pairs if pairs else streamed.train_documents
            if not examples:
                raise RecipeError(
                    f"{streamed.data}: no training document holds two sentences, so there is no "
                    "sentence pair for --segments pairs (sentences end at . ! ? ; or a line end)"
                )
        else:
            examples = data.mlm_examples(corpus.train, corpus.segments)
        corpus.steps = run.options.get("steps") or max(1, examples // run.batch_size)
        run.record.update(segments=corpus.segments, examples=examples, steps_per_epoch=corpus.steps)

    def dataset(self, run, corpus):
        length = corpus.settings["sequence_length"]
        documents = corpus.train
        if corpus.streamed is not None:
            documents = corpus.streamed.shuffled_documents(seed=0)
        return data.mlm_dataset(
            corpus.tokenizer, documents, run.batch_size, length, 0, corpus.segments
        )

    def figures(self, run, model, corpus):
        length = corpus.settings["sequence_length"]
        return masked_lm_figures(
            model, corpus.tokenizer, corpus.held_out, run.batch_size, length, corpus.segments
        )

    def search_batches(self, tokenizer, train, batch_size, length, options):
        segments = options.get("segments", spec.SEGMENTS)
        examples = data.mlm_examples(train, segments)
        steps = options.get("steps") or max(1, examples // batch_size)
        return steps, data.mlm_dataset(tokenizer, train, batch_size, length, 0, segments)

    def streamed_search_batches(self, corpus, batch_size, length, options):
        streamed = corpus.streamed
        pairs = corpus.segments == "pairs"
        examples = streamed.train_pairs if pairs else streamed.train_documents
        steps = options.get("steps") or max(1, examples // batch_size)
        documents = streamed.shuffled_documents(seed=0)
        return steps, data.mlm_dataset(
            corpus.tokenizer, documents, batch_size, length, 0, corpus.segments
        )

    def serving_fn(self, model, tokenizer, record):
        raise RecipeError(
            "a pretrain_mlm run is used through `keras-adl train finetune --init RUN`; "
            "export the finetune run (or a pretrain_lm run)"
        )

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        self.serving_fn(model, None, record)

    def predict(self, export_dir, inputs, info):
        self.serving_fn(None, None, info)


class LanguageModelPretraining(Pretraining):
    """GPT's causal LM on windows of the corpus; reports held-out perplexity against a
    unigram model and prints a generated continuation. Its export takes raw prompt strings
    and the sampling settings and returns text."""

    logged = ("loss", "perplexity")
    what = "causal LM"
    objective = ("val_perplexity", "min")

    def development_data(self, tokenizer, development, batch_size, length, segments, batches):
        return data.lm_development(tokenizer, development, batch_size, length, batches)

    def read_stream(self, run, corpus):
        """The training documents tokenized once into a file of pieces (`EncodedPieces`)."""
        corpus.encoded = corpus.streamed.encode(
            corpus.tokenizer, temporary_file("keras-adl-pieces-")
        )

    def count(self, run, corpus):
        length = corpus.settings["sequence_length"]
        name = run.options.get("data") or "the corpus"
        tokenizer = corpus.tokenizer
        if corpus.encoded is not None:
            windows = corpus.encoded.windows(length)
            if not windows:
                raise RecipeError(
                    f"{name} (training part) is too short for the causal LM: "
                    f"{corpus.encoded.pieces} pieces give no window of {length + 1}. Give more "
                    f"text (its held-out part is {spec.HELD_OUT_FRACTION:.0%} of the documents)."
                )
            corpus.windows = (None, None) + data.lm_windows_of(
                tokenizer, corpus.held_out, length, f"{name} (held-out part)"
            )
            corpus.steps = run.options.get("steps") or max(1, windows // run.batch_size)
            run.record.update(
                train_windows=windows,
                train_pieces=corpus.encoded.pieces,
                steps_per_epoch=corpus.steps,
            )
            return
        inputs, targets = data.lm_windows_of(
            tokenizer, corpus.train, length, f"{name} (training part)"
        )
        held_inputs, held_targets = data.lm_windows_of(
            tokenizer, corpus.held_out, length, f"{name} (held-out part)"
        )
        corpus.windows = (inputs, targets, held_inputs, held_targets)
        corpus.steps = run.options.get("steps") or max(1, len(inputs) // run.batch_size)
        run.record.update(train_windows=len(inputs), steps_per_epoch=corpus.steps)

    def dataset(self, run, corpus):
        if corpus.encoded is not None:
            length = corpus.settings["sequence_length"]
            return corpus.encoded.dataset(length, run.batch_size)
        inputs, targets = corpus.windows[:2]
        return data.lm_dataset(inputs, targets, run.batch_size)

    def figures(self, run, model, corpus):
        length = corpus.settings["sequence_length"]
        counts = None if corpus.encoded is None else corpus.encoded.counts
        return causal_lm_figures(
            model,
            corpus.tokenizer,
            corpus.windows,
            corpus.held_out,
            run.batch_size,
            length,
            counts=counts,
        )

    def search_batches(self, tokenizer, train, batch_size, length, options):
        inputs, targets = data.lm_windows_of(tokenizer, train, length)
        steps = options.get("steps") or max(1, len(inputs) // batch_size)
        return steps, data.lm_dataset(inputs, targets, batch_size)

    def streamed_search_batches(self, corpus, batch_size, length, options):
        encoded = corpus.streamed.encode(corpus.tokenizer, temporary_file("keras-adl-pieces-"))
        windows = encoded.windows(length)
        if not windows:
            raise RecipeError(
                f"{options['data']} (training part) is too short for the causal LM: "
                f"{encoded.pieces} pieces give no window of {length + 1}"
            )
        steps = options.get("steps") or max(1, windows // batch_size)
        return steps, encoded.dataset(length, batch_size)

    generates = True

    def serving_fn(self, model, tokenizer, record):
        return make_generation_endpoints(model, tokenizer, record["settings"]["sequence_length"])

    def predict(self, export_dir, inputs, info):
        """Prints each prompt and its continuation: greedy, or sampled with ``info``'s
        ``sampling`` settings."""
        predict_generation(export_dir, inputs, info.get("sampling"))

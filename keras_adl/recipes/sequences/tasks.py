"""The sequences family's tasks: the generated ``dates`` and ``sort`` (`GeneratedTask`) and the
user's text pairs (`PairsTask`)."""

import collections
import os

import keras
import tensorflow as tf

from keras_adl.data.dates import SOURCE_VOCAB, TARGET_LENGTH, TARGET_VOCAB
from keras_adl.recipes._development import development_rows
from keras_adl.recipes._recipe import TaskRecipe
from keras_adl.recipes._tuning import search
from keras_adl.recipes.sequences import data, spec
from keras_adl.recipes.sequences.build import (
    OWN_DECODERS,
    build_pointer_network,
    build_seq2seq,
    decode_fn,
)
from keras_adl.recipes.sequences.evaluate import (
    EXACT_ONLY,
    choose_memory_threshold,
    evaluate_dates,
    evaluate_pairs,
    evaluate_sort,
    memory_lookup,
    score_pairs,
    translate,
    with_memory,
)
from keras_adl.recipes.sequences.retrieval import MatchInput
from keras_adl.recipes.sequences.serving import (
    export_seq2seq,
    export_text_pairs,
    make_pointer_serving_fn,
    predict,
)
from keras_adl.recipes.sequences.streaming import MEMORY_MAX_PAIRS, StreamedPairs, count_pairs
from keras_adl.text.translation_memory import TranslationMemory
from keras_adl.training.export import export_serving_fn
from keras_adl.training.fit import fit
from keras_adl.training.rundir import MODEL_FILE, RecipeError, write_task_file

# What `PairsTask.data` hands to the other hooks.
# ``memory``: all the training pairs, or None (--memory off); ``development``: the pairs set
# aside from training to choose the memory's threshold (empty lists when there are too few).
# ``streamed``: the training pairs on disk (`streaming.StreamedPairs`; ``sources`` and
# ``targets`` are then None), or None.
PairsData = collections.namedtuple(
    "PairsData",
    "tokenizer sources targets held_out memory development streamed",
    defaults=(None,),
)


class SequenceTask(TaskRecipe):
    """A task whose exports read raw strings and print one output each (`serving.predict`)."""

    def predict(self, export_dir, inputs, info):
        predict(export_dir, inputs, info)

    def task_info(self, record):
        """What the export's task file holds besides the task and model names."""
        return {}

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        self.export_model(run_dir, record, model, export_dir, beam_width)
        write_task_file(
            export_dir, task=record["task"], model=record["model"], **self.task_info(record)
        )

    def export_model(self, run_dir, record, model, export_dir, beam_width):
        """Writes the SavedModel with the task's serving function."""
        raise NotImplementedError


class GeneratedTask(SequenceTask):
    """A task of generated examples: fresh ones (their own seed) give the held-out loss watched
    every epoch, and others the figures."""

    def arrays(self, samples, seed):
        """``(inputs, targets, raw)`` of ``samples`` generated examples (`data`)."""
        raise NotImplementedError

    def build_model(self, model_name, jit_compile=True, **overrides):
        """The compiled model ``keras-adl train TASK --model MODEL`` trains; ``overrides``
        replace preset values."""
        raise NotImplementedError

    def hypermodel(self, model_name):
        """The HyperModel searched by ``keras-adl tune TASK --model MODEL`` (the ``tuner``
        extra)."""
        from keras_adl.recipes.sequences import hypermodels

        return self.hypermodel_of(hypermodels, model_name)

    def hypermodel_of(self, hypermodels, model_name):
        """`hypermodel`, from the family's ``hypermodels`` module."""
        raise NotImplementedError

    def data(self, run):
        x, y, _ = self.arrays(run.samples, seed=0)
        # Fresh examples (seed 2; the figures' are seed 1) whose loss picks the best epoch.
        validation = self.arrays(spec.VALIDATION_EXAMPLES, seed=2)[:2]
        return x, y, validation

    def build(self, run, arrays):
        model = run.build(self.build_model, run.model)
        run.record["settings"] = self.spec.preset(run.model)
        return model

    def fit(self, run, model, arrays):
        x, y, validation = arrays
        return fit(
            run,
            model,
            x,
            y,
            batch_size=run.batch_size,
            shuffle=True,
            validation_data=validation,
            validation_batch_size=run.batch_size,
        )

    def evaluate(self, run, model, arrays):
        _, _, test = self.arrays(spec.HELD_OUT, seed=1)
        return self.figures(run.model, model, test, run.out)

    def figures(self, model_name, model, test, out):
        """The held-out figures on the generated ``test`` examples, and the picture."""
        raise NotImplementedError

    def tune(self, model_name, trials, epochs, samples, out, options):
        x, y, _ = self.arrays(samples, seed=0)
        validation = self.arrays(max(samples // 5, 64), seed=1)[:2]
        return search(
            self.hypermodel(model_name),
            "val_loss",
            trials,
            out,
            f"{self.name}_{model_name}",
            x,
            y,
            validation_data=validation,
            epochs=epochs,
            batch_size=self.spec.batch_size,
        )


class DatesTask(GeneratedTask):
    """Human-written dates to ISO ``YYYY-MM-DD``, character by character."""

    def arrays(self, samples, seed):
        return data.date_examples(samples, seed)

    def build_model(self, model_name, jit_compile=True, **overrides):
        preset = self.spec.preset(model_name)
        sizes = (len(SOURCE_VOCAB), len(TARGET_VOCAB))
        return build_seq2seq(model_name, preset, *sizes, jit_compile, **overrides)

    def hypermodel_of(self, hypermodels, model_name):
        sizes = (len(SOURCE_VOCAB), len(TARGET_VOCAB))
        return hypermodels.SEQ2SEQ_HYPERMODELS[model_name](*sizes)

    def figures(self, model_name, model, test, out):
        return evaluate_dates(model_name, model, test, out)

    def export_model(self, run_dir, record, model, export_dir, beam_width):
        export_seq2seq(
            model,
            export_dir,
            SOURCE_VOCAB,
            TARGET_VOCAB,
            TARGET_LENGTH - 1,
            beam_width=beam_width,
            decode=OWN_DECODERS.get(record["model"]),  # else greedy or beam search
        )


class SortTask(GeneratedTask):
    """The pointer network outputs the positions that sort a list of numbers."""

    def arrays(self, samples, seed):
        return data.sort_examples(samples, seed)

    def build_model(self, model_name, jit_compile=True, **overrides):
        return build_pointer_network(self.spec.preset(model_name), jit_compile, **overrides)

    def hypermodel_of(self, hypermodels, model_name):
        return hypermodels.PointerNetworkHyperModel()

    def figures(self, model_name, model, test, out):
        return evaluate_sort(model, test, out)

    def export_model(self, run_dir, record, model, export_dir, beam_width):
        export_serving_fn(model, export_dir, make_pointer_serving_fn(model))


class PairsTask(SequenceTask):
    """Translation of the user's ``source<TAB>target`` pairs or gettext catalogs; its runs and
    exports are scored on other pairs by ``keras-adl evaluate`` (`evaluate_file`)."""

    def build_model(
        self, model_name, source_vocab_size, target_vocab_size, jit_compile=True, **overrides
    ):
        """The compiled model ``keras-adl train pairs --model MODEL`` trains over the
        tokenizer's vocabularies; ``overrides`` replace preset values."""
        preset = self.spec.preset(model_name)
        sizes = (source_vocab_size, target_vocab_size)
        return build_seq2seq(model_name, preset, *sizes, jit_compile, **overrides)

    def data(self, run):
        max_length, options = run.options["max_length"], run.options
        cased = data.cased_target(options)  # refused before the data is read
        if self.streams(options):
            return self.streamed_data(run, cased)
        sources, targets, held_out, available = data.training_pairs(options, run.samples)
        tokenizer = data.pair_tokenizer(sources, targets, options, cased)  # training pairs only
        memory, development = None, ([], [])
        if options.get("memory", "auto") in ("auto", "input"):
            memory = (list(sources), list(targets))  # the long pairs too: the memory has them
        sources, targets, too_long = data.fitting_pairs(tokenizer, sources, targets, max_length)
        if not sources:
            raise RecipeError(
                f"every training pair is longer than --max-length {max_length} tokens"
            )
        rows = development_rows(len(sources), spec.MEMORY_DEVELOPMENT_PAIRS)
        if memory is not None and rows is not None:  # set aside: the threshold is chosen on them
            development = ([sources[i] for i in rows[1]], [targets[i] for i in rows[1]])
            sources, targets = [sources[i] for i in rows[0]], [targets[i] for i in rows[0]]
        self._record(run, tokenizer, cased)
        run.record.update(
            train_pairs=len(sources),
            train_pairs_available=available,
            train_pairs_too_long=too_long,
            held_out_pairs=len(held_out[0]),
            memory=options.get("memory", "auto") if memory is not None else "off",
            memory_pairs=len(memory[0]) if memory is not None else 0,
            memory_development_pairs=len(development[0]),
        )
        data.write_tokenizer(tokenizer, run.out)
        return PairsData(tokenizer, sources, targets, held_out, memory, development)

    def _record(self, run, tokenizer, cased):
        """Records a run's settings and tokenizer in ``run.json`` (its pairs' counts follow)."""
        run.record.update(
            settings=self.spec.preset(run.model),
            max_length=run.options["max_length"],
            data=run.options["data"],
            tokens=run.options["tokens"],
            target_case="keep" if cased else "fold",
            copy_through=list(tokenizer.copy.classes)
            + (["foreign"] if tokenizer.copy.foreign else []),
            source_vocabulary=tokenizer.source_size,
            target_vocabulary=tokenizer.target_size,
        )

    @staticmethod
    def streams(options):
        """Whether ``--data`` is streamed from disk (`streaming.StreamedPairs`): a
        ``source<TAB>target`` file trained without a memory, by ``--memory off`` or by
        ``--memory auto`` on more than `MEMORY_MAX_PAIRS` pairs (said in one line)."""
        path, memory = options["data"], options.get("memory", "auto")
        if path.startswith("gettext:") or path.endswith((".po", ".mo")):
            return False
        if memory == "off":
            return os.path.isfile(path)
        if memory != "auto" or not os.path.isfile(path):
            return False
        if count_pairs(path, MEMORY_MAX_PAIRS) <= MEMORY_MAX_PAIRS:
            return False
        print(
            f"--memory auto: {path} holds more than {MEMORY_MAX_PAIRS:,} pairs, more than a "
            "translation memory here keeps; the model is trained alone on the pairs streamed "
            "from disk (--memory input keeps a memory of them all)"
        )
        return True

    def streamed_data(self, run, cased):
        """`data` of pairs streamed from disk (`streaming.StreamedPairs`): split and sampled in
        one pass, the tokenizer learned on the sample, the pairs that fit written once."""
        options, max_length = run.options, run.options["max_length"]
        validation = None
        if options.get("validation"):
            validation = data.load_pairs(options["validation"])
        streamed = StreamedPairs(
            options["data"], run.samples, options["validation_split"], validation
        )
        tokenizer = data.pair_tokenizer(*streamed.sample, options, cased)
        sample = len(streamed.sample[0])
        streamed.sample = None  # learned: no longer needed
        if not streamed.fit(tokenizer, max_length):
            raise RecipeError(
                f"every training pair is longer than --max-length {max_length} tokens"
            )
        self._record(run, tokenizer, cased)
        run.record.update(
            streamed=True,
            tokenizer_sample_pairs=sample,
            train_pairs=streamed.fitting,
            train_pairs_available=streamed.train_pairs,
            train_pairs_too_long=streamed.train_pairs - streamed.fitting,
            held_out_pairs=len(streamed.held_out[0]),
            memory="off",
            memory_pairs=0,
            memory_development_pairs=0,
        )
        data.write_tokenizer(tokenizer, run.out)
        return PairsData(tokenizer, None, None, streamed.held_out, None, ([], []), streamed)

    @staticmethod
    def match_input(run, tokenizer):
        """The `MatchInput` of a ``--memory input`` run, else None."""
        return MatchInput(tokenizer) if run.options.get("memory") == "input" else None

    def build(self, run, pairs):
        tokenizer = pairs.tokenizer
        match_input = self.match_input(run, tokenizer)
        source_size = match_input.vocab_size if match_input else tokenizer.source_size
        return run.build(self.build_model, run.model, source_size, tokenizer.target_size)

    def fit(self, run, model, pairs):
        tokenizer, max_length = pairs.tokenizer, run.options["max_length"]
        count = pairs.streamed.fitting if pairs.streamed else len(pairs.sources)
        batch_size = min(run.batch_size, count)
        match_input = self.match_input(run, tokenizer)
        fitting = None
        if pairs.held_out[0]:
            fitting = data.fitting_pairs(tokenizer, *pairs.held_out, max_length)[:2]
        # The held-out pairs' loss picks the best epoch (Keras' validation data).
        validation, steps = None, None
        if match_input is None:
            if pairs.streamed is not None:
                train, steps = pairs.streamed.dataset(tokenizer, batch_size, max_length)
            else:
                train = tokenizer.dataset(
                    pairs.sources, pairs.targets, batch_size, max_length, max_length
                )
            if fitting and fitting[0]:
                validation = data.held_out_dataset(tokenizer, *fitting, batch_size, max_length)
        else:  # each pair reads its best match among the other training pairs
            memory = TranslationMemory(pairs.sources, pairs.targets)
            train = match_input.dataset(
                memory, pairs.sources, pairs.targets, batch_size, max_length
            )
            if fitting and fitting[0]:
                size = min(batch_size, len(fitting[0]))
                validation = match_input.dataset(
                    memory, *fitting, size, max_length, stored=False, shuffle=False
                )
        return fit(
            run, model, train, steps_per_epoch=steps, shuffle=False, validation_data=validation
        )

    def evaluate(self, run, model, pairs):
        max_length = run.options["max_length"]
        memory, threshold = None, None
        match_input = self.match_input(run, pairs.tokenizer)
        if pairs.memory is not None:
            threshold = self.memory_threshold(run, model, pairs)
            data.write_memory(run.out, *pairs.memory, threshold, match_input is not None)
            memory = TranslationMemory(*pairs.memory)
        return evaluate_pairs(
            run.model,
            model,
            pairs.tokenizer,
            *pairs.held_out,
            max_length,
            run.out,
            memory=memory,
            threshold=threshold,
            match_input=match_input,
        )

    def memory_threshold(self, run, model, pairs):
        """The score from which the memory's match is trusted over the model: the best on the
        development pairs (`choose_memory_threshold`, in a memory without them), or
        `EXACT_ONLY` when there are none. Recorded in ``run.json`` with the development
        figures."""
        sources, targets = pairs.development
        if not sources:
            run.record["memory_threshold"] = EXACT_ONLY
            return EXACT_ONLY
        aside = set(sources)
        kept = [(s, t) for s, t in zip(*pairs.memory) if s not in aside]
        if not kept:  # every stored source is a development one (a file of repeats)
            run.record["memory_threshold"] = EXACT_ONLY
            return EXACT_ONLY
        memory, max_length = TranslationMemory(*zip(*kept)), run.options["max_length"]
        match_input, encode = self.match_input(run, pairs.tokenizer), None
        if match_input is not None:

            def encode(batch):
                return match_input.encode(memory, batch, max_length)

        predictions, _, _ = translate(
            run.model, model, pairs.tokenizer, sources, max_length, encode
        )
        found = memory_lookup(memory, sources, pairs.tokenizer.copy)
        threshold, figures = choose_memory_threshold(pairs.tokenizer, predictions, found, targets)
        run.record.update(memory_threshold=threshold, memory_development=figures)
        print(
            f"  memory: a match scoring {threshold:.2f} or more answers (development chrF "
            f"{figures['chrf']:.1f}; model {figures['model_chrf']:.1f}, memory "
            f"{figures['memory_chrf']:.1f})"
        )
        return threshold

    def task_info(self, record):
        return {"max_length": record["max_length"]}

    @staticmethod
    def run_memory(run_dir, record):
        """`data.read_memory` of a run, refused in one line for a ``--memory input`` run
        without it (stopped before its figures): its model reads inputs only the memory
        makes.

        Raises:
            RecipeError: a ``--memory input`` run without its memory.
        """
        stored = data.read_memory(run_dir)
        wanted = record.get("options", {}).get("memory") == "input"
        if wanted and (stored is None or not stored["input"]):
            raise RecipeError(
                f"{run_dir}: this --memory input run has no memory.json (it stopped before "
                "its figures); train it again"
            )
        return stored

    def export_model(self, run_dir, record, model, export_dir, beam_width):
        tokenizer = data.read_tokenizer(run_dir)
        decode = decode_fn(record["model"])
        stored, memory, threshold, match_input = self.run_memory(run_dir, record), None, None, None
        if stored is not None:  # carried inside the SavedModel
            memory = TranslationMemory(stored["sources"], stored["targets"])
            threshold = stored["threshold"]
            match_input = MatchInput(tokenizer) if stored["input"] else None
        export_text_pairs(
            model,
            export_dir,
            tokenizer,
            record["max_length"],
            decode,
            memory,
            threshold,
            match_input,
        )
        data.write_tokenizer(tokenizer, export_dir)  # read by `evaluate_file`

    def evaluate_file(self, path, info, is_run, data_path):
        """``keras-adl evaluate``: the figures of `score_pairs` for the run (``is_run``) or
        export at ``path``, described by ``info`` (its ``run.json`` or task file), on the
        pairs of ``data_path`` (any ``--data`` form, `data.load_pairs`)."""
        tokenizer = data.read_tokenizer(path)
        sources, targets = data.load_pairs(data_path)
        if is_run:
            model = keras.saving.load_model(os.path.join(path, MODEL_FILE))
            stored, encode, max_length = self.run_memory(path, info), None, info["max_length"]
            if stored is not None:
                memory = TranslationMemory(stored["sources"], stored["targets"])
            if stored is not None and stored["input"]:
                match_input = MatchInput(tokenizer)

                def encode(batch):
                    return match_input.encode(memory, batch, max_length)

            predictions, _, _ = translate(
                info["model"], model, tokenizer, sources, max_length, encode
            )
            if stored is not None:  # as the run's export answers
                found = memory_lookup(memory, sources, tokenizer.copy)
                predictions, _ = with_memory(predictions, found, stored["threshold"])
        else:
            serve = tf.saved_model.load(path).signatures["serving_default"]
            predictions = data.in_batches(sources, lambda batch: serve(inputs=batch)["output"])
        return score_pairs(tokenizer, sources, targets, predictions)


RECIPES = {
    "dates": DatesTask(spec.DATES),
    "pairs": PairsTask(spec.PAIRS),
    "sort": SortTask(spec.SORT),
}

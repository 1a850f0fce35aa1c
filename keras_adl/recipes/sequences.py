"""The sequences family: attention encoder-decoders, the Transformer and the pointer network.

Tasks:
    ``dates``: human-written dates → ISO ``YYYY-MM-DD``, character by character (generated).
    ``pairs``: translation of the user's own ``source<TAB>target`` file, or of the messages of
    gettext catalogs (``--data gettext:fr``), WordPiece subwords by default.
    ``sort``: the pointer network outputs the positions that sort a list of numbers.

The HyperModels (`Seq2SeqHyperModel`, `TransformerSeq2SeqHyperModel`,
`PointerNetworkHyperModel`, `TransformerClassifierHyperModel`) are attributes of this module,
defined on first use (they need the ``tuner`` extra).
"""

import json
import os

from keras_adl.recipes.base import (
    Option,
    Recipe,
    Task,
    compile_for_training,
    draw,
    import_keras_tuner,
    lazy_hypermodels,
    override,
)

SEQ2SEQ_MODELS = ("attention_seq2seq", "encoder_decoder", "transformer_seq2seq")
VOCABULARY_FILE = "vocab.json"
PROG_NAME = "keras-adl"
# Held-out examples evaluated after training, and the decoding batch of the held-out pairs.
HELD_OUT = 500
EVALUATION_BATCH = 256

# Builder settings and Adam's learning rate per (task, model); vocabulary sizes come from the
# data. The dates settings are those of examples/seq2seq_dates.py's demo.
SETTINGS = {
    ("dates", "attention_seq2seq"): dict(embedding_dim=32, units=64, learning_rate=3e-3),
    ("dates", "encoder_decoder"): dict(embedding_dim=32, units=64, learning_rate=3e-3),
    ("dates", "transformer_seq2seq"): dict(
        model_dim=64, num_heads=4, intermediate_dim=128, num_layers=2, learning_rate=1e-3
    ),
    ("pairs", "attention_seq2seq"): dict(embedding_dim=64, units=128, learning_rate=3e-3),
    ("pairs", "encoder_decoder"): dict(embedding_dim=64, units=128, learning_rate=3e-3),
    # Dropout 0.1 (the Transformer paper's): without it, 30 minutes on en→de gettext overfit
    # (held-out chrF 47.3 against 48.4 after 20; benchmarks/RESULTS.md).
    ("pairs", "transformer_seq2seq"): dict(
        model_dim=64,
        num_heads=4,
        intermediate_dim=128,
        num_layers=2,
        dropout=0.1,
        learning_rate=1e-3,
    ),
    ("sort", "pointer_network"): dict(units=128, learning_rate=2e-3),
}
SORT_LENGTH = 10
VALIDATION_SPLIT = 0.05
SPLIT_SEED = 0


# Generated examples whose held-out loss is watched every epoch (dates, sort).
VALIDATION_EXAMPLES = 1000


class SequencesRecipe(Recipe):
    family = "sequences"
    description = "attention encoder-decoders, the Transformer and the pointer network"
    tasks = (
        Task(
            "dates",
            SEQ2SEQ_MODELS,
            "human-written dates to ISO YYYY-MM-DD, by character",
            epochs=3,
            batch_size=64,
            samples=20000,
            held_out=True,
        ),
        Task(
            "pairs",
            # The Transformer with dropout first: on gettext it is the one that beats a
            # translation memory given half an hour (benchmarks/RESULTS.md).
            ("transformer_seq2seq", "attention_seq2seq", "encoder_decoder"),
            "translation of your source<TAB>target pairs or of gettext catalogs, by subword",
            epochs=3,
            batch_size=64,
            samples=100000,  # at most this many training pairs (a seeded subset)
            tunable=False,
            held_out=True,
            budget_decay=True,  # --minutes 30 is how a user trains it
            options=(
                Option(
                    "--data",
                    "a UTF-8 file of source<TAB>target lines, a .po/.mo catalog, or "
                    "gettext:LANG (the English->LANG messages under /usr/share/locale; "
                    "gettext:DIR reads the catalogs under DIR)",
                    "file",
                    required=True,
                    schemes=("gettext",),
                ),
                Option(
                    "--tokens",
                    "subword (WordPiece), word or char",
                    str,
                    default="subword",
                    choices=("subword", "word", "char"),
                ),
                Option(
                    "--target-case",
                    "keep: translations keep the target's case and spacing, text a user can "
                    "ship (subword; the default there); fold: case-folded tokens split by "
                    "spaces (word and char always fold)",
                    str,
                    choices=("keep", "fold"),
                ),
                Option(
                    "--copy-through",
                    "auto: placeholders (%s, {0}, $VAR) and, where the training pairs keep them "
                    "unchanged, options, function names, numbers and addresses are copied "
                    "exactly from the source (subword; the default there); off: translated "
                    "like any text",
                    str,
                    choices=("auto", "off"),
                ),
                Option(
                    "--vocab-size",
                    "WordPiece pieces learned per side (subword), or the most frequent tokens "
                    "kept per side (word, char)",
                    int,
                    default=4000,
                ),
                Option(
                    "--max-length",
                    "tokens per source and per target; longer training pairs are left out",
                    int,
                    default=32,
                ),
                Option(
                    "--validation-split",
                    "fraction of the pairs held out (seeded) for the reported figures",
                    float,
                    default=VALIDATION_SPLIT,
                ),
                Option(
                    "--validation",
                    "pairs held out instead of --validation-split, in any --data form",
                    "file",
                    schemes=("gettext",),
                ),
            ),
        ),
        Task(
            "sort",
            ("pointer_network",),
            f"the pointer network sorts {SORT_LENGTH} numbers",
            epochs=3,
            batch_size=64,
            samples=20000,
            held_out=True,
        ),
    )

    # -- models --------------------------------------------------------------------------------

    def settings(self, task, model_name):
        """The builder's keyword arguments and ``learning_rate`` for ``(task, model_name)``."""
        return dict(SETTINGS[(task, model_name)])

    def build_model(
        self,
        task,
        model_name,
        source_vocab_size=None,
        target_vocab_size=None,
        jit_compile=True,
        **overrides,
    ):
        """The compiled model that ``keras-adl train TASK --model MODEL`` trains.

        Args:
            task, model_name: names from this recipe's tasks.
            source_vocab_size, target_vocab_size: for ``pairs`` (the tokenizer's sizes);
                ``dates`` uses the character vocabularies.
            jit_compile: compile the train step with XLA.
            **overrides: replace named settings.
        """
        import keras

        from keras_adl import models

        settings = override(self.settings(task, model_name), overrides)
        learning_rate = settings.pop("learning_rate")
        if task == "sort":
            model = models.pointer_network(**settings)
            return compile_for_training(
                model, keras.losses.SparseCategoricalCrossentropy(), learning_rate, jit_compile
            )
        if task == "dates":
            from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB

            source_vocab_size, target_vocab_size = len(SOURCE_VOCAB), len(TARGET_VOCAB)
        model = getattr(models, model_name)(source_vocab_size, target_vocab_size, **settings)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return compile_for_training(model, loss, learning_rate, jit_compile)

    @staticmethod
    def decode_fn(model_name):
        """Greedy decoding for ``model_name`` (the Transformer has its own cached decoder)."""
        from keras_adl import models

        if model_name == "transformer_seq2seq":
            return models.transformer_greedy_decode
        return models.greedy_decode

    # -- data ----------------------------------------------------------------------------------

    @staticmethod
    def arrays(task, samples, seed):
        """``(inputs, targets, raw)`` of a generated task (``dates`` or ``sort``)."""
        if task == "dates":
            from keras_adl.data.dates import date_arrays

            data = date_arrays(samples, seed=seed)
            return (
                {"source": data["source"], "decoder_input": data["decoder_input"]},
                data["target"],
                data,
            )
        from keras_adl.data.sorting import sort_arrays

        data = sort_arrays(samples, length=SORT_LENGTH, seed=seed)
        return (
            {"inputs": data["inputs"], "decoder_input": data["decoder_input"]},
            data["target"],
            data,
        )

    # -- train ---------------------------------------------------------------------------------

    def train(self, run):
        if run.task == "pairs":
            return self._train_pairs(run)
        model = run.build(self.build_model, run.task, run.model)
        run.record["settings"] = self.settings(run.task, run.model)
        x, y, _ = self.arrays(run.task, run.samples, seed=0)
        # Fresh examples (seed 2; the figures' are seed 1) whose loss picks the best epoch.
        validation = self.arrays(run.task, VALIDATION_EXAMPLES, seed=2)[:2]
        history = self.fit(
            run,
            model,
            x,
            y,
            batch_size=run.batch_size,
            shuffle=True,
            validation_data=validation,
            validation_batch_size=run.batch_size,
        )
        return model, history, self.evaluate(run.task, run.model, model, run.out)

    def _train_pairs(self, run):
        from keras_adl.data.text_pairs import split_pairs
        from keras_adl.recipes.base import RecipeError
        from keras_adl.text import TextPairTokenizer

        max_length, options = run.options["max_length"], run.options
        cased = cased_target(options)  # refused before the data is read
        sources, targets = load_pairs(options["data"])
        if options.get("validation"):
            held_out = load_pairs(options["validation"])
        else:
            (sources, targets), held_out = split_pairs(
                sources, targets, options["validation_split"], seed=SPLIT_SEED
            )
        available = len(sources)
        if available > run.samples:  # --samples: at most this many, a seeded subset
            (sources, targets), _ = split_pairs(
                sources, targets, 1 - run.samples / available, seed=SPLIT_SEED + 1
            )
        # From the training pairs only.
        tokenizer = TextPairTokenizer.build(
            sources,
            targets,
            level=options["tokens"],
            vocab_size=options["vocab_size"],
            cased_target=cased,
            copy_through="off" if options.get("copy_through") == "off" else "auto",
        )
        sources, targets, too_long = fitting_pairs(tokenizer, sources, targets, max_length)
        if not sources:
            raise RecipeError(
                f"every training pair is longer than --max-length {max_length} tokens"
            )
        model = run.build(
            self.build_model, "pairs", run.model, tokenizer.source_size, tokenizer.target_size
        )
        run.record.update(
            settings=self.settings("pairs", run.model),
            max_length=max_length,
            data=options["data"],
            tokens=options["tokens"],
            target_case="keep" if cased else "fold",
            copy_through=list(tokenizer.copy.classes),
            source_vocabulary=tokenizer.source_size,
            target_vocabulary=tokenizer.target_size,
            train_pairs=len(sources),
            train_pairs_available=available,
            train_pairs_too_long=too_long,
            held_out_pairs=len(held_out[0]),
        )
        with open(run.path(VOCABULARY_FILE), "w") as f:
            json.dump(tokenizer.to_config(), f)
        batch_size = min(run.batch_size, len(sources))
        train = tokenizer.dataset(sources, targets, batch_size, max_length, max_length)
        # The held-out pairs' loss picks the best epoch (Keras' validation data).
        validation = None
        if held_out[0]:
            fitting = fitting_pairs(tokenizer, *held_out, max_length)[:2]
            validation = held_out_dataset(tokenizer, *fitting, batch_size, max_length)
        history = self.fit(run, model, train, shuffle=False, validation_data=validation)
        metrics = self.evaluate_pairs(run.model, model, tokenizer, *held_out, max_length, run.out)
        return model, history, metrics

    # -- evaluate ------------------------------------------------------------------------------

    def evaluate(self, task, model_name, model, out):
        """Held-out exact match on fresh generated examples, and the attention picture."""
        import keras
        import numpy as np

        from keras_adl.plotting import plot_attention

        _, _, test = self.arrays(task, HELD_OUT, seed=1)
        if task == "sort":
            from keras_adl.models import pointer_decode

            order, probabilities = pointer_decode(model, test["inputs"])
            order = keras.ops.convert_to_numpy(order)
            draw(
                plot_attention,
                keras.ops.convert_to_numpy(probabilities)[0],
                [f"{v:.2f}" for v in test["inputs"][0, :, 0]],
                [str(i) for i in order[0]],
                os.path.join(out, "attention.png"),
                title="pointer distribution per output step",
            )
            return {"held_out_fully_sorted": float(np.mean(np.all(order == test["target"], 1)))}
        from keras_adl.data.dates import TARGET_LENGTH, TARGET_VOCAB

        tokens, attention, _ = self.decode_fn(model_name)(model, test["source"], TARGET_LENGTH - 1)
        predictions = TARGET_VOCAB.decode(keras.ops.convert_to_numpy(tokens))
        exact = float(np.mean([p == t for p, t in zip(predictions, test["target_text"])]))
        draw(
            plot_attention,
            keras.ops.convert_to_numpy(attention)[0],
            list(test["source_text"][0]),
            list(predictions[0]) + ["</s>"],
            os.path.join(out, "attention.png"),
            title=f"{model_name}: attention",
        )
        for source, prediction in list(zip(test["source_text"], predictions))[:3]:
            print(f"  {source} -> {prediction}")
        return {"held_out_exact_match": exact}

    def translate(self, model_name, model, tokenizer, sources, max_length):
        """Greedy translations of ``sources`` (a list of str), in batches: ``(predictions,
        attention of the first source, output tokens of the first source)``, the predictions
        as `TextPairTokenizer.decode_target` writes them."""
        import keras

        first = []

        def translate_batch(batch):
            ids = tokenizer.encode_source(batch, max_length)
            tokens, attention, _ = self.decode_fn(model_name)(model, ids, max_length)
            if not first:
                first.extend(keras.ops.convert_to_numpy(x)[0] for x in (attention, tokens))
            return tokenizer.decode_target(tokens, batch)

        return in_batches(sources, translate_batch), *first

    def evaluate_pairs(self, model_name, model, tokenizer, sources, targets, max_length, out):
        """BLEU, chrF and exact match of greedy translations of held-out pairs (`score_pairs`),
        and the attention picture of the first held-out pair."""
        import tensorflow as tf

        from keras_adl.conventions import END
        from keras_adl.plotting import plot_attention

        predictions, first_attention, first_tokens = self.translate(
            model_name, model, tokenizer, sources, max_length
        )
        labels = [t.decode() for t in tokenizer.source_tokens(tf.constant(sources[:1]))[0].numpy()]
        ends = [i for i, t in enumerate(first_tokens) if t == END]
        outputs = first_tokens[: ends[0] + 1] if ends else first_tokens  # through </s>
        draw(
            plot_attention,
            first_attention,
            labels[:max_length],
            [t.decode() for t in tokenizer.target_tokens(outputs).numpy()],
            os.path.join(out, "attention.png"),
            title=f"{model_name}: attention on a held-out pair",
        )
        for source, prediction in list(zip(sources, predictions))[:3]:
            print(f"  {source} -> {prediction}")
        scores = score_pairs(tokenizer, sources, targets, predictions)
        return {f"held_out_{name}": value for name, value in scores.items()}

    evaluate_tasks = ("pairs",)

    def evaluate_file(self, path, info, is_run, data):
        """``keras-adl evaluate``: the figures of `score_pairs` for the ``pairs`` run
        (``is_run``) or export at ``path``, described by ``info`` (its ``run.json`` or task
        file), on the pairs of ``data`` (any ``--data`` form, `load_pairs`)."""
        import keras
        import tensorflow as tf

        from keras_adl.recipes.base import MODEL_FILE
        from keras_adl.text import TextPairTokenizer

        if info.get("task") not in self.evaluate_tasks:
            return super().evaluate_file(path, info, is_run, data)  # refuses
        with open(os.path.join(path, VOCABULARY_FILE)) as f:
            tokenizer = TextPairTokenizer.from_config(json.load(f))
        sources, targets = load_pairs(data)
        if is_run:
            import keras_adl  # noqa: F401  (registers the layers the model file names)

            model = keras.saving.load_model(os.path.join(path, MODEL_FILE))
            predictions, _, _ = self.translate(
                info["model"], model, tokenizer, sources, info["max_length"]
            )
        else:
            import tensorflow_text  # noqa: F401  (the ops of exported text models)

            serve = tf.saved_model.load(path).signatures["serving_default"]
            predictions = in_batches(sources, lambda batch: serve(inputs=batch)["output"])
        return score_pairs(tokenizer, sources, targets, predictions)

    # -- tune ----------------------------------------------------------------------------------

    def hypermodel(self, task, model_name):
        """The HyperModel searched by ``keras-adl tune TASK --model MODEL``."""
        from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB
        from keras_adl.recipes.sequences import (
            PointerNetworkHyperModel,
            Seq2SeqHyperModel,
            TransformerSeq2SeqHyperModel,
        )

        if task == "sort":
            return PointerNetworkHyperModel()
        sizes = (len(SOURCE_VOCAB), len(TARGET_VOCAB))
        if model_name == "transformer_seq2seq":
            return TransformerSeq2SeqHyperModel(*sizes)
        return Seq2SeqHyperModel(*sizes)

    def tune(self, task, model_name, trials, epochs, samples, out, options):
        x, y, _ = self.arrays(task, samples, seed=0)
        validation = self.arrays(task, max(samples // 5, 64), seed=1)[:2]
        return self.search(
            self.hypermodel(task, model_name),
            "val_loss",
            trials,
            out,
            f"{task}_{model_name}",
            x,
            y,
            validation_data=validation,
            epochs=epochs,
            batch_size=self.task(task).batch_size,
        )

    # -- export and predict --------------------------------------------------------------------

    def export(self, run_dir, run_record, model, export_dir, beam_width=1):
        from keras_adl.training.export import export_serving_fn

        task, model_name = run_record["task"], run_record["model"]
        if task == "sort":
            export_serving_fn(model, export_dir, make_pointer_serving_fn(model))
        elif task == "pairs":
            from keras_adl.text import TextPairTokenizer

            with open(os.path.join(run_dir, VOCABULARY_FILE)) as f:
                tokenizer = TextPairTokenizer.from_config(json.load(f))
            length = run_record["max_length"]
            serve = make_text_pair_serving_fn(
                model, tokenizer, length, length, decode=self.decode_fn(model_name)
            )
            export_serving_fn(model, export_dir, serve, resources=tokenizer.tables)
            self.copy_file(run_dir, VOCABULARY_FILE, export_dir)  # read by `evaluate`
        else:
            from keras_adl.data.dates import SOURCE_VOCAB, TARGET_LENGTH, TARGET_VOCAB

            decode = self.decode_fn(model_name) if model_name == "transformer_seq2seq" else None
            export_seq2seq(
                model,
                export_dir,
                SOURCE_VOCAB,
                TARGET_VOCAB,
                TARGET_LENGTH - 1,
                beam_width=beam_width,
                decode=decode,
            )
        lengths = {"max_length": run_record["max_length"]} if task == "pairs" else {}
        self.write_task_file(export_dir, task=task, model=model_name, **lengths)

    def predict(self, export_dir, inputs, task_info):
        """Prints ``input<TAB>output`` for each raw string, in order. An empty input gets an
        error line of its own and the others are still served; a text-pair input longer than
        the model reads is reported (its tail was not translated)."""
        import sys

        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the ops of exported text models)

        from keras_adl.recipes.base import RecipeError, tf_error_message

        readable = [text for text in inputs if text.strip()]
        outputs = {}
        if readable:
            loaded = tf.saved_model.load(export_dir)
            serve = loaded.signatures["serving_default"]
            try:
                outputs = serve(inputs=tf.constant(readable))
            except (tf.errors.InvalidArgumentError, ValueError) as error:
                raise RecipeError(
                    f"the model could not read these inputs: {tf_error_message(error)}"
                ) from None
            length = task_info.get("max_length")
        served = iter(outputs["output"].numpy()) if readable else iter(())
        counts = iter(outputs["source_tokens"].numpy()) if "source_tokens" in outputs else None
        empty = 0
        for number, text in enumerate(inputs, 1):
            if not text.strip():
                print(f"{text}\t(empty input: nothing to translate)")
                empty += 1
                continue
            print(f"{text}\t{next(served).decode()}")
            count = int(next(counts)) if counts is not None else 0
            if length and count > length:
                print(
                    f"{PROG_NAME}: warning: input {number} has {count} tokens; the model reads "
                    f"{length}, so only the first {length} were translated",
                    file=sys.stderr,
                )
        if empty:
            raise RecipeError(f"{empty} of {len(inputs)} input(s) were empty")


RECIPE = SequencesRecipe()


# -- text-pair data ----------------------------------------------------------------------------


def load_pairs(data):
    """``(sources, targets)`` from the ``--data`` of ``pairs``: ``gettext:LANG`` or
    ``gettext:DIR`` and ``.po``/``.mo`` files through
    `keras_adl.data.gettext_catalogs.load_gettext_pairs`, anything else as a
    ``source<TAB>target`` file (`keras_adl.data.text_pairs.load_text_pairs`).

    Raises:
        RecipeError: the data cannot be read (the message says why and where).
    """
    from keras_adl.data.gettext_catalogs import load_gettext_pairs
    from keras_adl.data.text_pairs import load_text_pairs
    from keras_adl.recipes.base import RecipeError

    try:
        if data.startswith("gettext:"):
            return load_gettext_pairs(data[len("gettext:") :])
        if data.endswith((".po", ".mo")):
            return load_gettext_pairs(data)
        return load_text_pairs(data)
    except (OSError, ValueError) as error:
        raise RecipeError(str(error)) from None


def in_batches(sources, translate_batch):
    """``translate_batch`` (a ``tf.string`` batch → a ``tf.string`` batch) over ``sources``
    (a list of str) in batches of `EVALUATION_BATCH`: the outputs, a list of str."""
    import tensorflow as tf

    outputs = []
    for start in range(0, len(sources), EVALUATION_BATCH):
        batch = tf.constant(sources[start : start + EVALUATION_BATCH])
        outputs += [text.decode() for text in translate_batch(batch).numpy()]
    return outputs


def cased_target(options):
    """Whether a ``pairs`` run's targets keep their case and spacing (``--target-case``:
    unset, yes at the subword level)."""
    from keras_adl.recipes.base import RecipeError

    case = options.get("target_case")
    if case == "keep" and options.get("tokens") != "subword":
        raise RecipeError(
            f"--target-case keep needs --tokens subword; received --tokens {options['tokens']}"
        )
    return options.get("tokens") == "subword" and case != "fold"


def score_pairs(tokenizer, sources, targets, predictions):
    """`keras_adl.metrics.translation_scores` of ``predictions`` against the references
    in the form the tokenizer writes its outputs, by source length in words (after Unicode
    normalisation, whatever the tokenizer's level).

    With a cased target the headline figures are sacreBLEU's on raw text (case and
    punctuation as written, only NFC and single spaces); ``normalized`` adds the figures of both
    sides case-folded with punctuation split off (`joined_words`), comparable with runs whose
    target was folded. With a cased target ``copied_spans`` gives the share of the
    placeholders, options… that the references keep unchanged and the predictions reproduce
    exactly (`keras_adl.text.copy_through.copied_spans`)."""
    import tensorflow as tf

    from keras_adl.metrics import translation_scores
    from keras_adl.text.copy_through import copied_spans
    from keras_adl.text.normalization import joined_words, word_tokens

    def strings(tensor):
        return [t.decode() for t in tensor.numpy()]

    references = strings(tokenizer.normalize_target(tf.constant(targets)))
    lengths = word_tokens(tf.constant(sources)).row_lengths().numpy()
    scores = translation_scores(predictions, references, lengths)
    if getattr(tokenizer, "cased_target", False):
        folded = translation_scores(
            strings(joined_words(tf.constant(predictions))),
            strings(joined_words(tf.constant(references))),
        )
        scores["normalized"] = {k: folded[k] for k in ("bleu", "chrf", "exact_match")}
    if getattr(tokenizer, "cased_target", False):  # spans the reference keeps, as written
        scores["copied_spans"] = copied_spans(sources, targets, predictions)
    return scores


def held_out_dataset(tokenizer, sources, targets, batch_size, max_length):
    """The held-out pairs as unshuffled batches of at most ``batch_size`` (``None`` when
    there are none)."""
    if not sources:
        return None
    size = min(batch_size, len(sources))
    return tokenizer.dataset(sources, targets, size, max_length, max_length, shuffle=False)


def fitting_pairs(tokenizer, sources, targets, max_length):
    """The pairs whose source has at most ``max_length`` tokens and whose target, with its
    ``</s>``, fits too: ``(sources, targets, number_left_out)``. Training on a cut target would
    teach the model that translations stop mid-sentence."""
    import tensorflow as tf

    source_counts = tokenizer.token_counts(tf.constant(sources), "source").numpy()
    target_counts = tokenizer.token_counts(
        tf.constant(targets), "target", tf.constant(sources)
    ).numpy()
    keep = (source_counts <= max_length) & (target_counts + 1 <= max_length)
    kept = [i for i, k in enumerate(keep) if k]
    return [sources[i] for i in kept], [targets[i] for i in kept], int(len(sources) - len(kept))


# -- serving functions (exported SavedModels) --------------------------------------------------


def _code_point_table(vocab):
    """int32 ``[128]``: ASCII code point → id (``<unk>`` for characters not in ``vocab``)."""
    import numpy as np

    from keras_adl.conventions import UNK

    table = np.full(128, UNK, "int32")
    for char in vocab.chars:
        if ord(char) < 128:
            table[ord(char)] = vocab.encode([char], 1)[0, 0]
    return table


def make_seq2seq_serving_fn(
    model, source_vocab, target_vocab, max_length, beam_width=1, lowercase=True, decode=None
):
    """A ``tf.function`` from raw strings ``[B]`` to decoded outputs.

    Args:
        model: a model from `attention_seq2seq` or `encoder_decoder`.
        source_vocab, target_vocab: `keras_adl.text.CharVocabulary` objects (character
            level; characters outside ASCII or the vocabulary map to ``<unk>``).
        max_length: number of target steps to decode.
        beam_width: 1 for greedy decoding, more for beam search.
        lowercase: lower-case the input first.
        decode: optional ``decode(model, ids, max_length) -> (tokens, attention, score)``,
            e.g. `keras_adl.models.transformer_greedy_decode`; by default greedy decoding
            (``beam_width=1``) or beam search.

    Returns:
        A ``tf.function`` with input signature ``[tf.TensorSpec([None], tf.string)]`` returning
        a dict with ``output`` (strings ``[B]``), ``tokens`` ``[B, max_length]``, ``attention``
        ``[B, max_length, T]`` and ``log_likelihood`` ``[B]``.
    """
    import tensorflow as tf

    from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
    from keras_adl.models.seq2seq import beam_search, greedy_decode

    table = tf.constant(_code_point_table(source_vocab))
    target_tokens = tf.constant([""] * NUM_SPECIAL_TOKENS + list(target_vocab.chars))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        text = tf.strings.lower(inputs) if lowercase else inputs
        code_points = tf.strings.unicode_decode(text, "UTF-8", errors="replace")
        ids = tf.gather(table, tf.minimum(code_points, 127))
        ids = tf.where(code_points > 127, UNK, ids).to_tensor(default_value=PAD)
        if decode is not None:
            tokens, attention, score = decode(model, ids, max_length)
        elif beam_width > 1:
            tokens, attention, score = beam_search(model, ids, max_length, beam_width)
        else:
            tokens, attention, score = greedy_decode(model, ids, max_length)
        tokens = tf.convert_to_tensor(tokens)
        # Specials (<pad>, <s>, </s>, <unk>) render as ""; decoding emits padding after </s>.
        output = tf.strings.reduce_join(tf.gather(target_tokens, tokens), axis=-1)
        return {"output": output, "tokens": tokens, "attention": attention, "log_likelihood": score}

    return serve


def export_seq2seq(
    model, export_dir, source_vocab, target_vocab, max_length, beam_width=1, decode=None
):
    """Writes a SavedModel whose ``serving_default`` decodes raw strings.

    Args:
        model: a model from `attention_seq2seq`, `encoder_decoder` (or `transformer_seq2seq`
            with ``decode=transformer_greedy_decode``).
        export_dir: where to write; must not exist (nothing is left behind on failure).
        source_vocab, target_vocab, max_length, beam_width, decode: as in
            `make_seq2seq_serving_fn`.
    """
    from keras_adl.training.export import export_serving_fn

    serving_fn = make_seq2seq_serving_fn(
        model, source_vocab, target_vocab, max_length, beam_width, decode=decode
    )
    return export_serving_fn(model, export_dir, serving_fn)


def make_pointer_serving_fn(model):
    """A ``tf.function`` from raw strings of numbers to the pointer network's sorting order.

    Each input string holds whitespace- or comma-separated numbers (``"0.3 0.1, 0.2"``); all
    strings of one request must hold the same count.

    Returns:
        A ``tf.function`` returning ``order`` ``[B, N]`` (positions in output order) and
        ``output`` (the numbers in that order, as a space-separated string).
    """
    import tensorflow as tf

    from keras_adl.models.pointer import pointer_decode

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        parts = tf.strings.split(tf.strings.regex_replace(inputs, ",", " "))
        values = tf.strings.to_number(parts, tf.float32)
        lengths = values.row_lengths()
        tf.debugging.assert_equal(
            lengths, lengths[0], message="every input of one request needs the same count"
        )
        dense = values.to_tensor()
        order, _ = pointer_decode(model, dense[..., None])
        ordered = tf.gather(dense, tf.convert_to_tensor(order), batch_dims=1)
        output = tf.strings.reduce_join(
            tf.strings.as_string(ordered, precision=4), axis=-1, separator=" "
        )
        return {"order": tf.convert_to_tensor(order), "output": output}

    return serve


def make_text_pair_serving_fn(model, tokenizer, source_length, max_length, decode=None):
    """A ``tf.function`` from raw strings to decoded strings for a model trained on text pairs
    tokenized by a `keras_adl.text.TextPairTokenizer` (tensorflow-text ops in the graph).

    Returns:
        A ``tf.function`` returning ``output``, ``tokens``, ``attention`` and
        ``log_likelihood`` as `make_seq2seq_serving_fn` does, and ``source_tokens`` ``[B]``
        int32: each input's token count before the model's ``source_length`` cut it (an
        input with more tokens was truncated).
    """
    import tensorflow as tf

    from keras_adl.models.seq2seq import greedy_decode

    decode = decode or greedy_decode

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        ids = tokenizer.encode_source(inputs, source_length)
        tokens, attention, score = decode(model, ids, max_length)
        tokens = tf.convert_to_tensor(tokens)
        counts = tf.cast(tokenizer.token_counts(inputs, "source"), tf.int32)
        return {
            "output": tokenizer.decode_target(tokens, inputs),
            "tokens": tokens,
            "attention": attention,
            "log_likelihood": score,
            "source_tokens": counts,
        }

    return serve


def _hypermodels():
    import keras

    from keras_adl.models.pointer import pointer_network
    from keras_adl.models.seq2seq import attention_seq2seq, encoder_decoder
    from keras_adl.models.transformer import transformer_classifier, transformer_seq2seq
    from keras_adl.recipes.base import tuned_learning_rate

    keras_tuner = import_keras_tuner()

    def compile_(model, hp, loss, default_lr):
        return compile_for_training(model, loss, tuned_learning_rate(hp, default_lr))

    class Seq2SeqHyperModel(keras_tuner.HyperModel):
        """Searches `attention_seq2seq` / `encoder_decoder`.

        Hyperparameters: ``model`` (``"attention"`` or ``"no_attention"``); ``attention``
        (``"bahdanau"``/``"luong"``, only in the ``"attention"`` scope); ``cell``; ``units``;
        ``embedding_dim``; ``learning_rate``. The defaults are the ``dates`` recipe's.

        Args:
            source_vocab_size, target_vocab_size: vocabulary sizes.
        """

        def __init__(self, source_vocab_size, target_vocab_size, name="seq2seq", tunable=True):
            super().__init__(name=name, tunable=tunable)
            self.source_vocab_size = source_vocab_size
            self.target_vocab_size = target_vocab_size

        def build(self, hp):
            default = SETTINGS[("dates", "attention_seq2seq")]
            kind = hp.Choice("model", ["attention", "no_attention"], default="attention")
            units = hp.Choice("units", [32, 64, 128], default=default["units"])
            embedding_dim = hp.Choice(
                "embedding_dim", [16, 32, 64], default=default["embedding_dim"]
            )
            cell = hp.Choice("cell", ["gru", "lstm"], default="gru")
            sizes = (self.source_vocab_size, self.target_vocab_size, embedding_dim, units)
            if kind == "attention":
                with hp.conditional_scope("model", ["attention"]):
                    attention = hp.Choice("attention", ["bahdanau", "luong"], default="bahdanau")
                model = attention_seq2seq(*sizes, attention=attention, cell=cell)
            else:
                model = encoder_decoder(*sizes, cell=cell)
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            return compile_(model, hp, loss, default["learning_rate"])

    class TransformerSeq2SeqHyperModel(keras_tuner.HyperModel):
        """Searches `transformer_seq2seq`: ``model_dim``, ``num_heads``, ``num_layers``,
        ``intermediate_factor`` (FFN size / model_dim), ``dropout``, ``learning_rate``."""

        def __init__(
            self, source_vocab_size, target_vocab_size, name="transformer_seq2seq", tunable=True
        ):
            super().__init__(name=name, tunable=tunable)
            self.source_vocab_size = source_vocab_size
            self.target_vocab_size = target_vocab_size

        def build(self, hp):
            default = SETTINGS[("dates", "transformer_seq2seq")]
            model_dim = hp.Choice("model_dim", [32, 64, 128], default=default["model_dim"])
            model = transformer_seq2seq(
                self.source_vocab_size,
                self.target_vocab_size,
                model_dim=model_dim,
                num_heads=hp.Choice("num_heads", [2, 4], default=default["num_heads"]),
                intermediate_dim=model_dim * hp.Choice("intermediate_factor", [2, 4], default=2),
                num_layers=hp.Int("num_layers", 1, 4, default=default["num_layers"]),
                dropout=hp.Float("dropout", 0.0, 0.3, step=0.1, default=0.0),
            )
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            return compile_(model, hp, loss, default["learning_rate"])

    class PointerNetworkHyperModel(keras_tuner.HyperModel):
        """Searches `pointer_network`: ``units``, ``learning_rate``."""

        def __init__(self, input_dim=1, name="pointer_network", tunable=True):
            super().__init__(name=name, tunable=tunable)
            self.input_dim = input_dim

        def build(self, hp):
            default = SETTINGS[("sort", "pointer_network")]
            model = pointer_network(
                self.input_dim, units=hp.Choice("units", [32, 64, 128], default=default["units"])
            )
            return compile_(
                model, hp, keras.losses.SparseCategoricalCrossentropy(), default["learning_rate"]
            )

    class TransformerClassifierHyperModel(keras_tuner.HyperModel):
        """Searches `transformer_classifier`: ``model_dim``, ``num_heads``, ``num_layers``,
        ``dropout``, ``learning_rate``."""

        def __init__(self, vocab_size, num_classes, name="transformer_classifier", tunable=True):
            super().__init__(name=name, tunable=tunable)
            self.vocab_size = vocab_size
            self.num_classes = num_classes

        def build(self, hp):
            model_dim = hp.Choice("model_dim", [32, 64, 128], default=64)
            model = transformer_classifier(
                self.vocab_size,
                self.num_classes,
                model_dim=model_dim,
                num_heads=hp.Choice("num_heads", [2, 4], default=4),
                intermediate_dim=2 * model_dim,
                num_layers=hp.Int("num_layers", 1, 4, default=2),
                dropout=hp.Float("dropout", 0.0, 0.3, step=0.1, default=0.1),
            )
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            return compile_(model, hp, loss, 1e-3)

    return locals()


__getattr__, __dir__ = lazy_hypermodels(
    globals(),
    _hypermodels,
    (
        "Seq2SeqHyperModel",
        "TransformerSeq2SeqHyperModel",
        "PointerNetworkHyperModel",
        "TransformerClassifierHyperModel",
    ),
)

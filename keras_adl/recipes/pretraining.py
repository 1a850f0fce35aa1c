"""The pretraining family: BERT-style masked-LM and GPT-style causal-LM pretraining on a text
corpus, and fine-tuning on Debian's fortunes.

Tasks:

- ``pretrain_mlm`` (model ``bert``): masked LM (dynamic masking, 15% and 80/10/10) on whole
  documents, or with ``--segments pairs`` on sentence pairs with next-sentence prediction
  (`keras_adl.data.pretraining`); reports held-out masked-token accuracy against the
  most-frequent-token baseline.
- ``pretrain_lm`` (model ``gpt``): next-token prediction on windows of the corpus; reports
  held-out perplexity against a unigram model and prints a generated continuation. Its export
  takes raw prompt strings and the sampling settings and returns text.
- ``finetune`` (models ``bert`` and ``gpt``): fortune topics (the documents family's split, so
  the two families are compared on the same held-out fortunes); ``--init RUN`` starts from a
  ``pretrain_mlm`` run (``bert``) or a ``pretrain_lm`` run (``gpt``, `gpt_classifier` with the
  auxiliary LM loss): its vocabulary and, unless ``--weights random``, its weights. A fortune
  is read as up to ``--windows`` (`FINETUNE_WINDOWS`) windows of ``sequence_length - 2``
  pieces: each window trains with the fortune's label, and a fortune is classified by the
  product of its windows' probabilities (`make_text_classifier_serving_fn`, also its export).

Corpus (``--data``): a UTF-8 text file or directory, ``gcide.dict.dz`` or a WordNet directory
(`keras_adl.data.text_corpora.load_corpus`); by default the installed GCIDE dictionary plus
Debian's fortunes except the topic split's held-out ones, the fortunes making half the training
documents (`default_corpus`, ``make data``). 2% of the documents are held out. The WordPiece
vocabulary (`keras_adl.text.wordpiece`, with ``[MASK]``) is learned on the training documents
and saved beside the model as ``vocab.json``.

``keras-adl tune`` searches `PretrainingHyperModel` (the Transformer's size and the warm-up +
cosine schedule), an attribute of this module defined on first use.
"""

import json
import os
import re

from keras_adl.recipes.base import (
    DEVELOPMENT_SEED,
    FORTUNES_OPTION,
    MIN_FOR_DEVELOPMENT,
    Option,
    Recipe,
    RecipeError,
    Task,
    development_rows,
    draw,
    import_keras_tuner,
    lazy_hypermodels,
    override,
    plot_step_log,
    step_log,
    without_development,
)

VOCABULARY_FILE = "vocab.json"
VOCAB_SIZE = 8000
HELD_OUT_FRACTION = 0.02
SPLIT_SEED = 0
MAX_PREDICTIONS = 10
EVALUATION_BATCHES = 20
# The development split whose loss picks the best epoch: a tenth of the distinct training
# documents, at most `DEVELOPMENT_DOCUMENTS`, read as `DEVELOPMENT_BATCHES` batches an epoch.
DEVELOPMENT_DOCUMENTS = 500
DEVELOPMENT_BATCHES = 4
WARMUP_FRACTION = 0.1
# Encoder/decoder sizes (the 2-layer, d = 128 model), the peak learning rate of the
# warm-up + cosine decay schedule and the warm-up's share of the steps; for the GPT
# classifier, the weight of the auxiliary LM loss (Radford et al.'s λ = 0.5); for the BERT
# classifier, its pooling (the mean of the final states: better than [CLS] from random and
# pretrained weights alike on the fortunes, RESULTS.md). The BERT classifier's peak rate, 1e-3:
# on the fortunes (5 seeds, the 60k-step encoder) it beat 3e-4 from the pretrained start
# (0.697 against 0.683; 1.5e-4: 0.647, 1.5e-3: level at 0.697) and from random weights
# (0.674 against 0.668; 6e-4: 0.677), RESULTS.md, session 11.
SIZES = dict(
    sequence_length=64, model_dim=128, num_heads=2, intermediate_dim=512, num_layers=2, dropout=0.1
)
SETTINGS = {
    ("pretrain_mlm", "bert"): dict(SIZES, learning_rate=1e-3, warmup_fraction=WARMUP_FRACTION),
    ("pretrain_lm", "gpt"): dict(SIZES, learning_rate=1e-3, warmup_fraction=WARMUP_FRACTION),
    ("finetune", "bert"): dict(
        SIZES, learning_rate=1e-3, warmup_fraction=WARMUP_FRACTION, pooling="mean"
    ),
    ("finetune", "gpt"): dict(
        SIZES, learning_rate=3e-4, warmup_fraction=WARMUP_FRACTION, lm_loss_weight=0.5
    ),
}
# The pretraining task a fine-tuned model starts from (``finetune --init RUN``).
INIT_TASKS = {"bert": "pretrain_mlm", "gpt": "pretrain_lm"}
# Masked-LM examples: whole documents, masked LM only (RoBERTa's finding: next-sentence
# prediction does not help), or BERT's sentence pairs with next-sentence prediction.
SEGMENTS = "documents"
# In the default corpus, the fortunes' share of the training documents (they are repeated to
# make it up): in-domain text for the fortune-topic fine-tuning, beside GCIDE's definitions.
FORTUNE_SHARE = 0.5
GENERATE_LENGTH = 48
# Fine-tuning reads each fortune as up to this many windows of ``sequence_length - 2`` pieces
# (`text_windows`): it trains on every window with its fortune's label and classifies a fortune
# by all of its windows. 22% of the training fortunes are longer than one window. Over ten
# seeds at 1e-3 (the 60k-step encoder, RESULTS.md, session 14) eight windows gave the
# pretrained start 0.705 and random weights 0.671 (the first window alone, session 11, five
# seeds: 0.697 and 0.674); random weights' better rate, 6e-4, gave them 0.678.
FINETUNE_WINDOWS = 8
# The pretraining tasks' own options.
CORPUS_OPTIONS = (
    Option(
        "--data",
        "a text file or directory, gcide.dict.dz or WordNet (default: GCIDE + fortunes); a "
        "file with blank lines is read as paragraphs, one without as one document per line "
        "(with --segments pairs: consecutive lines are consecutive sentences)",
        "path",
    ),
    Option("--vocab-size", "WordPiece pieces", int, default=VOCAB_SIZE),
    Option("--steps", "training steps per epoch (default: one pass)", int),
)
# The pretraining tasks' model sizes for train (default: `SIZES`; tune searches them instead);
# ``train finetune --init RUN`` reads them from the run, so a larger pretrained model is
# fine-tuned, and compared with random weights, at its own size.
SIZE_OPTIONS = (
    Option("--num-layers", f"Transformer blocks (default: {SIZES['num_layers']})", int),
    Option(
        "--model-dim", f"model width, divisible by --num-heads (default: {SIZES['model_dim']})", int
    ),
    Option("--num-heads", f"attention heads (default: {SIZES['num_heads']})", int),
    Option(
        "--intermediate-dim",
        f"the feed-forward layers' width (default: {SIZES['intermediate_dim']})",
        int,
    ),
)
SEGMENTS_OPTION = Option(
    "--segments",
    "masked-LM examples: whole documents (MLM only) or sentence pairs (MLM + next sentence)",
    default=SEGMENTS,
    choices=("documents", "pairs"),
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n")


def sentences_of(document):
    """A document's sentences: split after ``. ! ? ;`` followed by white space, and at line
    ends (a file without blank lines gives its lines as sentences: `line_blocks`)."""
    return [s for s in _SENTENCE_END.split(document.strip()) if s]


def warmup_cosine(learning_rate, total_steps, warmup_fraction=WARMUP_FRACTION):
    """A linear warm-up to ``learning_rate`` over the first ``warmup_fraction`` of the steps,
    then a cosine decay to 0 (Keras' ``CosineDecay``, serializable)."""
    import keras

    total_steps = max(int(total_steps), 2)
    warmup = max(1, int(total_steps * warmup_fraction))
    return keras.optimizers.schedules.CosineDecay(
        0.0,
        decay_steps=max(total_steps - warmup, 1),
        warmup_target=learning_rate,
        warmup_steps=warmup,
    )


class PretrainingRecipe(Recipe):
    family = "pretraining"
    description = "BERT-style masked LM, GPT-style causal LM, fine-tuning"
    tasks = (
        Task(
            "pretrain_mlm",
            ("bert",),
            "masked LM (+ next sentence) on a corpus (default: GCIDE + fortunes, make data)",
            epochs=1,
            batch_size=64,
            samples=1_000_000,  # at most this many training documents
            options=(*CORPUS_OPTIONS, SEGMENTS_OPTION, *SIZE_OPTIONS),
            held_out=True,
        ),
        Task(
            "pretrain_lm",
            ("gpt",),
            "causal LM on a corpus, exportable generation (default: GCIDE + fortunes)",
            epochs=1,
            batch_size=32,
            samples=1_000_000,
            options=(*CORPUS_OPTIONS, *SIZE_OPTIONS),
            held_out=True,
        ),
        Task(
            "finetune",
            ("bert", "gpt"),
            "fortune topics, from a pretrain_mlm/pretrain_lm run (--init RUN) or from scratch",
            epochs=10,
            batch_size=32,
            samples=20000,
            held_out=True,
            options=(
                Option("--init", "a pretrain_mlm (bert) or pretrain_lm (gpt) run", "dir"),
                Option(
                    "--weights",
                    "with --init: the pretrained encoder, or random weights (same vocabulary)",
                    default="pretrained",
                    choices=("pretrained", "random"),
                ),
                FORTUNES_OPTION,
                Option("--vocab-size", "WordPiece pieces (without --init)", int, default=4000),
                Option(
                    "--windows",
                    "read each fortune as up to this many windows of sequence_length - 2 "
                    "pieces, for training and classifying (1: its first window only)",
                    int,
                    default=FINETUNE_WINDOWS,
                ),
            ),
        ),
    )

    def settings(self, task, model_name):
        """The builder's sizes and the schedule's peak ``learning_rate`` and
        ``warmup_fraction`` (and the GPT classifier's ``lm_loss_weight``, the BERT classifier's
        ``pooling``)."""
        return dict(SETTINGS[(task, model_name)])

    # -- models --------------------------------------------------------------------------------

    def build_model(
        self,
        task,
        model_name,
        vocab_size,
        num_classes=None,
        total_steps=1000,
        pretrained=None,
        jit_compile=True,
        segments=SEGMENTS,
        **overrides,
    ):
        """The compiled model of ``task``: a `bert_pretrainer`, a `gpt_lm`, a
        `bert_classifier` or a `gpt_classifier`; the classifiers are built on ``pretrained``
        when given (a BERT encoder, `encoder_of`, or a `gpt_lm`). The masked-LM pretrainer
        has the next-sentence head for ``segments="pairs"`` (`mlm_dataset`)."""
        import keras

        from keras_adl.models import bert, gpt

        settings = override(self.settings(task, model_name), overrides)
        rate = warmup_cosine(
            settings.pop("learning_rate"), total_steps, settings.pop("warmup_fraction")
        )
        lm_loss_weight = settings.pop("lm_loss_weight", 0.0)
        pooling = settings.pop("pooling", "cls")
        optimizer = keras.optimizers.Adam(rate, global_clipnorm=1.0)
        if model_name == "gpt":
            lm = pretrained if pretrained is not None else gpt.gpt_lm(vocab_size, **settings)
            if task == "pretrain_lm":
                return gpt.compile_lm(lm, optimizer=optimizer, jit_compile=jit_compile)
            model = gpt.gpt_classifier(
                lm, num_classes, dropout=settings["dropout"], lm_loss=lm_loss_weight > 0
            )
            return gpt.compile_classifier(
                model, lm_loss_weight, optimizer=optimizer, jit_compile=jit_compile
            )
        encoder = pretrained
        if encoder is None:
            encoder = bert.bert_encoder(vocab_size, **settings)
        if task == "pretrain_mlm":
            model = bert.bert_pretrainer(
                encoder, max_predictions=MAX_PREDICTIONS, next_sentence=segments == "pairs"
            )
            return bert.compile_pretrainer(model, optimizer=optimizer, jit_compile=jit_compile)
        model = bert.bert_classifier(
            encoder, num_classes, dropout=settings["dropout"], pooling=pooling
        )
        model.compile(
            optimizer=optimizer,
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
            jit_compile=jit_compile,
        )
        return model

    # -- data ----------------------------------------------------------------------------------

    @staticmethod
    def corpus(data, samples, blocks=False):
        """``(train, held_out)`` document strings: ``data`` (`load_corpus`; with ``blocks``
        a file without blank lines gives blocks of consecutive lines, one sentence each), or
        by default the installed GCIDE and fortunes (`default_corpus`)."""
        import numpy as np

        from keras_adl.data.text_corpora import LAYOUT_RULE, load_corpus

        if data is None:
            return default_corpus(samples)
        try:
            documents = [d for d in load_corpus(data, blocks=blocks) if d.strip()]
        except ValueError as error:
            raise RecipeError(str(error)) from None
        if len(documents) < 4:
            raise RecipeError(
                f"{data}: the corpus holds {len(documents)} documents; need at least 4 "
                f"({LAYOUT_RULE})"
            )
        order = np.random.default_rng(SPLIT_SEED).permutation(len(documents))
        held = max(1, int(len(documents) * HELD_OUT_FRACTION))
        held_out = [documents[i] for i in order[:held]]
        train = [documents[i] for i in order[held:]][:samples]
        return train, held_out

    @staticmethod
    def development(documents):
        """``(train, development)``: the training documents without the development split, and
        that split, a seeded tenth of the distinct documents (at most `DEVELOPMENT_DOCUMENTS`;
        every copy of a repeated one leaves training), or ``(documents, None)`` below
        `MIN_FOR_DEVELOPMENT` distinct documents."""
        distinct = list(dict.fromkeys(documents))
        rows = development_rows(len(distinct), DEVELOPMENT_DOCUMENTS)
        if rows is None:
            return documents, None
        development = [distinct[i] for i in rows[1]]
        held = set(development)
        return [d for d in documents if d not in held], development

    def development_data(
        self,
        task,
        tokenizer,
        development,
        batch_size,
        length,
        segments=SEGMENTS,
        batches=DEVELOPMENT_BATCHES,
    ):
        """The development documents as Keras' ``validation_data`` of ``task``: ``batches``
        masked-LM batches of ``length`` pieces, drawn once, or at most as many batches of
        causal-LM windows; ``None`` when they hold too little text for that (no sentence
        pair, or too few words for one window)."""
        import tensorflow as tf

        if task == "pretrain_mlm":
            if segments == "pairs" and not self.mlm_examples(development, segments):
                return None
            data = self.mlm_dataset(
                tokenizer, development, batch_size, length, DEVELOPMENT_SEED, segments
            )
            return data.take(batches).cache()
        try:
            inputs, targets = self.lm_windows_of(tokenizer, development, length)
        except RecipeError:
            return None
        most = batches * batch_size
        return tf.data.Dataset.from_tensor_slices((inputs[:most], targets[:most])).batch(batch_size)

    @staticmethod
    def learn_tokenizer(texts, vocab_size):
        """A `WordPieceTokenizer` whose vocabulary (``[MASK]`` first) is learned on
        ``texts`` (repeats dropped; at most 200,000 of them)."""
        from keras_adl.data.pretraining import pretraining_vocabulary
        from keras_adl.text.wordpiece import WordPieceTokenizer, learn_wordpiece

        pieces = learn_wordpiece(list(dict.fromkeys(texts))[:200_000], vocab_size)
        return WordPieceTokenizer(pretraining_vocabulary(pieces))

    @staticmethod
    def mlm_dataset(tokenizer, documents, batch_size, sequence_length, seed, segments=SEGMENTS):
        """Masked-LM batches (`masked_lm_batches`): of whole documents (``segments=
        "documents"``, each packed alone, cut to the sequence length) or of the documents'
        sentence pairs with their next-sentence labels (``"pairs"``)."""
        import tensorflow as tf

        from keras_adl.data.pretraining import masked_lm_batches, pack_inputs, sentence_pairs

        if segments == "documents":
            texts = tf.data.Dataset.from_tensor_slices(list(documents))
            texts = texts.shuffle(len(documents), seed=seed, reshuffle_each_iteration=True)
            batches = (
                texts.repeat()
                .batch(batch_size, drop_remainder=True)
                .map(
                    lambda t: pack_inputs(tokenizer.tokenize(t), sequence_length),
                    num_parallel_calls=tf.data.AUTOTUNE,
                )
            )
            return masked_lm_batches(
                batches, tokenizer.size, seed=seed, max_predictions=MAX_PREDICTIONS
            ).prefetch(tf.data.AUTOTUNE)
        if segments != "pairs":
            raise ValueError(
                f"mlm_dataset: `segments` must be 'documents' or 'pairs'; received {segments!r}."
            )
        pairs = sentence_pairs([sentences_of(d) for d in documents], seed)

        def pack(first, second, is_next):
            packed = pack_inputs(
                tokenizer.tokenize(first), sequence_length, tokenizer.tokenize(second)
            )
            packed["is_next"] = is_next
            return packed

        batches = pairs.batch(batch_size, drop_remainder=True).map(
            pack, num_parallel_calls=tf.data.AUTOTUNE
        )
        return masked_lm_batches(
            batches, tokenizer.size, seed=seed, max_predictions=MAX_PREDICTIONS
        ).prefetch(tf.data.AUTOTUNE)

    @staticmethod
    def mlm_examples(documents, segments=SEGMENTS):
        """The masked-LM examples of one pass over ``documents``: the documents, or their
        sentence pairs (a sentence and its successor)."""
        if segments == "pairs":
            return sum(max(len(sentences_of(d)) - 1, 0) for d in documents)
        return len(documents)

    def lm_windows_of(self, tokenizer, documents, sequence_length, what="the corpus"):
        """``(inputs, targets)`` causal-LM windows of the documents (`lm_windows`).

        Raises:
            RecipeError: too little text for one window (naming ``what`` and the fix).
        """
        from keras_adl.data.pretraining import lm_windows

        try:
            return lm_windows(self.token_lists(tokenizer, documents), sequence_length)
        except ValueError as error:
            raise RecipeError(
                f"{what} is too short for the causal LM: {str(error).removeprefix('lm_windows: ')}"
                f" Give more text (its held-out part is {HELD_OUT_FRACTION:.0%} of the documents)."
            ) from None

    @staticmethod
    def lm_dataset(inputs, targets, batch_size):
        """Endless shuffled batches of causal-LM windows."""
        import tensorflow as tf

        return (
            tf.data.Dataset.from_tensor_slices((inputs, targets))
            .shuffle(len(inputs), seed=0, reshuffle_each_iteration=True)
            .repeat()
            .batch(batch_size, drop_remainder=True)
            .prefetch(2)
        )

    @staticmethod
    def token_lists(tokenizer, documents, batch_size=1024):
        """The piece ids of each document (a list of lists)."""
        import tensorflow as tf

        ids = []
        for start in range(0, len(documents), batch_size):
            chunk = tf.constant(documents[start : start + batch_size])
            ids.extend(tokenizer.tokenize(chunk).to_list())
        return ids

    @staticmethod
    def classifier_windows(model_name, tokenizer, texts, sequence_length, max_windows=1):
        """Texts as a fine-tuned classifier reads them: each text of ``texts`` (a string
        tensor or a list) cut into up to ``max_windows`` windows of ``sequence_length - 2``
        pieces (`text_windows`), each packed as one example: ``{"token_ids", "segment_ids"}``
        (``[CLS] window [SEP]``, `pack_inputs`; ``bert``) or ``token_ids`` (``[SEP] window
        [SEP]``, `pack_for_lm`; ``gpt``). Eager or inside a ``tf.function`` (serving).

        Returns:
            ``(inputs, next_ids, owner)``: the packed windows ``[W, L]``; for ``gpt`` their
            next-token targets ``[W, L]`` (the auxiliary LM loss; ``None`` for ``bert``); and
            ``owner [W]``, the text each window comes from.
        """
        import tensorflow as tf

        from keras_adl.data.pretraining import pack_for_lm, pack_inputs, text_windows

        _check_classifier(model_name, sequence_length)
        texts = tf.convert_to_tensor(texts, tf.string)
        windows, owner = text_windows(tokenizer.tokenize(texts), sequence_length - 2, max_windows)
        if model_name == "gpt":
            token_ids, next_ids = pack_for_lm(windows, sequence_length)
            return token_ids, next_ids, owner
        packed = pack_inputs(windows, sequence_length)
        return {k: packed[k] for k in ("token_ids", "segment_ids")}, None, owner

    def text_classes(
        self,
        tokenizer,
        texts,
        labels,
        batch_size,
        sequence_length,
        shuffle,
        model_name="bert",
        lm_targets=False,
        max_windows=1,
    ):
        """Batches of texts for a classifier, each text as up to ``max_windows`` windows
        (`classifier_windows`) with its label: ``({"token_ids", "segment_ids"}, label)``
        (``bert``) or ``(token_ids, {"classes": label})`` (``gpt``; with ``lm_targets`` also
        ``"lm"``, the next-token targets of the auxiliary loss). With ``shuffle`` the windows
        are shuffled (seed 0, anew each epoch) and the last partial batch dropped. The
        dataset's cardinality is its number of batches: the steps of one epoch."""
        import numpy as np
        import tensorflow as tf

        _check_labels(texts, labels)
        inputs, next_ids, owner = self.classifier_windows(
            model_name, tokenizer, list(texts), sequence_length, max_windows
        )
        labels = tf.gather(np.asarray(labels), owner)
        targets = labels
        if model_name == "gpt":
            targets = {"classes": labels}
            if lm_targets:
                targets["lm"] = next_ids
        dataset = tf.data.Dataset.from_tensor_slices((inputs, targets))
        if shuffle:
            count = int(tf.shape(owner)[0])
            dataset = dataset.shuffle(count, seed=0, reshuffle_each_iteration=True)
        return dataset.batch(batch_size, drop_remainder=shuffle).prefetch(2)

    @staticmethod
    def classifier_accuracy(serve, texts, labels, batch_size=256):
        """The accuracy of a text classifier's serving function (`make_text_classifier_serving_fn`)
        on ``texts``, each classified by all the windows it reads."""
        import numpy as np
        import tensorflow as tf

        _check_labels(texts, labels)
        if not len(texts):
            raise ValueError("classifier_accuracy: `texts` is empty; expected at least one text.")

        classes = [
            serve(tf.constant(list(texts[start : start + batch_size])))["classes"].numpy()
            for start in range(0, len(texts), batch_size)
        ]
        return float(np.mean(np.concatenate(classes) == np.asarray(labels)))

    # -- train ---------------------------------------------------------------------------------

    @staticmethod
    def model_sizes(options):
        """The sizes ``--num-layers``, ``--model-dim``, ``--num-heads`` and
        ``--intermediate-dim`` give (the others stay the recipe's `SIZES`), checked to fit
        together."""
        sizes = {
            option.dest: options[option.dest]
            for option in SIZE_OPTIONS
            if options.get(option.dest) is not None
        }
        model_dim = sizes.get("model_dim", SIZES["model_dim"])
        num_heads = sizes.get("num_heads", SIZES["num_heads"])
        if model_dim % num_heads:
            raise RecipeError(
                f"--model-dim ({model_dim}) must be divisible by --num-heads ({num_heads})"
            )
        return sizes

    def train(self, run):
        if run.task == "finetune":
            return self._finetune(run)
        sizes = self.model_sizes(run.options)  # refused before the corpus is read
        blocks = run.options.get("segments") == "pairs"
        given, held_out = self.corpus(run.options.get("data"), run.samples, blocks)
        train, development = self.development(given)
        tokenizer = self.learn_tokenizer(train, run.options["vocab_size"])
        with open(run.path(VOCABULARY_FILE), "w") as f:
            json.dump(tokenizer.get_config(), f)
        segments = run.options.get("segments", SEGMENTS)
        validation = None
        if development is not None:  # its loss picks the best epoch
            length = self.settings(run.task, run.model)["sequence_length"]
            validation = self.development_data(
                run.task, tokenizer, development, run.batch_size, length, segments
            )
        if validation is None:
            reason = (
                f"{len(set(given))} distinct training documents are too few to set some aside "
                f"(it takes {MIN_FOR_DEVELOPMENT})"
            )
            if development is not None:
                train = given  # back into training
                reason = f"the {len(development)} documents set aside hold too little text to score"
            without_development(run, reason)
        else:
            run.record["development_documents"] = len(development)
        settings = dict(self.settings(run.task, run.model), **sizes)
        run.record.update(
            settings=settings,
            data=run.options.get("data") or "gcide+fortunes",
            train_documents=len(train),
            held_out_documents=len(held_out),
            vocabulary=tokenizer.size,
        )
        if run.task == "pretrain_mlm":
            return self._pretrain_mlm(run, tokenizer, train, held_out, settings, validation)
        return self._pretrain_lm(run, tokenizer, train, held_out, settings, validation)

    def _pretrain_mlm(self, run, tokenizer, train, held_out, settings, validation=None):
        import numpy as np

        length = settings["sequence_length"]
        segments = run.options.get("segments", SEGMENTS)
        examples = self.mlm_examples(train, segments)
        steps = run.options.get("steps") or max(1, examples // run.batch_size)
        run.record.update(segments=segments, examples=examples, steps_per_epoch=steps)
        model = run.build(
            self.build_model,
            run.task,
            run.model,
            tokenizer.size,
            total_steps=steps * run.epochs,
            segments=segments,
            **{k: v for k, v in settings.items() if k in SIZES},
        )
        data = self.mlm_dataset(tokenizer, train, run.batch_size, length, 0, segments)
        log = step_log(run, ("loss", "mlm_accuracy"))
        history = self.fit(
            run, model, data, steps_per_epoch=steps, shuffle=False, validation_data=validation
        )
        texts = [s for d in held_out for s in sentences_of(d)]
        _pictures(run, model, log, tokenizer, texts, length, "masked LM")
        evaluation = self.mlm_dataset(tokenizer, held_out, run.batch_size, length, 1, segments)
        evaluation = evaluation.take(EVALUATION_BATCHES).cache()
        figures = model.evaluate(evaluation, verbose=0, return_dict=True)
        targets = np.concatenate([t["mlm"].numpy()[w["mlm"].numpy() > 0] for _, t, w in evaluation])
        baseline = float(np.bincount(targets).max() / len(targets))
        accuracy = float(figures["mlm_accuracy"])
        metrics = {
            "held_out_masked_accuracy": accuracy,
            "most_frequent_token_accuracy": baseline,
            "masked_accuracy_over_baseline": accuracy / baseline,
            "held_out_masked_tokens": int(len(targets)),
        }
        if "nsp_accuracy" in figures:
            metrics["held_out_next_sentence_accuracy"] = float(figures["nsp_accuracy"])
        return model, history, metrics

    def _pretrain_lm(self, run, tokenizer, train, held_out, settings, validation=None):
        import numpy as np
        import tensorflow as tf

        from keras_adl.models.gpt import generate

        length = settings["sequence_length"]
        data = run.options.get("data") or "the corpus"
        inputs, targets = self.lm_windows_of(tokenizer, train, length, f"{data} (training part)")
        held_inputs, held_targets = self.lm_windows_of(
            tokenizer, held_out, length, f"{data} (held-out part)"
        )
        steps = run.options.get("steps") or max(1, len(inputs) // run.batch_size)
        run.record.update(train_windows=len(inputs), steps_per_epoch=steps)
        model = run.build(
            self.build_model,
            run.task,
            run.model,
            tokenizer.size,
            total_steps=steps * run.epochs,
            **{k: v for k, v in settings.items() if k in SIZES},
        )
        data = self.lm_dataset(inputs, targets, run.batch_size)
        log = step_log(run, ("loss", "perplexity"))
        history = self.fit(
            run, model, data, steps_per_epoch=steps, shuffle=False, validation_data=validation
        )
        texts = [s for d in held_out for s in sentences_of(d)]
        _pictures(run, model, log, tokenizer, texts, length, "causal LM")
        figures = model.evaluate(
            held_inputs, held_targets, batch_size=run.batch_size, verbose=0, return_dict=True
        )
        counts = np.bincount(targets.ravel(), minlength=tokenizer.size) + 1.0  # add-one
        log_p = np.log(counts / counts.sum())
        unigram = float(np.exp(-log_p[held_targets.ravel()].mean()))
        perplexity = float(figures["perplexity"])
        prompt = held_out[0].split()[:4]
        prompt_ids = tokenizer.tokenize(tf.constant([" ".join(prompt)])).to_tensor()
        generated = generate(model, prompt_ids, min(GENERATE_LENGTH, length))
        text = tokenizer.detokenize(generated).numpy()[0].decode()
        print(f"  {' '.join(prompt)!r} → {text!r}")
        metrics = {
            "held_out_perplexity": perplexity,
            "unigram_perplexity": unigram,
            "perplexity_over_unigram": perplexity / unigram,
            "held_out_tokens": int(held_targets.size),
            "sample": text,
        }
        return model, history, metrics

    def _finetune(self, run):
        init = run.options.get("init")
        if init:  # a wrong --init is refused before the fortunes are read
            self.init_run(init, run.model)
        fortunes = self._fortunes(run.options, run.samples)
        train_docs, train_labels, test_docs, test_labels, names, _, development = fortunes
        if development is None:
            without_development(
                run,
                f"{len(train_docs)} training fortunes are too few to set some aside (it takes "
                f"{MIN_FOR_DEVELOPMENT})",
            )
        settings = self.settings(run.task, run.model)
        tokenizer, sizes = self._finetune_start(run.options, run.model, train_docs)
        settings.update(sizes)
        with open(run.path(VOCABULARY_FILE), "w") as f:
            json.dump(tokenizer.get_config(), f)
        pretrained = bool(init) and run.options.get("weights") == "pretrained"
        windows = run.options.get("windows", FINETUNE_WINDOWS)
        run.record.update(
            settings=settings,
            init=init,
            weights="pretrained" if pretrained else "random",
            class_names=names,
            train_documents=len(train_docs),
            windows=windows,
        )
        length = settings["sequence_length"]
        batch = min(run.batch_size, len(train_docs))
        # Each model reads the same windows; the auxiliary LM targets only matter to a
        # gpt_classifier built with its LM output (lm_loss_weight > 0).
        lm_targets = run.model == "gpt" and settings.get("lm_loss_weight", 0.0) > 0
        data = self.text_classes(
            tokenizer, train_docs, train_labels, batch, length, True, run.model, lm_targets, windows
        )
        steps = int(data.cardinality())

        def build(jit_compile=True):
            return self.build_model(
                "finetune",
                run.model,
                tokenizer.size,
                num_classes=len(names),
                total_steps=steps * run.epochs,
                pretrained=self.load_pretrained(init, run.model) if pretrained else None,
                jit_compile=jit_compile,
                **{k: v for k, v in settings.items() if k in SIZES},
            )

        model = run.build(build)
        run.record["steps_per_epoch"] = steps
        accuracy = "classes_accuracy" if run.model == "gpt" else "accuracy"
        log = step_log(run, ("loss", accuracy))
        validation = None
        if development is not None:  # its loss picks the best epoch
            run.record["development_documents"] = len(development[0])
            validation = self.text_classes(
                tokenizer, *development, 128, length, False, run.model, lm_targets, windows
            )
        history = self.fit(
            run,
            model,
            data.repeat(),
            steps_per_epoch=steps,
            shuffle=False,
            validation_data=validation,
        )
        _pictures(run, model, log, tokenizer, test_docs, length, "fine-tuning")
        metrics = {
            "held_out_accuracy": self.classifier_accuracy(
                make_text_classifier_serving_fn(
                    model, run.model, tokenizer, length, names, windows
                ),
                test_docs,
                test_labels,
            ),
            "held_out_documents": len(test_docs),
        }
        if windows > 1:
            metrics["held_out_first_window_accuracy"] = self.classifier_accuracy(
                make_text_classifier_serving_fn(model, run.model, tokenizer, length, names, 1),
                test_docs,
                test_labels,
            )
        return model, history, metrics

    @staticmethod
    def _fortunes(options, samples):
        """The documents family's fortunes split, its training fortunes without the
        development split: ``(train_docs, train_labels, test_docs, test_labels, names, _,
        development)``."""
        from keras_adl.recipes.documents import data as documents_data

        train_docs, train_labels, *rest = documents_data.fortune_topics(
            options.get("data"), samples
        )
        train_docs, train_labels, development = documents_data.development_split(
            train_docs, train_labels
        )
        return (train_docs, train_labels, *rest, development)

    def _finetune_start(self, options, model_name, train_docs):
        """``(tokenizer, sizes)`` of fine-tuning: with ``--init``, the pretraining run's
        vocabulary and model sizes; otherwise a vocabulary learned on ``train_docs``."""
        init = options.get("init")
        if not init:
            return self.learn_tokenizer(train_docs, options["vocab_size"]), {}
        info = self.init_run(init, model_name)
        sizes = {k: v for k, v in info["settings"].items() if k in SIZES}
        return self.load_tokenizer(init), sizes

    @staticmethod
    def init_run(init, model_name):
        """The ``run.json`` of ``--init``, checked to be the pretraining run ``model_name``
        fine-tunes from (`INIT_TASKS`)."""
        info = {}
        path = os.path.join(init, "run.json")
        if os.path.isfile(path):
            with open(path) as f:
                info = json.load(f)
        expected = INIT_TASKS[model_name]
        if info.get("task") != expected:
            raise RecipeError(
                f"--init must be a {expected} run directory for {model_name}; {init!r} holds "
                f"{info.get('task') or 'no run'}"
            )
        return info

    @staticmethod
    def load_tokenizer(run_dir):
        """The `WordPieceTokenizer` saved in a run or export directory."""
        from keras_adl.text.wordpiece import WordPieceTokenizer

        with open(os.path.join(run_dir, VOCABULARY_FILE)) as f:
            return WordPieceTokenizer.from_config(json.load(f))

    @staticmethod
    def load_pretrained(init, model_name):
        """The pretrained part of an ``--init`` run's model: the BERT encoder (`encoder_of`)
        or the whole `gpt_lm`."""
        import keras

        from keras_adl.models.bert import encoder_of

        # Weights only: fine-tuning compiles its own optimizer, so the run's is not restored.
        source = keras.saving.load_model(os.path.join(init, "model.keras"), compile=False)
        return encoder_of(source) if model_name == "bert" else source

    # -- tune, export, predict -----------------------------------------------------------------

    def tune(self, task, model_name, trials, epochs, samples, out, options):
        """Random search over `PretrainingHyperModel` (the Transformer's size and the
        warm-up + cosine schedule; with ``finetune --init`` the schedule only), on held-out
        masked-token accuracy (``pretrain_mlm``), perplexity (``pretrain_lm``) or fortune
        accuracy (``finetune``: Keras' validation accuracy, window by window, each window with
        its fortune's label)."""

        from keras_adl.recipes.pretraining import PretrainingHyperModel

        given = [o.flag for o in SIZE_OPTIONS if options.get(o.dest) is not None]
        if given:
            what = "is an option" if len(given) == 1 else "are options"
            raise RecipeError(f"tune searches the model's size; {', '.join(given)} {what} of train")
        batch_size = self.task(task).batch_size
        num_classes = pretrained = None
        segments = options.get("segments", SEGMENTS)
        if task == "finetune":
            fortunes = self._fortunes(options, samples)
            train_docs, train_labels, _, _, names, _, development = fortunes
            if development is None:
                raise RecipeError(
                    f"tune scores trials on a development split, and {len(train_docs)} "
                    f"training fortunes are too few to set some aside (it takes "
                    f"{MIN_FOR_DEVELOPMENT})"
                )
            init = options.get("init")
            tokenizer, sizes = self._finetune_start(options, model_name, train_docs)
            if init and options.get("weights") == "pretrained":

                def pretrained():
                    return self.load_pretrained(init, model_name)

            length = sizes.get("sequence_length", SIZES["sequence_length"])
            batch_size = min(batch_size, len(train_docs))
            num_classes = len(names)
            lm_targets = model_name == "gpt"
            windows = options.get("windows", FINETUNE_WINDOWS)
            data = self.text_classes(
                tokenizer,
                train_docs,
                train_labels,
                batch_size,
                length,
                True,
                model_name,
                lm_targets,
                windows,
            )
            steps = int(data.cardinality())
            data = data.repeat()
            # Keras validates window by window (each window with its fortune's label), not
            # by each fortune's summed log-probabilities as `train` reports.
            validation = self.text_classes(
                tokenizer,
                *development,
                128,
                length,
                False,
                model_name,
                lm_targets,
                windows,
            )
            accuracy = "val_classes_accuracy" if model_name == "gpt" else "val_accuracy"
            objective = (accuracy, "max")
        else:
            blocks = options.get("segments") == "pairs"
            # The training documents train reads, scored on its development split (the
            # held-out documents stay for the reported figures).
            train, development = self.development(
                self.corpus(options.get("data"), samples, blocks)[0]
            )
            tokenizer = self.learn_tokenizer(train, options["vocab_size"])
            length = SIZES["sequence_length"]
            sizes = {}
            validation = None
            if development is not None:
                validation = self.development_data(
                    task, tokenizer, development, batch_size, length, segments, EVALUATION_BATCHES
                )
            if validation is None:
                raise RecipeError(
                    f"tune scores trials on a development split, and the corpus is too small "
                    f"to set one aside (it takes {MIN_FOR_DEVELOPMENT} distinct training "
                    f"documents with text for a batch)"
                )
            if task == "pretrain_mlm":
                examples = self.mlm_examples(train, segments)
                steps = options.get("steps") or max(1, examples // batch_size)
                data = self.mlm_dataset(tokenizer, train, batch_size, length, 0, segments)
                objective = ("val_mlm_accuracy", "max")
            else:
                inputs, targets = self.lm_windows_of(tokenizer, train, length)
                steps = options.get("steps") or max(1, len(inputs) // batch_size)
                data = self.lm_dataset(inputs, targets, batch_size)
                objective = ("val_perplexity", "min")
        hypermodel = PretrainingHyperModel(
            task,
            model_name,
            tokenizer.size,
            total_steps=steps * epochs,
            num_classes=num_classes,
            pretrained=pretrained,
            sizes=sizes,
            segments=segments,
        )
        return self.search(
            hypermodel,
            objective,
            trials,
            out,
            f"{task}_{model_name}",
            data,
            validation_data=validation,
            epochs=epochs,
            steps_per_epoch=steps,
            shuffle=False,
        )

    def export(self, run_dir, run_record, model, export_dir, beam_width=1):
        from keras_adl.training.export import export_serving_fn

        task = run_record["task"]
        tokenizer = self.load_tokenizer(run_dir)
        if task == "pretrain_lm":
            serve = make_generation_serving_fn(
                model, tokenizer, run_record["settings"]["sequence_length"]
            )
        elif task == "finetune":
            serve = make_text_classifier_serving_fn(
                model,
                run_record["model"],
                tokenizer,
                run_record["settings"]["sequence_length"],
                run_record["class_names"],
                run_record.get("windows", 1),  # runs from before windows read one
            )
        else:
            raise RecipeError(
                "a pretrain_mlm run is used through `keras-adl train finetune --init RUN`; "
                "export the finetune run (or a pretrain_lm run)"
            )
        export_serving_fn(model, export_dir, serve)
        self.copy_file(run_dir, VOCABULARY_FILE, export_dir)
        self.write_task_file(export_dir, task=task, model=run_record["model"])

    def predict(self, export_dir, inputs, task_info):
        """``pretrain_lm``: each prompt and its greedy continuation; ``finetune``: each text's
        class, probability and the number of windows read."""
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the ops of exported text models)

        serve = tf.saved_model.load(export_dir).signatures["serving_default"]
        if task_info["task"] == "pretrain_lm":
            outputs = serve(
                prompts=tf.constant(list(inputs)),
                temperature=tf.constant(0.0),
                top_k=tf.constant(0),
                top_p=tf.constant(1.0),
                seed=tf.constant(0),
            )
            for prompt, text in zip(inputs, outputs["texts"].numpy()):
                print(f"{prompt}\t{text.decode()}")
            return
        outputs = serve(texts=tf.constant(list(inputs)))
        windows = outputs.get("windows")  # exports from before windows have none
        windows = windows.numpy() if windows is not None else [None] * len(inputs)
        for text, name, probabilities, count in zip(
            inputs, outputs["class_names"].numpy(), outputs["probabilities"].numpy(), windows
        ):
            label = " ".join((text if len(text) <= 40 else text[:37] + "...").split())
            read = f"\twindows={count}" if count is not None else ""
            print(f"{label}\t{name.decode()}\tp={probabilities.max():.3f}{read}")


RECIPE = PretrainingRecipe()


def _check_classifier(model_name, sequence_length):
    if model_name not in INIT_TASKS:
        raise ValueError(
            f"`model_name` must be one of {', '.join(map(repr, INIT_TASKS))}; "
            f"received {model_name!r}."
        )
    if isinstance(sequence_length, bool) or not isinstance(sequence_length, int):
        raise TypeError(
            f"`sequence_length` must be an int; received {type(sequence_length).__name__}."
        )
    if sequence_length < 3:  # [CLS] or [SEP], one piece, [SEP]
        raise ValueError(f"`sequence_length` must be at least 3; received {sequence_length}.")


def _check_labels(texts, labels):
    if len(labels) != len(texts):
        raise ValueError(
            f"`labels` must hold one label per text: {len(texts)} texts; received "
            f"{len(labels)} labels."
        )


def _split(documents):
    """``(train, held_out)``: `HELD_OUT_FRACTION` of the documents held out (seed
    `SPLIT_SEED`)."""
    import numpy as np

    order = np.random.default_rng(SPLIT_SEED).permutation(len(documents))
    held = int(len(documents) * HELD_OUT_FRACTION)
    return [documents[i] for i in order[held:]], [documents[i] for i in order[:held]]


def default_corpus(samples=None):
    """The default pretraining corpus: the installed GCIDE definitions and Debian's fortunes.

    The fortunes are the training fortunes of the documents family's topic split and every
    other fortune file (`read_other_fortunes`), never one of the split's held-out fortunes,
    so fine-tuning on the topics is measured on text pretraining never saw. Each source is
    split into training and held-out documents (`HELD_OUT_FRACTION`); in the training part
    the fortunes are repeated to make up about `FORTUNE_SHARE` of the documents. Without
    fortunes installed, GCIDE alone.

    Returns:
        ``(train, held_out)`` lists of strings; ``train`` shuffled and cut to ``samples``.
    """
    import numpy as np

    from keras_adl.data.fortunes import read_other_fortunes
    from keras_adl.data.text_corpora import load_corpus
    from keras_adl.recipes.documents import data as documents_data

    try:
        train_topics, _, test_topics, *_ = documents_data.fortune_topics(None, 10**9)
        fortunes = list(train_topics) + read_other_fortunes(exclude=test_topics)
    except (OSError, ValueError):
        fortunes = []  # fortunes not installed: GCIDE alone
    definitions, held_definitions = _split([d for d in load_corpus(None) if d.strip()])
    fortunes, held_fortunes = _split(list(dict.fromkeys(f for f in fortunes if f.strip())))
    repeat = 0
    if fortunes:
        share = FORTUNE_SHARE / (1.0 - FORTUNE_SHARE)
        repeat = max(1, round(share * len(definitions) / len(fortunes)))
    train = definitions + fortunes * repeat
    order = np.random.default_rng(SPLIT_SEED).permutation(len(train))
    train = [train[i] for i in order][:samples]
    held_out = held_definitions + held_fortunes
    if len(train) < 2 or not held_out:
        raise RecipeError(f"the default corpus holds {len(train)} training documents")
    return train, held_out


ATTENTION_PICTURE = "attention.png"
# The picture's text: the first candidate of this many pieces (else the first, cut).
ATTENTION_PIECES = (6, 22)


def _plot_attention(model, model_name, tokenizer, texts, sequence_length, out, title):
    """Draws each head's attention over one text (`plot_attention_heads`): the first of
    ``texts`` whose length in pieces lies within `ATTENTION_PIECES`."""
    import tensorflow as tf

    from keras_adl.data.pretraining import pack_for_lm, pack_inputs
    from keras_adl.models import bert, gpt
    from keras_adl.plotting import plot_attention_heads

    texts = [t for t in texts if t.strip()][:200]
    if not texts:
        return None
    low, high = ATTENTION_PIECES
    lengths = tokenizer.tokenize(tf.constant(texts)).row_lengths().numpy()
    text = next((t for t, n in zip(texts, lengths) if low <= n <= high), texts[0])
    ids = tokenizer.tokenize(tf.constant([text]))[:, :high]
    length = min(sequence_length, high + 2)
    if model_name == "gpt":
        token_ids = pack_for_lm(ids, length)[0]
        weights = gpt.attention_weights(model, token_ids)
    else:
        packed = pack_inputs(ids, length)
        token_ids = packed["token_ids"]
        weights = bert.attention_weights(model, token_ids, packed["segment_ids"])
    n = int(tf.reduce_sum(tf.cast(token_ids[0] > 0, tf.int32)))
    pieces = [p.decode() for p in tokenizer.id_to_piece(token_ids[0, :n]).numpy()]
    return draw(
        plot_attention_heads,
        tf.convert_to_tensor(weights)[:, 0].numpy(),
        pieces,
        os.path.join(out, ATTENTION_PICTURE),
        title,
    )


def _pictures(run, model, log, tokenizer, texts, sequence_length, what):
    """The run's pictures: the training curves (``training.png``) and each head's attention
    over one of ``texts`` (`ATTENTION_PICTURE`)."""
    plot_step_log(log, run.out, what)
    _plot_attention(
        model,
        run.model,
        tokenizer,
        texts,
        sequence_length,
        run.out,
        f"{what}: attention per layer and head",
    )


# -- serving functions (exported SavedModels) --------------------------------------------------


def make_generation_serving_fn(model, tokenizer, max_length):
    """A ``tf.function`` from raw prompt strings and sampling settings to generated text.

    Signature: ``prompts [None]`` string, ``temperature`` float (0: greedy), ``top_k`` int
    (0: no limit), ``top_p`` float (1: no limit), ``seed`` int (sampling draws are stateless
    functions of it and the step). Returns ``texts [B]`` (prompt and continuation, normalised
    words) and ``tokens [B, max_length]``. Tokenization and generation run in the graph, so
    the SavedModel needs only ``tensorflow`` and ``tensorflow_text`` to reload.
    """
    import tensorflow as tf

    from keras_adl.models.gpt import generate

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="prompts"),
            tf.TensorSpec([], tf.float32, name="temperature"),
            tf.TensorSpec([], tf.int32, name="top_k"),
            tf.TensorSpec([], tf.float32, name="top_p"),
            tf.TensorSpec([], tf.int32, name="seed"),
        ]
    )
    def serve(prompts, temperature, top_k, top_p, seed):
        ids = tokenizer.tokenize(prompts)[:, : max_length - 1].to_tensor(shape=[None, None])

        def noise(t, shape):
            return tf.random.stateless_uniform(shape, tf.stack([seed, t]), minval=1e-7)

        tokens = generate(
            model,
            ids,
            max_length,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            noise=noise,
        )
        return {"texts": tokenizer.detokenize(tokens), "tokens": tokens}

    return serve


def make_text_classifier_serving_fn(
    model, model_name, tokenizer, sequence_length, class_names, max_windows=1
):
    """A ``tf.function`` from raw strings (``texts [None]``) to a fine-tuned classifier's
    ``classes``, ``probabilities`` and ``class_names`` (and ``windows``, how many windows of
    each text it read).

    Each text is read as the classifier was trained to read it: up to ``max_windows`` windows
    of ``sequence_length - 2`` pieces (`PretrainingRecipe.classifier_windows`). Its
    probabilities are the product of its windows' class probabilities, renormalised (the
    softmax of the sum of their log-probabilities), so one confident window can outweigh
    several unsure ones, and a text of one window gets the model's own probabilities. (A
    product of posteriors counts the class prior once per window, so a long text leans a
    little further towards the frequent topics than its windows' evidence alone would.)
    Tokenization and windowing run in the graph: the SavedModel needs only ``tensorflow`` and
    ``tensorflow_text`` to reload.
    """
    import tensorflow as tf

    _check_classifier(model_name, sequence_length)
    names = tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        inputs, _, owner = PretrainingRecipe.classifier_windows(
            model_name, tokenizer, texts, sequence_length, max_windows
        )
        logits = model(inputs, training=False)
        if isinstance(logits, dict):
            logits = logits["classes"]
        log_probabilities = tf.nn.log_softmax(tf.cast(logits, tf.float32))
        count = tf.shape(texts)[0]
        scores = tf.math.unsorted_segment_sum(log_probabilities, owner, count)
        probabilities = tf.nn.softmax(scores)
        classes = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        return {
            "classes": classes,
            "probabilities": probabilities,
            "class_names": tf.gather(names, classes),
            "windows": tf.math.bincount(owner, minlength=count, maxlength=count),
        }

    return serve


# -- HyperModels (keras-tuner, imported on first use) -------------------------------------------


def _hypermodels():
    keras_tuner = import_keras_tuner()

    class PretrainingHyperModel(keras_tuner.HyperModel):
        """Searches a pretraining-family model (`PretrainingRecipe.build_model`): the
        Transformer's size — ``model_dim`` (64, 128, 256; the feed-forward width is 4×),
        ``num_layers`` (1–4), ``num_heads`` (2, 4), ``dropout`` — and its learning-rate
        schedule — the peak ``learning_rate`` (log scale, 1e-4 to 3e-3) and the linear
        warm-up's share of the steps, ``warmup_fraction`` (0, 0.05, 0.1, 0.2), before the
        cosine decay to 0; for the GPT classifier also ``lm_loss_weight``. The defaults are the
        recipe's `SETTINGS`.

        Args:
            task, model_name: a task of the recipe and its model (``bert`` or ``gpt``).
            vocab_size: the tokenizer's size.
            total_steps: the steps the schedule spans (steps per epoch × epochs).
            num_classes: for ``finetune``.
            pretrained: for ``finetune``, a function returning the pretrained BERT encoder
                or `gpt_lm` (called anew for each trial); the sizes are then not searched.
            sizes: sizes fixed instead of searched (a pretrained run's ``sequence_length``).
            segments: ``pretrain_mlm``'s examples (``"pairs"``: with next-sentence
                prediction).
        """

        def __init__(
            self,
            task,
            model_name,
            vocab_size,
            total_steps,
            num_classes=None,
            pretrained=None,
            sizes=None,
            segments=SEGMENTS,
            name=None,
            tunable=True,
        ):
            super().__init__(name=name or f"{task}_{model_name}", tunable=tunable)
            RECIPE.settings(task, model_name)  # a KeyError for an unknown pair
            self.task, self.model_name = task, model_name
            self.vocab_size, self.total_steps = vocab_size, total_steps
            self.num_classes, self.pretrained = num_classes, pretrained
            self.sizes = dict(sizes or {})
            self.segments = segments

        def build(self, hp):
            defaults = RECIPE.settings(self.task, self.model_name)
            overrides = dict(self.sizes)
            if self.pretrained is None:
                dim = hp.Choice("model_dim", [64, 128, 256], default=defaults["model_dim"])
                overrides.update(
                    model_dim=dim,
                    intermediate_dim=4 * dim,
                    num_layers=hp.Int("num_layers", 1, 4, default=defaults["num_layers"]),
                    num_heads=hp.Choice("num_heads", [2, 4], default=defaults["num_heads"]),
                    dropout=hp.Float("dropout", 0.0, 0.3, step=0.1, default=defaults["dropout"]),
                )
            overrides["learning_rate"] = hp.Float(
                "learning_rate", 1e-4, 3e-3, sampling="log", default=defaults["learning_rate"]
            )
            overrides["warmup_fraction"] = hp.Choice(
                "warmup_fraction", [0.0, 0.05, 0.1, 0.2], default=defaults["warmup_fraction"]
            )
            if "lm_loss_weight" in defaults:  # > 0: the data carries the LM targets
                overrides["lm_loss_weight"] = hp.Choice(
                    "lm_loss_weight", [0.1, 0.25, 0.5, 1.0], default=defaults["lm_loss_weight"]
                )
            return RECIPE.build_model(
                self.task,
                self.model_name,
                self.vocab_size,
                num_classes=self.num_classes,
                total_steps=self.total_steps,
                pretrained=self.pretrained() if self.pretrained else None,
                segments=self.segments,
                **overrides,
            )

    return locals()


__getattr__, __dir__ = lazy_hypermodels(globals(), _hypermodels, ("PretrainingHyperModel",))

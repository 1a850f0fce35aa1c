"""The pretraining family: BERT-style masked-LM and GPT-style causal-LM pretraining on a text
corpus, and fine-tuning on Debian's fortunes.

Tasks:

- ``pretrain_mlm`` (model ``bert``): masked LM (dynamic masking, 15% and 80/10/10) and
  next-sentence prediction on sentence pairs of the corpus (`keras_adl.tasks.pretraining`);
  reports held-out masked-token accuracy against the most-frequent-token baseline.
- ``pretrain_lm`` (model ``gpt``): next-token prediction on windows of the corpus; reports
  held-out perplexity against a unigram model and prints a generated continuation. Its export
  takes raw prompt strings and the sampling settings and returns text.
- ``finetune`` (model ``bert``): fortune topics (the documents family's split, so the two
  families are compared on the same held-out fortunes); ``--init RUN`` starts from a
  ``pretrain_mlm`` run (its vocabulary and, unless ``--weights random``, its encoder).

Corpus (``--data``): a UTF-8 text file or directory, ``gcide.dict.dz`` or a WordNet directory
(`keras_adl.tasks.text_corpora.load_corpus`); by default the installed GCIDE dictionary plus the
training fortunes (``make data``). 2% of the documents are held out. The WordPiece vocabulary
(`keras_adl.text.wordpiece`, with ``[MASK]``) is learned on the training documents and saved
beside the model as ``vocab.json``.
"""

import json
import os
import re

from keras_adl.recipes.base import Option, Recipe, RecipeError, Task, override

VOCABULARY_FILE = "vocab.json"
VOCAB_SIZE = 8000
HELD_OUT_FRACTION = 0.02
SPLIT_SEED = 0
MAX_PREDICTIONS = 10
EVALUATION_BATCHES = 20
# Encoder/decoder sizes (the 2-layer, d = 128 model) and the peak learning rate of
# the warm-up (first 10% of the steps) + cosine decay schedule.
SIZES = dict(
    sequence_length=64, model_dim=128, num_heads=2, intermediate_dim=512, num_layers=2, dropout=0.1
)
SETTINGS = {
    ("pretrain_mlm", "bert"): dict(SIZES, learning_rate=1e-3),
    ("pretrain_lm", "gpt"): dict(SIZES, learning_rate=1e-3),
    ("finetune", "bert"): dict(SIZES, learning_rate=3e-4),
}
WARMUP_FRACTION = 0.1
GENERATE_LENGTH = 48
# The pretraining tasks' own options.
CORPUS_OPTIONS = (
    Option("--data", "a text file or directory, gcide.dict.dz or WordNet", "path"),
    Option("--vocab-size", "WordPiece pieces", int, default=VOCAB_SIZE),
    Option("--steps", "training steps per epoch (default: one pass)", int),
)
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def sentences_of(document):
    """A document's sentences: split after ``. ! ? ;`` followed by white space."""
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
            "masked LM + next sentence on a corpus (default: GCIDE + fortunes, make data)",
            epochs=1,
            batch_size=64,
            samples=1_000_000,  # at most this many training documents
            tunable=False,
            options=CORPUS_OPTIONS,
        ),
        Task(
            "pretrain_lm",
            ("gpt",),
            "causal LM on a corpus, exportable generation (default: GCIDE + fortunes)",
            epochs=1,
            batch_size=32,
            samples=1_000_000,
            tunable=False,
            options=CORPUS_OPTIONS,
        ),
        Task(
            "finetune",
            ("bert",),
            "fortune topics, from a pretrain_mlm run (--init RUN) or from scratch",
            epochs=10,
            batch_size=32,
            samples=20000,
            tunable=False,
            options=(
                Option("--init", "a pretrain_mlm run directory", "dir"),
                Option(
                    "--weights",
                    "with --init: the pretrained encoder, or random weights (same vocabulary)",
                    default="pretrained",
                    choices=("pretrained", "random"),
                ),
                Option("--data", "a fortunes directory (default: the installed one)", "dir"),
                Option("--vocab-size", "WordPiece pieces (without --init)", int, default=4000),
            ),
        ),
    )

    def settings(self, task, model_name):
        """The builder's sizes and the peak ``learning_rate``."""
        return dict(SETTINGS[(task, model_name)])

    # -- models --------------------------------------------------------------------------------

    def build_model(
        self,
        task,
        model_name,
        vocab_size,
        num_classes=None,
        total_steps=1000,
        encoder=None,
        jit_compile=True,
        **overrides,
    ):
        """The compiled model of ``task``: a `bert_pretrainer`, a `gpt_lm` or a
        `bert_classifier` (on ``encoder`` when given, e.g. a pretrained one)."""
        import keras

        from keras_adl.models import bert, gpt

        settings = override(self.settings(task, model_name), overrides)
        rate = warmup_cosine(settings.pop("learning_rate"), total_steps)
        optimizer = keras.optimizers.Adam(rate, global_clipnorm=1.0)
        if task == "pretrain_lm":
            return gpt.compile_lm(
                gpt.gpt_lm(vocab_size, **settings), optimizer=optimizer, jit_compile=jit_compile
            )
        if encoder is None:
            encoder = bert.bert_encoder(vocab_size, **settings)
        if task == "pretrain_mlm":
            model = bert.bert_pretrainer(encoder, max_predictions=MAX_PREDICTIONS)
            return bert.compile_pretrainer(model, optimizer=optimizer, jit_compile=jit_compile)
        model = bert.bert_classifier(encoder, num_classes, dropout=settings["dropout"])
        model.compile(
            optimizer=optimizer,
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
            jit_compile=jit_compile,
        )
        return model

    # -- data ----------------------------------------------------------------------------------

    @staticmethod
    def corpus(data, samples):
        """``(train, held_out)`` document strings: ``data`` (`load_corpus`), or by default
        the installed GCIDE plus the training fortunes of the documents family's split."""
        import numpy as np

        from keras_adl.tasks.text_corpora import load_corpus

        documents = [d for d in load_corpus(data) if d.strip()]
        if data is None:
            from keras_adl.recipes.documents import RECIPE as DOCUMENTS

            try:
                fortunes = DOCUMENTS.load("fortunes", None, 10**9)[0]
            except (OSError, ValueError):
                fortunes = []  # fortunes not installed: GCIDE alone
            documents += list(fortunes)
        order = np.random.default_rng(SPLIT_SEED).permutation(len(documents))
        held = max(1, int(len(documents) * HELD_OUT_FRACTION))
        if len(documents) < 4:
            raise RecipeError(f"the corpus holds {len(documents)} documents; need at least 4")
        held_out = [documents[i] for i in order[:held]]
        train = [documents[i] for i in order[held:]][:samples]
        return train, held_out

    @staticmethod
    def learn_tokenizer(texts, vocab_size):
        """A `WordPieceTokenizer` whose vocabulary (``[MASK]`` first) is learned on
        ``texts`` (at most 200,000 of them)."""
        from keras_adl.tasks.pretraining import pretraining_vocabulary
        from keras_adl.text.wordpiece import WordPieceTokenizer, learn_wordpiece

        pieces = learn_wordpiece(list(texts)[:200_000], vocab_size)
        return WordPieceTokenizer(pretraining_vocabulary(pieces))

    @staticmethod
    def mlm_dataset(tokenizer, documents, batch_size, sequence_length, seed):
        """Masked-LM + NSP batches (`masked_lm_batches`) of the documents' sentence pairs."""
        import tensorflow as tf

        from keras_adl.tasks.pretraining import masked_lm_batches, pack_inputs, sentence_pairs

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
    def token_lists(tokenizer, documents, batch_size=1024):
        """The piece ids of each document (a list of lists)."""
        import tensorflow as tf

        ids = []
        for start in range(0, len(documents), batch_size):
            chunk = tf.constant(documents[start : start + batch_size])
            ids.extend(tokenizer.tokenize(chunk).to_list())
        return ids

    def text_classes(self, tokenizer, texts, labels, batch_size, sequence_length, shuffle):
        """``({"token_ids", "segment_ids"}, label)`` batches of single texts."""
        import tensorflow as tf

        from keras_adl.tasks.pretraining import pack_inputs

        dataset = tf.data.Dataset.from_tensor_slices((list(texts), list(labels)))
        if shuffle:
            dataset = dataset.shuffle(len(texts), seed=0, reshuffle_each_iteration=True)

        def pack(text, label):
            packed = pack_inputs(tokenizer.tokenize(text), sequence_length)
            return {k: packed[k] for k in ("token_ids", "segment_ids")}, label

        return dataset.batch(batch_size, drop_remainder=shuffle).map(pack).prefetch(2)

    # -- train ---------------------------------------------------------------------------------

    def train(self, run):
        if run.task == "finetune":
            return self._finetune(run)
        train, held_out = self.corpus(run.options.get("data"), run.samples)
        tokenizer = self.learn_tokenizer(train, run.options["vocab_size"])
        with open(run.path(VOCABULARY_FILE), "w") as f:
            json.dump(tokenizer.get_config(), f)
        settings = self.settings(run.task, run.model)
        run.record.update(
            settings=settings,
            data=run.options.get("data") or "gcide+fortunes",
            train_documents=len(train),
            held_out_documents=len(held_out),
            vocabulary=tokenizer.size,
        )
        if run.task == "pretrain_mlm":
            return self._pretrain_mlm(run, tokenizer, train, held_out, settings)
        return self._pretrain_lm(run, tokenizer, train, held_out, settings)

    def _pretrain_mlm(self, run, tokenizer, train, held_out, settings):
        import numpy as np

        length = settings["sequence_length"]
        pairs = sum(max(len(sentences_of(d)) - 1, 0) for d in train)
        steps = run.options.get("steps") or max(1, pairs // run.batch_size)
        run.record.update(sentence_pairs=pairs, steps_per_epoch=steps)
        model = run.build(
            self.build_model,
            run.task,
            run.model,
            tokenizer.size,
            total_steps=steps * run.epochs,
        )
        data = self.mlm_dataset(tokenizer, train, run.batch_size, length, seed=0)
        log = _step_log(run, ("loss", "mlm_accuracy"))
        history = self.fit(run, model, data, steps_per_epoch=steps, shuffle=False)
        _plot_log(log, run.out, "masked LM pretraining")
        evaluation = self.mlm_dataset(tokenizer, held_out, run.batch_size, length, seed=1)
        evaluation = evaluation.take(EVALUATION_BATCHES).cache()
        figures = model.evaluate(evaluation, verbose=0, return_dict=True)
        targets = np.concatenate([t["mlm"].numpy()[w["mlm"].numpy() > 0] for _, t, w in evaluation])
        baseline = float(np.bincount(targets).max() / len(targets))
        accuracy = float(figures["mlm_accuracy"])
        metrics = {
            "held_out_masked_accuracy": accuracy,
            "most_frequent_token_accuracy": baseline,
            "masked_accuracy_over_baseline": accuracy / baseline,
            "held_out_next_sentence_accuracy": float(figures["nsp_accuracy"]),
            "held_out_masked_tokens": int(len(targets)),
        }
        return model, history, metrics

    def _pretrain_lm(self, run, tokenizer, train, held_out, settings):
        import numpy as np
        import tensorflow as tf

        from keras_adl.models.gpt import generate
        from keras_adl.tasks.pretraining import lm_windows

        length = settings["sequence_length"]
        inputs, targets = lm_windows(self.token_lists(tokenizer, train), length)
        held_inputs, held_targets = lm_windows(self.token_lists(tokenizer, held_out), length)
        steps = run.options.get("steps") or max(1, len(inputs) // run.batch_size)
        run.record.update(train_windows=len(inputs), steps_per_epoch=steps)
        model = run.build(
            self.build_model,
            run.task,
            run.model,
            tokenizer.size,
            total_steps=steps * run.epochs,
        )
        data = (
            tf.data.Dataset.from_tensor_slices((inputs, targets))
            .shuffle(len(inputs), seed=0, reshuffle_each_iteration=True)
            .repeat()
            .batch(run.batch_size, drop_remainder=True)
            .prefetch(2)
        )
        log = _step_log(run, ("loss", "perplexity"))
        history = self.fit(run, model, data, steps_per_epoch=steps, shuffle=False)
        _plot_log(log, run.out, "causal LM pretraining")
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
        import keras

        from keras_adl.models.bert import encoder_of
        from keras_adl.recipes.documents import RECIPE as DOCUMENTS
        from keras_adl.text.wordpiece import WordPieceTokenizer

        train_docs, train_labels, test_docs, test_labels, names, _ = DOCUMENTS.load(
            "fortunes", run.options.get("data"), run.samples
        )
        init = run.options.get("init")
        settings = self.settings(run.task, run.model)
        if init:
            info_path = os.path.join(init, "run.json")
            info = {}
            if os.path.isfile(info_path):
                with open(info_path) as f:
                    info = json.load(f)
            if info.get("task") != "pretrain_mlm":
                raise RecipeError(
                    f"--init must be a pretrain_mlm run directory; {init!r} holds "
                    f"{info.get('task') or 'no run'}"
                )
            with open(os.path.join(init, VOCABULARY_FILE)) as f:
                tokenizer = WordPieceTokenizer.from_config(json.load(f))
            settings.update({k: v for k, v in info["settings"].items() if k in SIZES})
        else:
            tokenizer = self.learn_tokenizer(train_docs, run.options["vocab_size"])
        with open(run.path(VOCABULARY_FILE), "w") as f:
            json.dump(tokenizer.get_config(), f)
        pretrained = bool(init) and run.options.get("weights") == "pretrained"
        run.record.update(
            settings=settings,
            init=init,
            weights="pretrained" if pretrained else "random",
            class_names=names,
            train_documents=len(train_docs),
        )
        length = settings["sequence_length"]
        batch = min(run.batch_size, len(train_docs))
        steps = len(train_docs) // batch

        def build(jit_compile=True):
            encoder = None
            if pretrained:
                source = keras.saving.load_model(os.path.join(init, "model.keras"))
                encoder = encoder_of(source)
            sizes = {k: v for k, v in settings.items() if k in SIZES}
            return self.build_model(
                "finetune",
                run.model,
                tokenizer.size,
                num_classes=len(names),
                total_steps=steps * run.epochs,
                encoder=encoder,
                jit_compile=jit_compile,
                **sizes,
                learning_rate=settings["learning_rate"],
            )

        model = run.build(build)
        data = self.text_classes(tokenizer, train_docs, train_labels, batch, length, True)
        run.record["steps_per_epoch"] = steps
        log = _step_log(run, ("loss", "accuracy"))
        history = self.fit(run, model, data.repeat(), steps_per_epoch=steps, shuffle=False)
        _plot_log(log, run.out, "fine-tuning")
        held = self.text_classes(tokenizer, test_docs, test_labels, 128, length, False)
        figures = model.evaluate(held, verbose=0, return_dict=True)
        metrics = {
            "held_out_accuracy": float(figures["accuracy"]),
            "held_out_documents": len(test_docs),
        }
        return model, history, metrics

    # -- tune, export, predict -----------------------------------------------------------------

    def tune(self, task, model_name, trials, epochs, samples, out, options):
        raise RecipeError("the pretraining tasks have no HyperModel yet")

    def export(self, run_dir, run_record, model, export_dir, beam_width=1):
        from keras_adl.text.wordpiece import WordPieceTokenizer
        from keras_adl.training.export import export_serving_fn

        task = run_record["task"]
        with open(os.path.join(run_dir, VOCABULARY_FILE)) as f:
            tokenizer = WordPieceTokenizer.from_config(json.load(f))
        if task == "pretrain_lm":
            serve = make_generation_serving_fn(
                model, tokenizer, run_record["settings"]["sequence_length"]
            )
        elif task == "finetune":
            serve = make_text_classifier_serving_fn(
                model,
                tokenizer,
                run_record["settings"]["sequence_length"],
                run_record["class_names"],
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
        class and probability."""
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
        for text, name, probabilities in zip(
            inputs, outputs["class_names"].numpy(), outputs["probabilities"].numpy()
        ):
            label = " ".join((text if len(text) <= 40 else text[:37] + "...").split())
            print(f"{label}\t{name.decode()}\tp={probabilities.max():.3f}")


RECIPE = PretrainingRecipe()


def _step_log(run, keys):
    """A callback recording ``keys`` about 100 times over the run (Keras' ``History`` has
    one point per epoch), added to the run's callbacks; `_plot_log` draws it."""
    import keras

    class StepLog(keras.callbacks.Callback):
        def __init__(self, every):
            super().__init__()
            self.every, self.seen = every, 0
            self.steps, self.values = [], {k: [] for k in keys}

        def on_train_batch_end(self, batch, logs=None):
            self.seen += 1
            if logs and self.seen % self.every == 0 and all(k in logs for k in keys):
                self.steps.append(self.seen)
                for k in keys:
                    self.values[k].append(float(logs[k]))

    steps = run.record.get("steps_per_epoch") or 100
    log = StepLog(max(1, steps * run.epochs // 100))
    run.callbacks = (*run.callbacks, log)
    return log


def _plot_log(log, out, title):
    from keras_adl.plotting import plot_training_curves

    if len(log.steps) >= 2:
        plot_training_curves(log.steps, log.values, os.path.join(out, "training.png"), title)


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


def make_text_classifier_serving_fn(model, tokenizer, sequence_length, class_names):
    """A ``tf.function`` from raw strings (``texts [None]``) to a fine-tuned classifier's
    ``classes``, ``probabilities`` and ``class_names``."""
    import tensorflow as tf

    from keras_adl.tasks.pretraining import pack_inputs

    names = tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        packed = pack_inputs(tokenizer.tokenize(texts), sequence_length)
        logits = model({k: packed[k] for k in ("token_ids", "segment_ids")}, training=False)
        probabilities = tf.nn.softmax(tf.cast(logits, tf.float32))
        classes = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        return {
            "classes": classes,
            "probabilities": probabilities,
            "class_names": tf.gather(names, classes),
        }

    return serve

"""The documents family: the Hierarchical Attention Network classifying raw documents.

Tasks: ``needle`` (generated documents whose class is given by one key sentence), ``fortunes``
(Debian's fortune topics, `make data`) and ``documents`` (your own ``<label>/<doc>.txt`` tree
or ``label<TAB>text`` file). Tokenization runs in ``tf.data`` with a `DocumentTokenizer` saved
beside the model; the exported SavedModel takes raw strings. The HyperModel,
`HierarchicalAttentionHyperModel`, is an attribute of this module defined on first use.
"""

import json
import os

from keras_adl.recipes.base import (
    DEVELOPMENT_SEED,
    FORTUNES_OPTION,
    MIN_FOR_DEVELOPMENT,
    Option,
    Recipe,
    RecipeError,
    Task,
    compile_for_training,
    development_rows,
    draw,
    import_keras_tuner,
    lazy_hypermodels,
    override,
    tuned_learning_rate,
    without_development,
)

HAN_MODELS = ("han", "han_lstm")
TOKENIZER_FILE = "tokenizer.json"
MAX_VOCABULARY = 30000
# (sentences, words) kept per document: the needle task's maxima; for the fortunes the
# B=64, S=15, W=30 setting of benchmarks/han.py; a user's documents follow the data.
SHAPES = {"needle": (10, 10), "fortunes": (15, 30)}
# A user's documents keep the sentence and word counts that this percentile of the training
# documents (and of their sentences) fits in, within these caps (memory: S × W ids a document).
SIZE_PERCENTILE = 90
MAX_SENTENCES, MAX_WORDS, MAX_WORDS_PER_DOCUMENT = 200, 80, 4096
SIZE_OPTIONS = (
    Option(
        "--max-sentences",
        f"sentences kept per document (default: the {SIZE_PERCENTILE}th percentile of the "
        f"training documents', at most {MAX_SENTENCES}; fortunes: {SHAPES['fortunes'][0]})",
        int,
    ),
    Option(
        "--max-words",
        f"words kept per sentence (default: the {SIZE_PERCENTILE}th percentile of the training "
        f"sentences', at most {MAX_WORDS}; fortunes: {SHAPES['fortunes'][1]})",
        int,
    ),
)
NEEDLE_TEST_DOCUMENTS = 1000
# The development split whose loss picks the best epoch: a tenth of the training documents, at
# most this many (4 batches: evaluating it costs a few steps an epoch); needle: this many fresh.
DEVELOPMENT_DOCUMENTS = 256
NEEDLE_CLASSES = 4
TEST_FRACTION = 0.2
SETTINGS = dict(embedding_dim=64, units=64, encoder_units=32, dropout=0.1, learning_rate=2e-3)


class DocumentsRecipe(Recipe):
    family = "documents"
    description = "Hierarchical Attention Network on raw documents"
    tasks = (
        Task(
            "needle",
            HAN_MODELS,
            "4 classes given by one key sentence among distractors",
            epochs=3,
            batch_size=64,
            samples=4000,
            held_out=True,
        ),
        Task(
            "fortunes",
            HAN_MODELS,
            "Debian's fortunes by topic (make data)",
            epochs=10,
            batch_size=64,
            samples=20000,
            options=(FORTUNES_OPTION, *SIZE_OPTIONS),
            held_out=True,
        ),
        Task(
            "documents",
            HAN_MODELS,
            "your own labelled documents",
            epochs=10,
            batch_size=64,
            samples=1000000,
            options=(
                Option(
                    "--data",
                    "a <label>/<doc>.txt tree or a label<TAB>text file",
                    "path",
                    required=True,
                ),
                *SIZE_OPTIONS,
            ),
            held_out=True,
        ),
    )

    def settings(self, task, model_name):
        """`han_classifier`'s keyword arguments and ``learning_rate`` (the vocabulary size and
        class count come from the data)."""
        return dict(SETTINGS, encoder="lstm" if model_name == "han_lstm" else "gru")

    def build_model(
        self, task, model_name, vocab_size, num_classes, jit_compile=True, shape=None, **overrides
    ):
        """The compiled `han_classifier` ``keras-adl train TASK --model MODEL`` trains, reading
        documents of ``shape`` ``(S, W)`` (default: the task's `SHAPES`)."""
        import keras

        from keras_adl.models.han import han_classifier

        settings = override(self.settings(task, model_name), overrides)
        learning_rate = settings.pop("learning_rate")
        model = han_classifier(vocab_size, num_classes, *(shape or SHAPES[task]), **settings)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return compile_for_training(model, loss, learning_rate, jit_compile)

    @staticmethod
    def load(task, data, samples, seed=0):
        """``(train_docs, train_labels, test_docs, test_labels, class_names, test_keys)``.

        ``needle``: ``samples`` generated training documents and 1000 test documents
        (``test_keys`` are the key sentences). ``fortunes``: Debian's fortune topics (``data``:
        another fortunes directory). ``documents``: ``data`` is a ``<label>/<doc>.txt`` tree or a
        ``label<TAB>text`` file. Real data is split 80/20 with a fixed seed; ``test_keys`` is
        ``None``.
        """
        import numpy as np

        from keras_adl.data.splits import split_dataset

        if task == "needle":
            from keras_adl.data.needle import CLASS_WORDS, needle_documents

            train_docs, train_labels, _ = needle_documents(
                samples, num_classes=NEEDLE_CLASSES, seed=seed
            )
            test_docs, test_labels, keys = needle_documents(
                NEEDLE_TEST_DOCUMENTS, num_classes=NEEDLE_CLASSES, seed=seed + 1
            )
            names = list(CLASS_WORDS[:NEEDLE_CLASSES])
            return train_docs, train_labels, test_docs, test_labels, names, keys
        if task == "fortunes":
            from keras_adl.data.fortunes import load_fortunes

            docs, labels, names = load_fortunes(data)
        else:
            from keras_adl.data.corpora import load_documents

            docs, labels, names = load_documents(data)
        # Two documents still split (one each); from 3 on the fraction alone decides.
        fraction = max(TEST_FRACTION, 1 / max(len(docs), 1))
        (train_docs, train_labels), (test_docs, test_labels) = split_dataset(
            np.array(docs, dtype=object), labels, fraction, seed=seed
        )
        train_docs, train_labels = list(train_docs[:samples]), train_labels[:samples]
        return train_docs, train_labels, list(test_docs), test_labels, list(names), None

    @staticmethod
    def development(task, documents, labels):
        """``(train_docs, train_labels, development)``: the training documents without the
        development split, and that split, ``(docs, labels)``, whose loss picks the best epoch
        (``None`` when fewer than `MIN_FOR_DEVELOPMENT` training documents are given). A
        seeded tenth of the training documents (at most `DEVELOPMENT_DOCUMENTS`), never
        the test documents; ``needle``: `DEVELOPMENT_DOCUMENTS` generated with their own
        seed."""
        import numpy as np

        if task == "needle":
            from keras_adl.data.needle import needle_documents

            docs, classes, _ = needle_documents(
                DEVELOPMENT_DOCUMENTS, num_classes=NEEDLE_CLASSES, seed=DEVELOPMENT_SEED
            )
            return documents, labels, (docs, classes)
        rows = development_rows(len(documents), DEVELOPMENT_DOCUMENTS)
        if rows is None:
            return documents, labels, None
        documents, labels = np.array(documents, dtype=object), np.asarray(labels)
        train, held = rows
        return list(documents[train]), labels[train], (list(documents[held]), labels[held])

    @staticmethod
    def development_dataset(tokenizer, development, batch_size):
        """The development split as Keras' ``validation_data`` (every document once)."""
        docs, labels = development
        return tokenizer.dataset(
            docs, labels, min(batch_size, len(docs)), shuffle=False, drop_remainder=False
        )

    @staticmethod
    def tokenizer(task, documents, max_sentences=None, max_words=None, lengths=None):
        """The `DocumentTokenizer` built on the training documents, padding them to
        ``max_sentences`` × ``max_words``; unset, the task's `SHAPES`, or for a user's
        ``documents`` the sizes that `SIZE_PERCENTILE` percent of them fit in
        (`fitted_shape`, from ``lengths``, their `document_lengths`, if already counted)."""
        from keras_adl.text import DocumentTokenizer

        default = SHAPES.get(task)
        if default is None and not (max_sentences and max_words):
            default = fitted_shape(*(lengths or document_lengths(documents)))
        shape = (max_sentences or default[0], max_words or default[1])
        return DocumentTokenizer.build(documents, *shape, max_size=MAX_VOCABULARY)

    def train(self, run):
        train_docs, train_labels, test_docs, test_labels, names, keys = self.load(
            run.task, run.options.get("data"), run.samples
        )
        train_docs, train_labels, development = self.development(run.task, train_docs, train_labels)
        if development is None:
            without_development(
                run,
                f"{len(train_docs)} training documents are too few to set some aside (it "
                f"takes {MIN_FOR_DEVELOPMENT})",
            )
        lengths = document_lengths(train_docs)  # counted once: the sizes and the share cut
        options = run.options
        tokenizer = self.tokenizer(
            run.task, train_docs, options.get("max_sentences"), options.get("max_words"), lengths
        )
        with open(run.path(TOKENIZER_FILE), "w") as f:
            json.dump(tokenizer.to_config(), f)
        shape = (tokenizer.max_sentences, tokenizer.max_words)
        cut = cut_shares(*lengths, *shape)
        print(
            f"documents of at most {shape[0]} sentences of {shape[1]} words: "
            f"{cut['sentences_cut']:.1%} of the training sentences and "
            f"{cut['words_cut']:.1%} of their words are cut (--max-sentences, --max-words)"
        )
        run.record.update(
            data=run.options.get("data") or run.task,
            class_names=names,
            max_sentences=shape[0],
            max_words=shape[1],
            train_documents=len(train_docs),
            settings=self.settings(run.task, run.model),
            **cut,
        )
        if development is not None:
            run.record["development_documents"] = len(development[0])
        batch_size = min(run.batch_size, len(train_docs))
        model = run.build(
            self.build_model,
            run.task,
            run.model,
            tokenizer.vocabulary_size,
            len(names),
            shape=shape,
        )
        data = tokenizer.dataset(train_docs, train_labels, batch_size, seed=0)
        validation = None
        if development is not None:  # its loss picks the best epoch
            validation = self.development_dataset(tokenizer, development, batch_size)
        # shuffled by tf.data
        history = self.fit(run, model, data, shuffle=False, validation_data=validation)
        metrics = self.evaluate(
            model,
            tokenizer,
            test_docs,
            test_labels,
            names,
            keys,
            run.out,
            title=f"{run.model} on {run.task}",
        )
        return model, history, metrics

    @staticmethod
    def evaluate(model, tokenizer, documents, labels, class_names, key_sentences, out, title):
        """Held-out accuracy (and, for the needle task, how often the sentence attention peaks
        on the key sentence), and the attention picture of the first test document."""
        import numpy as np
        import tensorflow as tf

        from keras_adl.metrics import sentence_attention_hit_rate
        from keras_adl.models.han import han_attention
        from keras_adl.plotting import plot_document_attention

        documents = list(documents)
        outputs = han_attention(model).predict(
            tokenizer.encode(tf.constant(documents)), batch_size=64, verbose=0
        )
        predictions = outputs["probabilities"].argmax(-1)
        metrics = {
            "held_out_accuracy": float(np.mean(predictions == np.asarray(labels))),
            "held_out_documents": len(documents),
        }
        if key_sentences is not None:
            metrics["sentence_attention_hit_rate"] = float(
                sentence_attention_hit_rate(outputs["sentence_attention"], key_sentences)
            )
        words = tokenizer.tokens(tf.constant(documents[:1])).numpy()[0]
        label = (
            f"{title}: predicted {class_names[predictions[0]]} "
            f"({outputs['probabilities'][0].max():.2f}), true {class_names[labels[0]]}"
        )
        for extension in ("html", "png"):
            draw(
                plot_document_attention,
                words,
                outputs["word_attention"][0],
                outputs["sentence_attention"][0],
                os.path.join(out, f"attention.{extension}"),
                title=label,
            )
        return metrics

    def hypermodel(self, task, model_name, vocab_size, num_classes, shape=None):
        from keras_adl.recipes.documents import HierarchicalAttentionHyperModel

        return HierarchicalAttentionHyperModel(
            vocab_size,
            num_classes,
            *(shape or SHAPES[task]),
            encoder=self.settings(task, model_name)["encoder"],
        )

    def tune(self, task, model_name, trials, epochs, samples, out, options):
        """Random search over `HierarchicalAttentionHyperModel` on held-out accuracy."""
        train_docs, train_labels, _, _, names, _ = self.load(task, options.get("data"), samples)
        # The training documents train reads, scored on its development split (the test
        # documents stay for the reported figures).
        train_docs, train_labels, development = self.development(task, train_docs, train_labels)
        if development is None:
            raise RecipeError(
                f"tune scores trials on a development split, and {len(train_docs)} training "
                f"documents are too few to set some aside (it takes {MIN_FOR_DEVELOPMENT})"
            )
        tokenizer = self.tokenizer(
            task, train_docs, options.get("max_sentences"), options.get("max_words")
        )
        batch = min(self.task(task).batch_size, len(train_docs))
        validation = self.development_dataset(tokenizer, development, batch)
        return self.search(
            self.hypermodel(
                task,
                model_name,
                tokenizer.vocabulary_size,
                len(names),
                (tokenizer.max_sentences, tokenizer.max_words),
            ),
            ("val_accuracy", "max"),
            trials,
            out,
            f"{task}_{model_name}",
            tokenizer.dataset(train_docs, train_labels, batch, seed=0),
            validation_data=validation,
            epochs=epochs,
            shuffle=False,
        )

    def export(self, run_dir, run_record, model, export_dir, beam_width=1):
        """A SavedModel with a raw-text signature ``documents [None]`` string."""
        from keras_adl.text import DocumentTokenizer

        with open(os.path.join(run_dir, TOKENIZER_FILE)) as f:
            tokenizer = DocumentTokenizer.from_config(json.load(f))
        export_han(model, export_dir, tokenizer, class_names=run_record["class_names"])
        self.write_task_file(export_dir, task=run_record["task"], model=run_record["model"])

    def predict(self, export_dir, inputs, task_info):
        """Prints the class, its probability and the most attended sentence of each document (a
        raw string, or the path of a UTF-8 text file)."""
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the ops of exported text models)

        texts, unreadable = [], []
        for item in inputs:
            if os.path.isfile(item):
                with open(item, encoding="utf-8", errors="replace") as f:
                    texts.append(f.read())
            else:
                texts.append(item)
        loaded = tf.saved_model.load(export_dir)
        outputs = loaded.signatures["serving_default"](documents=tf.constant(texts))
        for item, name, probabilities, sentences, tokens in zip(
            inputs,
            outputs["class_names"].numpy(),
            outputs["probabilities"].numpy(),
            outputs["sentence_attention"].numpy(),
            outputs["tokens"].numpy(),
        ):
            label = item if len(item) <= 40 or os.path.isfile(item) else item[:37] + "..."
            label = " ".join(label.split())  # one output line per document
            if not sentences.any():
                print(f"{label}\t(no words this model can read)")
                unreadable.append(label)
                continue
            top = int(sentences.argmax())
            words = " ".join(w.decode() for w in tokens[top] if w)
            print(
                f"{label}\t{name.decode()}\tp={probabilities.max():.3f}\t"
                f"sentence {top + 1} ({sentences[top]:.2f}): {words}"
            )
        if unreadable:
            raise RecipeError(
                f"{len(unreadable)} input(s) have no words this model can read: {unreadable[0]!r}"
            )


RECIPE = DocumentsRecipe()


def document_lengths(documents):
    """`DocumentTokenizer.lengths` of ``documents``: their sentence counts and their sentences'
    word counts, before truncation."""
    from keras_adl.text import DocumentTokenizer

    return DocumentTokenizer([], 1, 1).lengths(documents)


def fitted_shape(sentences, words, percentile=SIZE_PERCENTILE):
    """``(S, W)`` that fit ``percentile`` percent of the documents' sentence counts and of
    their sentences' word counts, within `MAX_SENTENCES`, `MAX_WORDS` and
    `MAX_WORDS_PER_DOCUMENT` (the longer side shrinks first).

    Args:
        sentences, words: `DocumentTokenizer.lengths` of the training documents.
        percentile: the share of documents (and sentences) kept whole.
    """
    import numpy as np

    present = words[words > 0]
    s = int(np.ceil(np.percentile(sentences, percentile))) if len(sentences) else 1
    w = int(np.ceil(np.percentile(present, percentile))) if len(present) else 1
    s, w = min(max(s, 1), MAX_SENTENCES), min(max(w, 1), MAX_WORDS)
    while s * w > MAX_WORDS_PER_DOCUMENT:
        if s >= w:
            s -= 1
        else:
            w -= 1
    return s, w


def cut_shares(sentences, words, max_sentences, max_words):
    """The shares of sentences and of words that documents padded to ``max_sentences`` ×
    ``max_words`` lose: ``{"sentences_cut", "words_cut"}`` (0 to 1).

    Args:
        sentences, words: `DocumentTokenizer.lengths` of the documents.
        max_sentences, max_words: ``S`` and ``W``.
    """
    import numpy as np

    total_sentences, total_words = int(sentences.sum()), int(words.sum())
    kept_sentences = int(np.minimum(sentences, max_sentences).sum())
    kept_words = int(np.minimum(words[:, :max_sentences], max_words).sum())
    return {
        "sentences_cut": 1 - kept_sentences / total_sentences if total_sentences else 0.0,
        "words_cut": 1 - kept_words / total_words if total_words else 0.0,
    }


# -- serving functions (exported SavedModels) --------------------------------------------------


def make_han_serving_fn(model, tokenizer, class_names=None):
    """A ``tf.function`` from raw document strings to a HAN's classes and attention maps.

    Sentence and word splitting, vocabulary lookup and padding run in the graph (the
    tensorflow-text ops of `keras_adl.text.DocumentTokenizer`), so the exported SavedModel
    takes raw strings; reloading it needs ``import tensorflow_text`` but not keras_adl.

    Args:
        model: a model from `keras_adl.models.han_classifier`.
        tokenizer: the `DocumentTokenizer` the model was trained with.
        class_names: optional class names, returned as strings per document.

    Returns:
        A ``tf.function`` with input signature ``documents`` ``[None]`` string returning a dict:
        ``classes`` ``[B]`` int32, ``probabilities`` ``[B, C]``, ``word_attention``
        ``[B, S, W]``, ``sentence_attention`` ``[B, S]`` (float32), ``tokens`` ``[B, S, W]``
        (the words at the attention positions, ``""`` at padding) and, with
        ``class_names``, ``class_names`` ``[B]``.
    """
    import tensorflow as tf

    from keras_adl.models.han import ENCODER_LAYER, han_attention

    attention_model = han_attention(model)
    _check_han_tokenizer(model, tokenizer, class_names, ENCODER_LAYER)
    names = None if class_names is None else tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="documents")])
    def serve(documents):
        ids, tokens = tokenizer.encode_with_tokens(documents)
        outputs = attention_model(ids, training=False)
        probabilities = tf.cast(outputs["probabilities"], tf.float32)
        classes = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        result = {
            "classes": classes,
            "probabilities": probabilities,
            "word_attention": tf.cast(outputs["word_attention"], tf.float32),
            "sentence_attention": tf.cast(outputs["sentence_attention"], tf.float32),
            "tokens": tokens,
        }
        if names is not None:
            result["class_names"] = tf.gather(names, classes)
        return result

    return serve


def _check_han_tokenizer(model, tokenizer, class_names, encoder_name):
    """Clear errors when a HAN, its tokenizer and its class names do not fit together."""
    where = "make_han_serving_fn: "
    shape = tuple(model.input.shape[1:])
    wanted = (tokenizer.max_sentences, tokenizer.max_words)
    if any(d is not None and d != w for d, w in zip(shape, wanted)):
        raise ValueError(
            f"{where}the model reads [S, W] = {list(shape)} but `tokenizer` pads documents to "
            f"{list(wanted)}; use the tokenizer the model was trained with."
        )
    vocab_size = model.get_layer(encoder_name).vocab_size
    if vocab_size is not None and tokenizer.vocabulary_size > vocab_size:
        raise ValueError(
            f"{where}`tokenizer` has {tokenizer.vocabulary_size} ids but the model's embedding "
            f"holds {vocab_size}; use the tokenizer the model was trained with."
        )
    num_classes = model.outputs[0].shape[-1]
    if class_names is not None and len(class_names) != num_classes:
        raise ValueError(
            f"{where}`class_names` must name the model's {num_classes} classes; received "
            f"{len(class_names)} names."
        )


def export_han(model, export_dir, tokenizer, class_names=None):
    """Writes a SavedModel whose ``serving_default`` classifies raw document strings.

    Args:
        model, tokenizer, class_names: as in `make_han_serving_fn`.
        export_dir: where to write; must not exist (nothing is left behind on failure).
    """
    from keras_adl.training.export import export_serving_fn

    serving_fn = make_han_serving_fn(model, tokenizer, class_names)
    return export_serving_fn(model, export_dir, serving_fn, resources=tokenizer.tables)


def _hypermodels():
    import keras

    from keras_adl.models.han import han_classifier

    keras_tuner = import_keras_tuner()

    class HierarchicalAttentionHyperModel(keras_tuner.HyperModel):
        """Searches `han_classifier`: ``embedding_dim``, ``encoder_units``, ``units``
        (attention), ``dropout``, ``learning_rate``; the defaults are the recipe's settings.

        Args:
            vocab_size: number of token ids (``DocumentTokenizer.vocabulary_size``).
            num_classes: number of classes.
            max_sentences, max_words: the static ``S`` and ``W`` of the batches (or ``None``).
            encoder: ``"gru"`` or ``"lstm"`` (fixed, not searched).
        """

        def __init__(
            self,
            vocab_size,
            num_classes,
            max_sentences=None,
            max_words=None,
            encoder="gru",
            name="han_classifier",
            tunable=True,
        ):
            super().__init__(name=name, tunable=tunable)
            self.vocab_size = vocab_size
            self.num_classes = num_classes
            self.max_sentences = max_sentences
            self.max_words = max_words
            self.encoder = encoder

        def build(self, hp):
            model = han_classifier(
                self.vocab_size,
                self.num_classes,
                self.max_sentences,
                self.max_words,
                embedding_dim=hp.Choice(
                    "embedding_dim", [32, 64, 128], default=SETTINGS["embedding_dim"]
                ),
                units=hp.Choice("units", [32, 64, 100], default=SETTINGS["units"]),
                encoder=self.encoder,
                encoder_units=hp.Choice(
                    "encoder_units", [16, 32, 50], default=SETTINGS["encoder_units"]
                ),
                dropout=hp.Float("dropout", 0.0, 0.5, step=0.1, default=SETTINGS["dropout"]),
            )
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            return compile_for_training(
                model, loss, tuned_learning_rate(hp, SETTINGS["learning_rate"])
            )

    return locals()


__getattr__, __dir__ = lazy_hypermodels(
    globals(), _hypermodels, ("HierarchicalAttentionHyperModel",)
)

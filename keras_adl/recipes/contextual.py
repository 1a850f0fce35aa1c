"""The contextual family: ELMo's bidirectional LM, CoVe's translation encoder, and both as
features of a downstream classifier on Debian's fortunes.

Tasks:

- ``pretrain_bilm`` (model ``elmo``): the character-level biLM (`keras_adl.models.elmo_bilm`)
  on a text corpus, the word2vec family's (``--data``: a UTF-8 text file or directory,
  ``gcide.dict.dz`` or a WordNet directory; default the installed GCIDE, ``make data``), cut
  into windows of ``--max-words`` words (`keras_adl.data.bilm`). 2% of the documents are
  held out; the run reports the held-out forward and backward perplexities against a unigram
  model's, and after every epoch the training / held-out perplexity ratio (the overfitting
  users of small biLMs could not see). Its export maps raw strings to all the biLM's layers
  (`elmo_embedder`).
- ``cove`` (model ``attention_seq2seq``): CoVe's translation pretraining. The attention
  encoder-decoder (LSTM) translates the English → ``LANG`` messages of the gettext catalogs
  (``--data gettext:fr``) from English words read as fixed word vectors (``--vectors``, a
  ``word2vec`` run; the source embedding is initialised with them and frozen, as CoVe keeps
  GloVe fixed) to WordPiece pieces. Reports held-out token accuracy, BLEU greedy and with beam
  search, and the attention picture of a held-out message. Its export maps raw English
  strings to ``[GloVe(w); CoVe(w)]`` vectors (`keras_adl.models.cove_encoder`).
- ``fortunes_features`` (model ``bigru``): the fortune topics (the documents family's split)
  classified by a bidirectional GRU over per-word features, ``--features``: ``static`` (the
  word2vec vectors of ``--vectors``), ``cove`` (``[vectors; CoVe]`` of a ``cove`` run),
  ``elmo`` (``[vectors; ELMo]``, the scalar mix of all the biLM's layers of a
  ``pretrain_bilm`` run) or ``elmo_top`` (``[vectors; γ·top layer]``). The word vectors and
  the pretrained encoders stay frozen. Writes ``scalar_mix.png`` (the learned layer weights)
  for the ELMo features.

The HyperModel, `ContextualClassifierHyperModel`, is an attribute of this module defined on
first use.
"""

import json
import os
import re

from keras_adl.recipes.base import (
    CORPUS_OPTION,
    FORTUNES_OPTION,
    MIN_FOR_DEVELOPMENT,
    MODEL_FILE,
    RUN_FILE,
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
    plot_step_log,
    step_log,
    tuned_learning_rate,
    without_development,
)

VOCABULARY_FILE = "vocabulary.json"
TOKENIZER_FILE = "vocab.json"
SPLIT_SEED = 0
# cove: the development pairs carved from the training pairs (a tenth, at most this many).
DEVELOPMENT_PAIRS = 512
HELD_OUT_FRACTION = 0.02
HELD_OUT_WINDOWS = 2000  # held-out windows scored after training (and every epoch)
MAX_WORDS = 32  # words per biLM training window
DOCUMENT_WORDS = 64  # words of a fortune the classifier reads
VOCAB_SIZE = 10000  # output words of the biLM's softmax (the rest are <unk>)
# 4 epochs of 700 steps of 32 windows: about 9.5 minutes on 2 cores, with held-out figures
# after each epoch (benchmarks/RESULTS.md).
STEPS_PER_EPOCH = 700
FEATURES = ("static", "cove", "elmo", "elmo_top")
BEAM_WIDTH = 4
ATTENTION_MESSAGES = 4  # held-out messages drawn by the cove task
# The biLM (a CPU-sized ELMo: the paper's has 4,096-unit LSTMs projected to 512 and 2,048
# character filters), the CoVe translator and the downstream classifier.
BILM_SETTINGS = dict(
    max_characters=20,
    character_dim=16,
    filters=((1, 32), (2, 32), (3, 64), (4, 128), (5, 128)),
    num_highway=2,
    projection_dim=128,
    units=256,
    num_layers=2,
    dropout=0.1,
    learning_rate=2e-3,
)
COVE_SETTINGS = dict(units=128, cell="lstm", learning_rate=3e-3)
CLASSIFIER_SETTINGS = dict(units=64, dropout=0.3, learning_rate=2e-3)


def _run_option(flag, what):
    return Option(flag, f"a `keras-adl train {what}` run directory", "dir")


class ContextualRecipe(Recipe):
    family = "contextual"
    description = "ELMo's biLM and CoVe, as word features on fortunes"
    tasks = (
        Task(
            "pretrain_bilm",
            ("elmo",),
            "ELMo's character-level biLM on a corpus (default: GCIDE, make data)",
            epochs=4,
            batch_size=32,
            samples=10_000_000,  # at most this many documents
            tunable=False,
            held_out=True,
            options=(
                CORPUS_OPTION,
                Option("--vocab-size", "output words of the softmax", int, default=VOCAB_SIZE),
                Option("--max-words", "words per training window", int, default=MAX_WORDS),
                Option(
                    "--steps",
                    "steps per epoch (the windows repeat, reshuffled; a held-out evaluation "
                    "ends each epoch)",
                    int,
                    default=STEPS_PER_EPOCH,
                ),
            ),
        ),
        Task(
            "cove",
            ("attention_seq2seq",),
            "CoVe: English->LANG translation over fixed word vectors (gettext catalogs)",
            epochs=3,
            batch_size=64,
            samples=100000,
            tunable=False,
            held_out=True,
            options=(
                Option(
                    "--data",
                    "gettext:LANG, a .po/.mo catalog or a source<TAB>target file",
                    "file",
                    default="gettext:fr",
                    schemes=("gettext",),
                ),
                _run_option("--vectors", "word2vec"),
                Option("--vocab-size", "target WordPiece pieces", int, default=4000),
                Option("--max-length", "tokens per source and target", int, default=32),
                Option("--validation-split", "fraction of the pairs held out", float, default=0.05),
            ),
        ),
        Task(
            "fortunes_features",
            ("bigru",),
            "fortune topics from word vectors, CoVe or ELMo features (--features)",
            epochs=10,
            batch_size=32,
            samples=20000,
            tune_epochs=5,
            tune_samples=20000,
            held_out=True,
            options=(
                Option(
                    "--features",
                    "static, cove, elmo or elmo_top",
                    default="elmo",
                    choices=FEATURES,
                ),
                _run_option("--vectors", "word2vec"),
                _run_option("--bilm", "pretrain_bilm"),
                _run_option("--cove", "cove"),
                FORTUNES_OPTION,
            ),
        ),
    )

    def settings(self, task, model_name):
        """The builder's settings and ``learning_rate`` of ``task``."""
        return dict(
            {
                "pretrain_bilm": BILM_SETTINGS,
                "cove": COVE_SETTINGS,
                "fortunes_features": CLASSIFIER_SETTINGS,
            }[task]
        )

    # -- pretrain_bilm -------------------------------------------------------------------------

    def build_model(self, task, model_name, vocab_size, jit_compile=True, **overrides):
        """The compiled `elmo_bilm` of ``pretrain_bilm`` (``vocab_size``: output words)."""
        from keras_adl.models.elmo import compile_bilm, elmo_bilm

        if task != "pretrain_bilm":
            raise ValueError(f"build_model builds the pretrain_bilm model; received {task!r}")
        settings = override(self.settings(task, model_name), overrides)
        learning_rate = settings.pop("learning_rate")
        return compile_bilm(elmo_bilm(vocab_size, **settings), learning_rate, jit_compile)

    @staticmethod
    def corpus(data, samples, vocab_size):
        """``(train_documents, held_out_documents, WordVocabulary)``: the tokenized corpus
        (its first ``samples`` documents), split by document; the output vocabulary is the
        ``vocab_size`` most frequent training words."""
        from keras_adl.data.bilm import split_documents
        from keras_adl.data.skipgrams import WordVocabulary
        from keras_adl.data.text_corpora import load_corpus, tokenize_documents

        try:
            documents = load_corpus(data)[:samples]
            train, held_out = split_documents(
                tokenize_documents(documents), HELD_OUT_FRACTION, SPLIT_SEED
            )
            vocabulary = WordVocabulary.build(train, min_count=1, max_size=vocab_size)
        except (OSError, ValueError) as error:
            raise RecipeError(str(error)) from None
        return train, held_out, vocabulary

    def _train_bilm(self, run):
        import numpy as np

        from keras_adl.data.bilm import bilm_dataset, unigram_perplexity, window_ids, word_windows

        max_words = run.options["max_words"]
        train, held_out, vocabulary = self.corpus(
            run.options.get("data"), run.samples, run.options["vocab_size"]
        )
        windows = word_windows(train, max_words)
        held = word_windows(held_out, max_words)[:HELD_OUT_WINDOWS]
        if len(windows) < run.batch_size or not held:
            raise RecipeError(
                f"{len(windows)} training and {len(held)} held-out windows of 2 to {max_words} "
                f"words: give more text (at least {run.batch_size} training windows)"
            )
        steps = run.options["steps"]
        settings = self.settings(run.task, run.model)
        characters = settings["max_characters"]
        run.record.update(
            settings=settings,
            data=run.options.get("data") or "gcide",
            train_documents=len(train),
            train_windows=len(windows),
            held_out_windows=len(held),
            vocabulary=vocabulary.size,
            steps_per_epoch=steps,
        )
        with open(run.path(VOCABULARY_FILE), "w") as f:
            json.dump(vocabulary.to_config(), f)
        model = run.build(self.build_model, run.task, run.model, vocabulary.size)
        data = bilm_dataset(windows, vocabulary, run.batch_size, max_words, characters, repeat=True)
        validation = bilm_dataset(
            held,
            vocabulary,
            run.batch_size,
            max_words,
            characters,
            shuffle=False,
            drop_remainder=False,
        ).cache()
        log = step_log(run, ("loss", "forward_perplexity", "backward_perplexity"))
        history = self.fit(
            run, model, data, steps_per_epoch=steps, validation_data=validation, shuffle=False
        )
        plot_step_log(log, run.out, "biLM")
        figures = model.evaluate(validation, verbose=0, return_dict=True)
        sample = np.random.default_rng(SPLIT_SEED).permutation(len(windows))[:20000]
        unigram = unigram_perplexity(
            window_ids([windows[i] for i in sample], vocabulary, max_words),
            window_ids(held, vocabulary, max_words),
        )
        metrics = {"unigram_perplexity": unigram}
        for direction in ("forward", "backward"):
            perplexity = float(figures[f"{direction}_perplexity"])
            metrics[f"held_out_{direction}_perplexity"] = perplexity
            metrics[f"{direction}_over_unigram"] = perplexity / unigram
        if history is not None:  # per epoch: training (with dropout) over held-out perplexity
            logs = history.history
            metrics["train_over_held_out_per_epoch"] = [
                round(t / v, 4)
                for t, v in zip(
                    logs.get("forward_perplexity", []), logs.get("val_forward_perplexity", [])
                )
            ]
        return model, history, metrics

    # -- cove ----------------------------------------------------------------------------------

    def _train_cove(self, run):
        import keras

        from keras_adl.data.text_pairs import split_pairs
        from keras_adl.models.seq2seq import attention_seq2seq
        from keras_adl.recipes.sequences.data import fitting_pairs, held_out_dataset, load_pairs
        from keras_adl.recipes.sequences.evaluate import evaluate_pairs
        from keras_adl.text.tokenizer import WordVectorPairTokenizer
        from keras_adl.text.wordpiece import learn_wordpiece

        options, max_length = run.options, run.options["max_length"]
        if not options.get("vectors"):
            raise RecipeError("cove needs --vectors, a `keras-adl train word2vec` run directory")
        words, vectors = read_word_vectors(options["vectors"])
        sources, targets = load_pairs(options["data"])
        (sources, targets), held_out = split_pairs(
            sources, targets, options["validation_split"], seed=SPLIT_SEED
        )
        sources, targets = sources[: run.samples], targets[: run.samples]
        # The development pairs, carved from the training pairs: their loss picks the best epoch.
        rows = development_rows(len(sources), DEVELOPMENT_PAIRS)
        development = None
        if rows is None:
            without_development(
                run,
                f"{len(sources)} training pairs are too few to set some aside (it takes "
                f"{MIN_FOR_DEVELOPMENT})",
            )
        else:
            development = [sources[i] for i in rows[1]], [targets[i] for i in rows[1]]
            sources, targets = [sources[i] for i in rows[0]], [targets[i] for i in rows[0]]
        tokenizer = WordVectorPairTokenizer(words, learn_wordpiece(targets, options["vocab_size"]))
        sources, targets, too_long = fitting_pairs(tokenizer, sources, targets, max_length)
        if not sources:
            raise RecipeError(f"every training pair is longer than --max-length {max_length}")
        held_sources, held_targets, _ = fitting_pairs(tokenizer, *held_out, max_length)
        settings = self.settings(run.task, run.model)
        run.record.update(
            settings=settings,
            data=options["data"],
            vectors=os.path.abspath(options["vectors"]),
            source_vocabulary=tokenizer.source_size,
            target_vocabulary=tokenizer.target_size,
            train_pairs=len(sources),
            train_pairs_too_long=too_long,
            held_out_pairs=len(held_sources),
            max_length=max_length,
        )
        with open(run.path(TOKENIZER_FILE), "w") as f:
            json.dump(tokenizer.to_config(), f)

        def build(jit_compile=True):
            model = attention_seq2seq(
                tokenizer.source_size,
                tokenizer.target_size,
                embedding_dim=vectors.shape[1],
                units=settings["units"],
                cell=settings["cell"],
            )
            embedding = model.get_layer("source_embedding")
            embedding.set_weights([vectors])
            embedding.trainable = False  # CoVe: the word vectors stay fixed
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
            return compile_for_training(model, loss, settings["learning_rate"], jit_compile)

        model = run.build(build)
        batch_size = min(run.batch_size, len(sources))
        data = tokenizer.dataset(sources, targets, batch_size, max_length, max_length)
        validation = None
        if development is not None:
            development = fitting_pairs(tokenizer, *development, max_length)[:2]
            run.record["development_pairs"] = len(development[0])
            if not development[0]:
                without_development(
                    run, f"every development pair is longer than --max-length {max_length}"
                )
        if development and development[0]:
            validation = held_out_dataset(tokenizer, *development, batch_size, max_length)
        history = self.fit(run, model, data, shuffle=False, validation_data=validation)
        held = held_out_dataset(tokenizer, held_sources, held_targets, batch_size, max_length)
        figures = model.evaluate(held, verbose=0, return_dict=True)
        metrics = evaluate_pairs(
            run.model, model, tokenizer, held_sources, held_targets, max_length, run.out
        )
        metrics["held_out_token_accuracy"] = float(figures["accuracy"])
        metrics.update(self._beam_scores(model, tokenizer, held_sources, held_targets, max_length))
        self._attention_pictures(model, tokenizer, held_sources[1:200], max_length, run.out)
        return model, history, metrics

    @staticmethod
    def _attention_pictures(model, tokenizer, sources, max_length, out):
        """``attention_<i>.png`` for held-out messages of 3 to 12 words (``attention.png``,
        the first held-out message, is `evaluate_pairs`' picture)."""
        import keras
        import tensorflow as tf

        from keras_adl.conventions import END
        from keras_adl.models.seq2seq import greedy_decode
        from keras_adl.plotting import plot_attention

        chosen = [s for s in sources if 3 <= len(s.split()) <= 12][: ATTENTION_MESSAGES - 1]
        for i, source in enumerate(chosen, 1):
            ids = tokenizer.encode_source(tf.constant([source]), max_length)
            tokens, attention, _ = greedy_decode(model, ids, max_length)
            tokens = keras.ops.convert_to_numpy(tokens)[0]
            ends = [j for j, t in enumerate(tokens) if t == END]
            tokens = tokens[: ends[0] + 1] if ends else tokens
            words = [w.decode() for w in tokenizer.source_tokens(tf.constant([source]))[0].numpy()]
            draw(
                plot_attention,
                keras.ops.convert_to_numpy(attention)[0][: len(tokens), : len(words)],
                words[:max_length],
                [t.decode() for t in tokenizer.target_tokens(tokens).numpy()],
                os.path.join(out, f"attention_{i}.png"),
                title="CoVe's translator: attention on a held-out message",
            )

    @staticmethod
    def _beam_scores(model, tokenizer, sources, targets, max_length):
        """BLEU and chrF of beam-search translations (`BEAM_WIDTH`) of the held-out pairs."""
        from keras_adl.models.seq2seq import beam_search
        from keras_adl.recipes.sequences.data import in_batches
        from keras_adl.recipes.sequences.evaluate import score_pairs

        def translate(batch):
            tokens, _, _ = beam_search(
                model, tokenizer.encode_source(batch, max_length), max_length, BEAM_WIDTH
            )
            return tokenizer.decode_target(tokens)

        scores = score_pairs(tokenizer, sources, targets, in_batches(sources, translate))
        return {
            f"held_out_beam{BEAM_WIDTH}_{name}": scores[name]
            for name in ("bleu", "chrf")
            if name in scores
        }

    # -- fortunes_features ---------------------------------------------------------------------

    @staticmethod
    def sources(features, options):
        """What ``--features`` reads, checked and loaded: ``{"words": [...], "vectors": [V, D]
        array}`` and, for CoVe, ``"cove"`` (the encoder model) or, for ELMo, ``"bilm"`` (the
        model) and ``"max_characters"``."""
        import keras

        need = {
            "static": ("vectors",),
            "cove": ("cove",),
            "elmo": ("vectors", "bilm"),
            "elmo_top": ("vectors", "bilm"),
        }[features]
        missing = [f"--{n}" for n in need if not options.get(n)]
        if missing:
            raise RecipeError(f"--features {features} needs {' and '.join(missing)}")
        found = {}
        if "vectors" in need:
            found["words"], found["vectors"] = read_word_vectors(options["vectors"])
        if "cove" in need:
            from keras_adl.models.seq2seq import cove_encoder

            record = _read_run(options["cove"], "cove")
            with open(os.path.join(options["cove"], TOKENIZER_FILE)) as f:
                found["words"] = json.load(f)["source"]
            translator = keras.models.load_model(os.path.join(options["cove"], MODEL_FILE))
            found["cove"] = cove_encoder(translator)
            found["cove_run"] = record
        if "bilm" in need:
            record = _read_run(options["bilm"], "pretrain_bilm")
            found["bilm"] = keras.models.load_model(os.path.join(options["bilm"], MODEL_FILE))
            found["max_characters"] = record["settings"]["max_characters"]
        return found

    @staticmethod
    def input_shapes(features, sources):
        """The classifier's inputs, ``{name: shape without the batch}``: ``words``
        ``[T]`` and, for ELMo, ``characters`` ``[T, C]``."""
        shapes = {"words": (DOCUMENT_WORDS,)}
        if features in ("elmo", "elmo_top"):
            shapes["characters"] = (DOCUMENT_WORDS, sources["max_characters"])
        return shapes

    def build_classifier(self, features, sources, num_classes, jit_compile=True, **overrides):
        """The compiled downstream classifier: frozen features → `features_classifier`.

        Its inputs are a dict: ``words`` ``[B, T]`` (ids of ``sources["words"]``) and, for
        ELMo, ``characters`` ``[B, T, C]``."""
        import keras

        from keras_adl.layers import ELMoEmbedding
        from keras_adl.models.elmo import elmo_embedder, features_classifier

        settings = override(dict(CLASSIFIER_SETTINGS), overrides)
        learning_rate = settings.pop("learning_rate")
        inputs = {
            name: keras.Input(shape, dtype="int32", name=name)
            for name, shape in self.input_shapes(features, sources).items()
        }
        words = inputs["words"]
        if features == "cove":
            encoder = sources["cove"]
            encoder.trainable = False
            x = encoder(words)
        else:
            vectors = sources["vectors"]
            x = keras.layers.Embedding(
                vectors.shape[0],
                vectors.shape[1],
                mask_zero=True,
                trainable=False,
                embeddings_initializer=keras.initializers.Constant(vectors),
                name="word_vectors",
            )(words)
        if features in ("elmo", "elmo_top"):
            characters = inputs["characters"]
            elmo = ELMoEmbedding(
                elmo_embedder(sources["bilm"]),
                mix="all" if features == "elmo" else "top",
                name="elmo",
            )(characters)
            x = keras.layers.Concatenate(name="vectors_elmo")([x, elmo])
        model = features_classifier(
            inputs, x, num_classes, name=f"{features}_classifier", **settings
        )
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return compile_for_training(model, loss, learning_rate, jit_compile)

    @staticmethod
    def classifier_dataset(shapes, words, texts, labels, batch_size, shuffle, seed=0):
        """``tf.data`` batches of the classifier's input dict (`input_shapes`: words, and
        characters for ELMo) from raw texts, with their labels."""
        import tensorflow as tf

        encode = make_feature_encoder(shapes, words)
        dataset = tf.data.Dataset.from_tensor_slices((list(texts), list(labels)))
        if shuffle:
            dataset = dataset.shuffle(len(texts), seed=seed)
        return (
            dataset.batch(batch_size, drop_remainder=shuffle)
            .map(lambda t, y: (encode(t), y), num_parallel_calls=tf.data.AUTOTUNE)
            .prefetch(tf.data.AUTOTUNE)
        )

    def _train_classifier(self, run):
        from keras_adl.recipes.documents import data as documents_data

        features = run.options["features"]
        sources = self.sources(features, run.options)
        train_docs, train_labels, test_docs, test_labels, names, _ = documents_data.fortune_topics(
            run.options.get("data"), run.samples
        )
        train_docs, train_labels, development = documents_data.development_split(
            train_docs, train_labels
        )
        if development is None:
            without_development(
                run,
                f"{len(train_docs)} training fortunes are too few to set some aside (it takes "
                f"{MIN_FOR_DEVELOPMENT})",
            )
        else:
            run.record["development_documents"] = len(development[0])
        run.record.update(
            features=features,
            settings=self.settings(run.task, run.model),
            class_names=names,
            train_documents=len(train_docs),
            max_words=DOCUMENT_WORDS,
        )
        with open(run.path(TOKENIZER_FILE), "w") as f:
            json.dump({"words": sources["words"]}, f)
        model = run.build(self.build_classifier, features, sources, len(names))
        batch_size = min(run.batch_size, len(train_docs))
        shapes = self.input_shapes(features, sources)
        data = self.classifier_dataset(
            shapes, sources["words"], train_docs, train_labels, batch_size, shuffle=True
        )
        validation = None
        if development is not None:  # its loss picks the best epoch
            validation = self.classifier_dataset(
                shapes, sources["words"], *development, batch_size, shuffle=False
            )
        history = self.fit(run, model, data, shuffle=False, validation_data=validation)
        held = self.classifier_dataset(
            shapes, sources["words"], test_docs, test_labels, batch_size, shuffle=False
        )
        figures = model.evaluate(held, verbose=0, return_dict=True)
        metrics = {
            "held_out_accuracy": float(figures["accuracy"]),
            "held_out_documents": len(test_docs),
        }
        if features in ("elmo", "elmo_top"):
            from keras_adl.plotting import plot_scalar_mix

            mix = model.get_layer("elmo").scalar_mix
            weights, gamma = mix.mixing_weights(), float(mix.gamma.numpy())
            metrics["scalar_mix_weights"] = [float(w) for w in weights]
            metrics["scalar_mix_gamma"] = gamma
            if features == "elmo":
                draw(
                    plot_scalar_mix,
                    {"fortunes": weights},
                    os.path.join(run.out, "scalar_mix.png"),
                    gammas={"fortunes": gamma},
                )
        return model, history, metrics

    # -- the recipe's hooks --------------------------------------------------------------------

    def train(self, run):
        return {
            "pretrain_bilm": self._train_bilm,
            "cove": self._train_cove,
            "fortunes_features": self._train_classifier,
        }[run.task](run)

    def tune(self, task, model_name, trials, epochs, samples, out, options):
        """Random search over `ContextualClassifierHyperModel` on held-out accuracy
        (``fortunes_features``; the pretraining tasks are not tuned)."""
        from keras_adl.recipes.contextual import ContextualClassifierHyperModel
        from keras_adl.recipes.documents import data as documents_data

        features = options.get("features") or "elmo"
        sources = self.sources(features, options)
        train_docs, train_labels, _, _, names, _ = documents_data.fortune_topics(
            options.get("data"), samples
        )
        # The training fortunes train reads, scored on its development split (the test
        # fortunes stay for the reported figures).
        train_docs, train_labels, development = documents_data.development_split(
            train_docs, train_labels
        )
        if development is None:
            raise RecipeError(
                f"tune scores trials on a development split, and {len(train_docs)} training "
                f"fortunes are too few to set some aside (it takes {MIN_FOR_DEVELOPMENT})"
            )
        hypermodel = ContextualClassifierHyperModel(self, features, sources, len(names))
        shapes = self.input_shapes(features, sources)
        batch = self.task(task).batch_size
        return self.search(
            hypermodel,
            ("val_accuracy", "max"),
            trials,
            out,
            f"{task}_{features}",
            self.classifier_dataset(
                shapes, sources["words"], train_docs, train_labels, batch, True
            ),
            validation_data=self.classifier_dataset(
                shapes, sources["words"], *development, batch, False
            ),
            epochs=epochs,
            shuffle=False,
        )

    def export(self, run_dir, run_record, model, export_dir, beam_width=1):
        """``pretrain_bilm``: raw strings → every biLM layer; ``cove``: raw English strings →
        ``[GloVe; CoVe]`` vectors; ``fortunes_features``: raw strings → topic."""
        from keras_adl.training.export import export_serving_fn

        task = run_record["task"]
        if task == "pretrain_bilm":
            serve = make_elmo_serving_fn(model, run_record["settings"]["max_characters"], MAX_WORDS)
            export_serving_fn(model, export_dir, serve)
        elif task == "cove":
            from keras_adl.text.tokenizer import WordVectorPairTokenizer

            with open(os.path.join(run_dir, TOKENIZER_FILE)) as f:
                tokenizer = WordVectorPairTokenizer.from_config(json.load(f))
            serve = make_cove_serving_fn(model, tokenizer, run_record["max_length"])
            export_serving_fn(model, export_dir, serve, resources=tokenizer.tables)
        else:
            with open(os.path.join(run_dir, TOKENIZER_FILE)) as f:
                words = json.load(f)["words"]
            serve, resources = make_classifier_serving_fn(model, words, run_record["class_names"])
            export_serving_fn(model, export_dir, serve, resources=resources)
        self.write_task_file(export_dir, task=task, model=run_record["model"])

    def predict(self, export_dir, inputs, task_info):
        """``fortunes_features``: the topic and its probability per text; the embedders: each
        text's words and the shape of its vectors."""
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the ops of exported text models)

        serve = tf.saved_model.load(export_dir).signatures["serving_default"]
        outputs = serve(texts=tf.constant(inputs))
        if task_info["task"] == "fortunes_features":
            for text, name, probabilities in zip(
                inputs, outputs["class_names"].numpy(), outputs["probabilities"].numpy()
            ):
                print(f"{_label(text)}\t{name.decode()}\tp={probabilities.max():.3f}")
            return
        bilm = task_info["task"] == "pretrain_bilm"
        key = "layers" if bilm else "vectors"
        empty = 0
        for text, words, vectors in zip(inputs, outputs["words"].numpy(), outputs[key].numpy()):
            words = [w.decode() for w in words if w]
            if not words:
                print(f"{_label(text)}\t(no words)")
                empty += 1
                continue
            size = f"{vectors.shape[0]} layers × " if bilm else ""
            size += f"{len(words)} words × {vectors.shape[-1]}"
            print(f"{_label(text)}\t{' '.join(words)}\t{key}: {size}")
        if empty:
            raise RecipeError(f"{empty} of {len(inputs)} input(s) have no words")


RECIPE = ContextualRecipe()


def _label(text):
    """``text`` on one output line (tabs and line breaks as spaces), cut at 40 characters."""
    text = re.sub(r"[\t\r\n]+", " ", text)
    return text if len(text) <= 40 else text[:37] + "..."


def _read_run(path, task):
    """The ``run.json`` of a finished run of ``task`` in ``path``.

    Raises:
        RecipeError: ``path`` holds no finished run of ``task``.
    """
    try:
        with open(os.path.join(path, RUN_FILE)) as f:
            record = json.load(f)
    except (OSError, ValueError):
        raise RecipeError(f"{path!r} holds no keras-adl run (no readable {RUN_FILE})") from None
    if record.get("task") != task or record.get("status") != "finished":
        raise RecipeError(
            f"{path!r} holds a {record.get('status')} run of {record.get('task')!r}; expected a "
            f"finished `keras-adl train {task}` run"
        )
    return record


def read_word_vectors(path):
    """``(words, vectors)`` of a ``word2vec`` run: the vocabulary and the unit-length input
    vectors ``[len(words) + 4, D]`` (row ``i + 4`` is ``words[i]``, `keras_adl.conventions`)."""
    import keras

    from keras_adl.models.word2vec import word_vectors

    _read_run(path, "word2vec")
    with open(os.path.join(path, "vocabulary.json")) as f:
        words = json.load(f)["words"]
    model = keras.models.load_model(os.path.join(path, MODEL_FILE))
    return words, word_vectors(model)


# -- in-graph feature encoding and serving functions -------------------------------------------


def make_feature_encoder(shapes, words):
    """A function from ``[B]`` raw strings to a classifier's input dict: ``words`` (ids of
    ``words`` in `plain_words` order, ``<unk>`` outside) and, when ``shapes`` (the inputs'
    shapes without the batch, `ContextualRecipe.input_shapes`) holds them, ``characters``.
    Returns ``encode``; its lookup table is ``encode.table``."""
    import tensorflow as tf

    from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
    from keras_adl.text.characters import character_ids, padded_words
    from keras_adl.text.vocabulary import lookup_table

    table = lookup_table(words, NUM_SPECIAL_TOKENS, UNK)
    length = shapes["words"][0]

    def encode(texts):
        tokens = padded_words(texts, length)
        ids = tf.where(tokens == "", tf.constant(PAD, tf.int64), table.lookup(tokens))
        feed = {"words": tf.cast(ids, tf.int32)}
        if "characters" in shapes:
            feed["characters"] = character_ids(tokens, shapes["characters"][1])
        return feed

    encode.table = table
    return encode


def make_classifier_serving_fn(model, words, class_names):
    """``(serve, resources)``: ``serve`` maps ``texts [None]`` strings to ``classes`` ``[B]``,
    ``probabilities`` ``[B, C]`` and ``class_names`` ``[B]``."""
    import tensorflow as tf

    shapes = {name: tuple(x.shape[1:]) for name, x in model.input.items()}
    encode = make_feature_encoder(shapes, words)
    names = tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        probabilities = tf.nn.softmax(tf.cast(model(encode(texts), training=False), tf.float32))
        classes = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        return {
            "classes": classes,
            "probabilities": probabilities,
            "class_names": tf.gather(names, classes),
        }

    return serve, [encode.table]


def make_elmo_serving_fn(bilm, max_characters, max_words):
    """A ``tf.function`` from ``texts [None]`` strings to ``layers`` ``[B, L, max_words, D]``
    (`elmo_embedder`), ``words`` ``[B, max_words]`` (``""`` at padding) and ``mask``."""
    import tensorflow as tf

    from keras_adl.models.elmo import elmo_embedder
    from keras_adl.text.characters import text_character_ids

    embedder = elmo_embedder(bilm)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        words, characters = text_character_ids(texts, max_words, max_characters)
        mask = words != ""
        layers = tf.cast(embedder(characters, training=False), tf.float32)
        layers = layers * tf.cast(mask, tf.float32)[:, None, :, None]
        return {"layers": layers, "words": words, "mask": mask}

    return serve


def make_cove_serving_fn(translator, tokenizer, max_length):
    """A ``tf.function`` from ``texts [None]`` English strings to ``vectors``
    ``[B, max_length, E + 2U]`` (`cove_encoder`: ``[GloVe(w); CoVe(w)]``, zeros at padding),
    ``words`` and ``mask``."""
    import tensorflow as tf

    from keras_adl.models.seq2seq import cove_encoder
    from keras_adl.text.characters import padded_words

    encoder = cove_encoder(translator)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        ids = tokenizer.encode_source(texts, max_length)
        mask = ids != 0
        vectors = tf.cast(encoder(ids, training=False), tf.float32)
        return {
            "vectors": vectors * tf.cast(mask, tf.float32)[..., None],
            "words": padded_words(texts, max_length),
            "mask": mask,
        }

    return serve


def _hypermodels():
    keras_tuner = import_keras_tuner()

    class ContextualClassifierHyperModel(keras_tuner.HyperModel):
        """Searches the downstream classifier of ``fortunes_features``: GRU ``units``,
        ``dropout`` and ``learning_rate`` (the features stay those of ``--features``).

        Args:
            recipe: the `ContextualRecipe`.
            features: ``static``, ``cove``, ``elmo`` or ``elmo_top``.
            sources: `ContextualRecipe.sources` of those features.
            num_classes: topics.
        """

        def __init__(self, recipe, features, sources, num_classes, name="fortunes_features"):
            super().__init__(name=name, tunable=True)
            self.recipe, self.features = recipe, features
            self.sources, self.num_classes = sources, num_classes

        def build(self, hp):
            return self.recipe.build_classifier(
                self.features,
                self.sources,
                self.num_classes,
                units=hp.Choice("units", [32, 64, 128], default=CLASSIFIER_SETTINGS["units"]),
                dropout=hp.Float(
                    "dropout", 0.0, 0.5, step=0.1, default=CLASSIFIER_SETTINGS["dropout"]
                ),
                learning_rate=tuned_learning_rate(hp, CLASSIFIER_SETTINGS["learning_rate"]),
            )

    return locals()


__getattr__, __dir__ = lazy_hypermodels(
    globals(), _hypermodels, ("ContextualClassifierHyperModel",)
)

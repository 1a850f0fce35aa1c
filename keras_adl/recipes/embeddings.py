"""The embeddings family: word2vec (skip-gram or CBOW with negative sampling) on a text corpus.

Task ``word2vec``: ``--data`` a UTF-8 text file or directory, Debian's ``gcide.dict.dz`` or
WordNet directory (default: the installed GCIDE dictionary, ``make data``). Training draws
skip-gram examples in ``tf.data`` (`keras_adl.data.skipgrams`); the run reports the word
analogy accuracy and the WordSim-353 and SimLex-999 Spearman correlations (the files gensim's
wheel ships; ``bench`` extra), and writes ``embeddings.png`` (t-SNE of chosen words and their
neighbours), ``vectors.tsv`` and ``metadata.tsv`` (TensorBoard's projector). The export maps a
batch of words to vectors, a ``known`` flag and nearest neighbours; ``predict`` prints the
neighbours. The HyperModel, `Word2VecHyperModel`, is an attribute of this module defined on
first use.
"""

import json
import os

from keras_adl.recipes.base import (
    CORPUS_OPTION,
    Option,
    Recipe,
    RecipeError,
    Task,
    draw,
    import_keras_tuner,
    lazy_hypermodels,
    override,
)

VOCABULARY_FILE = "vocabulary.json"
# Builder and data settings per model, and the optimizer. "sgd" is word2vec.c's: plain SGD at
# ``learning_rate`` per example (its alpha), decaying linearly to 1e-4 of it over the run;
# every row of the batch moves only the table rows it reads (sparse updates), which makes it
# several times faster than Adam, whose dense moments touch the whole tables at every step.
# A table row moves at most as far per batch as this many of its occurrences would move it
# (`repeated_row_scale`): without a cap a small vocabulary diverges (every row is read
# hundreds of times per batch); on GCIDE the cap leaves the vectors as they were.
MAX_ROW_UPDATES = 32
SETTINGS = {
    name: dict(
        dim=100,
        window=5,
        negatives=5,
        subsample=1e-4,
        optimizer="sgd",
        max_row_updates=MAX_ROW_UPDATES,
    )
    for name in ("skipgram", "cbow")
}
# Learning rates per optimizer: SGD's is per example (word2vec.c's alpha is 0.025; batched,
# 0.05 gave better vectors on GCIDE, benchmarks/RESULTS.md); Adam's is per batch.
LEARNING_RATES = {"sgd": 0.05, "adam": 4e-3}
FINAL_LEARNING_RATE = 1e-4  # SGD's last learning rate, a fraction of the first (word2vec.c)
# Training steps run per call of the compiled function (word2vec's steps are short).
STEPS_PER_EXECUTION = 100
MIN_COUNT = 5
# Positives per batch: on GCIDE, SGD gave the same vectors with batches of 1,024 to 8,192, and
# 2,048 trained fastest on 2 cores (the rows a step reads stay in cache; benchmarks/RESULTS.md).
BATCH_SIZE = 2048
NEIGHBORS = 8
# Words of the t-SNE picture when the corpus knows most of them (`picture_words`).
PICTURE_WORDS = ("king", "water", "red", "horse", "france", "music", "run", "tree")
# Otherwise the picture's words come from this many content words after the stop words.
PICTURE_BAND = 300
STANDARD_FILES = {
    "analogy": "questions-words.txt",
    "wordsim353": "wordsim353.tsv",
    "simlex999": "simlex999.txt",
}


class EmbeddingsRecipe(Recipe):
    family = "embeddings"
    description = "word2vec word vectors from a text corpus"
    tasks = (
        Task(
            "word2vec",
            ("skipgram", "cbow"),
            "word vectors from a corpus (default: Debian's GCIDE dictionary, make data)",
            epochs=3,
            batch_size=BATCH_SIZE,
            samples=10_000_000,  # at most this many documents
            tunable=True,
            tune_epochs=1,
            tune_samples=50_000,
            options=(
                CORPUS_OPTION,
                Option("--min-count", "words seen fewer times are dropped", int, default=MIN_COUNT),
                Option("--dim", "vector size", int, default=SETTINGS["skipgram"]["dim"]),
                Option(
                    "--window",
                    "the largest window W (each centre draws 1..W)",
                    int,
                    default=SETTINGS["skipgram"]["window"],
                ),
                Option(
                    "--negatives",
                    "negatives per positive",
                    int,
                    default=SETTINGS["skipgram"]["negatives"],
                ),
                Option(
                    "--subsample",
                    "the subsampling threshold t",
                    float,
                    default=SETTINGS["skipgram"]["subsample"],
                ),
                Option(
                    "--optimizer",
                    "sgd (word2vec's: sparse, fast, linear decay) or adam (dense moments)",
                    default=SETTINGS["skipgram"]["optimizer"],
                    choices=tuple(LEARNING_RATES),
                ),
            ),
        ),
    )

    def settings(self, task, model_name):
        """The builder's and the data's settings, the ``optimizer`` and its
        ``learning_rate``."""
        settings = dict(SETTINGS[model_name])
        settings["learning_rate"] = LEARNING_RATES[settings["optimizer"]]
        return settings

    def run_settings(self, model_name, options):
        """The settings with the command line's ``--dim/--window/--negatives/--subsample`` and
        ``--optimizer`` (with that optimizer's learning rate)."""
        keys = ("dim", "window", "negatives", "subsample", "optimizer")
        chosen = {k: options.get(k) for k in keys}
        settings = override(
            self.settings("word2vec", model_name), {k: v for k, v in chosen.items() if v}
        )
        if chosen.get("optimizer"):
            settings["learning_rate"] = LEARNING_RATES[chosen["optimizer"]]
        return settings

    def build_model(
        self,
        task,
        model_name,
        vocab_size,
        jit_compile=True,
        batch_size=BATCH_SIZE,
        total_steps=None,
        **overrides,
    ):
        """The compiled word2vec model (`skipgram_negative_sampling`).

        Args:
            task, model_name: ``"word2vec"`` and ``"skipgram"`` or ``"cbow"``.
            vocab_size: `WordVocabulary.size`.
            jit_compile: compile the step with XLA.
            batch_size: examples per batch (SGD's step is per example).
            total_steps: the steps of the whole run, over which SGD's learning rate decays
                linearly to `FINAL_LEARNING_RATE` of the first (``None``: constant).
            **overrides: settings (``dim``, ``window``, ``negatives``, ``optimizer``,
                ``learning_rate``, …).
        """
        import keras

        from keras_adl.models.word2vec import skipgram_negative_sampling, word2vec_optimizer

        settings = override(self.settings(task, model_name), overrides)
        model = skipgram_negative_sampling(
            vocab_size,
            dim=settings["dim"],
            negatives=settings["negatives"],
            window=settings["window"],
            cbow=model_name == "cbow",
            max_row_updates=settings["max_row_updates"],
        )
        # No clipping or metrics: the loss is the figure while training.
        model.compile(
            optimizer=word2vec_optimizer(
                settings["optimizer"],
                settings["learning_rate"],
                examples_per_step=batch_size * (settings["negatives"] + 1),
                total_steps=total_steps,
                final_fraction=FINAL_LEARNING_RATE,
            ),
            loss=keras.losses.BinaryCrossentropy(from_logits=True),
            jit_compile=jit_compile,
            steps_per_execution=STEPS_PER_EXECUTION,
        )
        return model

    # -- data ----------------------------------------------------------------------------------

    @staticmethod
    def load(data, samples, min_count):
        """``(tokenized documents, WordVocabulary)`` of the corpus (its first ``samples``
        documents)."""
        from keras_adl.data.skipgrams import WordVocabulary
        from keras_adl.data.text_corpora import load_corpus, tokenize_documents

        try:
            documents = load_corpus(data)[:samples]
        except (OSError, ValueError) as error:
            raise RecipeError(str(error)) from None
        tokenized = tokenize_documents(documents)
        try:
            vocabulary = WordVocabulary.build(tokenized, min_count=min_count)
        except ValueError:
            raise RecipeError(
                f"fewer than 2 words are seen {min_count} times in {data or 'the corpus'}; "
                "lower --min-count or give more text"
            ) from None
        return tokenized, vocabulary

    @staticmethod
    def steps_per_epoch(vocabulary, settings, batch_size, cbow=False):
        """Batches of about one pass over the corpus: the expected words kept by subsampling
        times the expected contexts per centre (``W + 1`` for skip-gram with the dynamic
        window, one example per centre for CBOW), rounded to whole compiled calls of
        `STEPS_PER_EXECUTION` steps when an epoch holds more."""
        from keras_adl.data.skipgrams import keep_probabilities

        kept = float(
            (vocabulary.counts * keep_probabilities(vocabulary.counts, settings["subsample"])).sum()
        )
        examples = kept if cbow else kept * (settings["window"] + 1)
        steps = max(1, int(examples // batch_size))
        if steps > STEPS_PER_EXECUTION:  # whole compiled calls (Recipe.fit runs no more)
            steps = round(steps / STEPS_PER_EXECUTION) * STEPS_PER_EXECUTION
        return steps

    def dataset(self, tokenized, vocabulary, settings, batch_size, cbow=False, seed=0):
        from keras_adl.data.skipgrams import skipgram_dataset

        return skipgram_dataset(
            tokenized,
            vocabulary,
            batch_size,
            window=settings["window"],
            negatives=settings["negatives"],
            t=settings["subsample"],
            seed=seed,
            cbow=cbow,
        )

    # -- train ---------------------------------------------------------------------------------

    def train(self, run):
        tokenized, vocabulary = self.load(
            run.options.get("data"), run.samples, run.options["min_count"]
        )
        settings = self.run_settings(run.model, run.options)
        cbow = run.model == "cbow"
        with open(run.path(VOCABULARY_FILE), "w") as f:
            json.dump(vocabulary.to_config(), f)
        steps = self.steps_per_epoch(vocabulary, settings, run.batch_size, cbow)
        run.record.update(
            settings=settings,
            data=run.options.get("data") or "gcide",
            documents=len(tokenized),
            words=int(vocabulary.counts.sum()),
            vocabulary=len(vocabulary.words),
        )
        model = run.build(
            self.build_model,
            "word2vec",
            run.model,
            vocabulary.size,
            batch_size=run.batch_size,
            total_steps=steps * run.epochs,
            **settings,
        )
        data = self.dataset(tokenized, vocabulary, settings, run.batch_size, cbow)
        history = self.fit(run, model, data, steps_per_epoch=steps, shuffle=False)
        return model, history, self.evaluate(model, vocabulary, run.out)

    def learning_rate_scale(self, run):
        """``--learning-rate`` is SGD's per-example rate (word2vec.c's alpha; the step's rate
        is alpha times the logits of a batch), Adam's rate otherwise."""
        settings = run.record["settings"]
        if settings["optimizer"] != "sgd":
            return 1.0
        return run.batch_size * (settings["negatives"] + 1)

    @staticmethod
    def embeddings(model, vocabulary):
        """The `Embeddings` of a trained model (special ids left out)."""
        from keras_adl.conventions import NUM_SPECIAL_TOKENS
        from keras_adl.embeddings import Embeddings
        from keras_adl.models.word2vec import word_vectors

        return Embeddings(vocabulary.words, word_vectors(model)[NUM_SPECIAL_TOKENS:])

    def evaluate(self, model, vocabulary, out):
        """The standard figures (when gensim's files are installed), the t-SNE picture and
        the projector's TSV files."""
        embeddings = self.embeddings(model, vocabulary)
        metrics = standard_figures(embeddings)
        chosen = picture_words(embeddings)
        for word in chosen[:3]:
            neighbours = ", ".join(w for w, _ in embeddings.most_similar(word, 5))
            print(f"  {word}: {neighbours}")
        from keras_adl.plotting import plot_embeddings

        draw(plot_embeddings, embeddings, chosen, os.path.join(out, "embeddings.png"))
        write_projector_files(embeddings, out)
        return metrics

    # -- tune ----------------------------------------------------------------------------------

    def tune(self, task, model_name, trials, epochs, samples, out, options):
        """Random search over `Word2VecHyperModel` on the WordSim-353 Spearman correlation."""
        from keras_adl.recipes.embeddings import Word2VecHyperModel

        tokenized, vocabulary = self.load(options.get("data"), samples, options["min_count"])
        return self.search(
            Word2VecHyperModel(self, model_name, tokenized, vocabulary, epochs=epochs),
            ("wordsim353_spearman", "max"),
            trials,
            out,
            f"{task}_{model_name}",
            epochs=epochs,
        )

    # -- export and predict --------------------------------------------------------------------

    def export(self, run_dir, run_record, model, export_dir, beam_width=1):
        from keras_adl.data.skipgrams import WordVocabulary
        from keras_adl.training.export import export_serving_fn

        with open(os.path.join(run_dir, VOCABULARY_FILE)) as f:
            vocabulary = WordVocabulary.from_config(json.load(f))
        serve, resources = make_word_vectors_serving_fn(model, vocabulary.words)
        export_serving_fn(model, export_dir, serve, resources=resources)
        self.write_task_file(export_dir, task=run_record["task"], model=run_record["model"])

    def predict(self, export_dir, inputs, task_info):
        """Prints each word's nearest neighbours with their cosine similarities, in order; an
        unknown word gets a line saying so (exit status 1) and the others are still served."""
        import tensorflow as tf
        import tensorflow_text  # noqa: F401  (the normalisation ops of the export)

        serve = tf.saved_model.load(export_dir).signatures["serving_default"]
        outputs = serve(words=tf.constant(inputs))
        unknown = []
        for word, known, neighbours, similarities in zip(
            inputs,
            outputs["known"].numpy(),
            outputs["neighbors"].numpy(),
            outputs["similarities"].numpy(),
        ):
            if not known:
                print(f"{word}\t(not in the vocabulary)")
                unknown.append(word)
                continue
            listed = ", ".join(f"{n.decode()} {s:.2f}" for n, s in zip(neighbours, similarities))
            print(f"{word}\t{listed}")
        if unknown:
            raise RecipeError(f"{len(unknown)} of {len(inputs)} word(s) are not in the vocabulary")


RECIPE = EmbeddingsRecipe()


def standard_figures(embeddings):
    """Analogy accuracy (with the count of questions asked and of unknown ones) and the
    WordSim-353 and SimLex-999 Spearman correlations, from the files in the installed gensim;
    an empty dict (and a note) without gensim."""
    from keras_adl.embeddings import evaluate_analogies, evaluate_word_pairs, gensim_test_file

    try:
        paths = {name: gensim_test_file(file) for name, file in STANDARD_FILES.items()}
    except (ImportError, FileNotFoundError) as error:
        print(f"  (no analogy or similarity figures: {error})")
        return {}
    analogies = evaluate_analogies(embeddings, paths["analogy"])
    figures = {
        "analogy_accuracy": analogies["accuracy"],
        "analogy_asked": analogies["asked"],
        "analogy_unknown": analogies["unknown"],
    }
    for name in ("wordsim353", "simlex999"):
        pairs = evaluate_word_pairs(embeddings, paths[name])
        spearman = pairs["spearman"]
        figures[f"{name}_spearman"] = spearman if spearman == spearman else None  # NaN: no pair
        figures[f"{name}_pairs"] = pairs["pairs"]
    return figures


def picture_words(embeddings, count=None):
    """The words of the t-SNE picture: `PICTURE_WORDS` where the corpus knows at least half of
    them, else ``count`` content words of the corpus's own. Those come from a frequency band —
    after the most frequent 1% of the vocabulary (at least 10 words: the stop words, whose
    neighbours say nothing), the next `PICTURE_BAND` words made of letters — chosen one by one
    as the word least similar to those already chosen, so that each brings its own group of
    neighbours.

    Args:
        embeddings: an `Embeddings` whose words are most frequent first.
        count: how many words (default: as many as `PICTURE_WORDS`).

    Returns:
        A list of at most ``count`` words.
    """
    import numpy as np

    count = count or len(PICTURE_WORDS)
    known = [w for w in PICTURE_WORDS if w in embeddings]
    if 2 * len(known) >= len(PICTURE_WORDS):
        return known
    words = embeddings.words
    skip = max(10, len(words) // 100)
    band = [w for w in words[skip:] if w.isalpha()][:PICTURE_BAND] or list(words[:PICTURE_BAND])
    vectors = np.stack([embeddings.vector(w) for w in band])
    chosen = [0]
    closest = vectors @ vectors[0]  # each word's highest similarity to a chosen word
    while len(chosen) < min(count, len(band)):
        closest[chosen] = np.inf
        pick = int(np.argmin(closest))
        chosen.append(pick)
        closest = np.maximum(closest, vectors @ vectors[pick])
    return [band[i] for i in chosen]


def write_projector_files(embeddings, out):
    """``vectors.tsv`` and ``metadata.tsv`` for TensorBoard's embedding projector."""
    with open(os.path.join(out, "vectors.tsv"), "w", encoding="utf-8") as f:
        for row in embeddings.vectors:
            f.write("\t".join(f"{x:.5f}" for x in row) + "\n")
    with open(os.path.join(out, "metadata.tsv"), "w", encoding="utf-8") as f:
        f.writelines(word + "\n" for word in embeddings.words)


# -- serving function (exported SavedModel) ----------------------------------------------------


def make_word_vectors_serving_fn(model, words, neighbors=NEIGHBORS):
    """A ``tf.function`` from a batch of words to their vectors and nearest neighbours.

    Each input is normalised as training normalised the corpus (NFKC, case folding; its first
    word is looked up).

    Returns:
        ``(serve, resources)``: ``serve`` has the signature ``words [None] string`` and
        returns ``vectors`` ``[B, D]`` (unit length; zeros for an unknown word), ``known``
        ``[B]`` bool, ``neighbors`` ``[B, k]`` strings and ``similarities`` ``[B, k]``
        (cosines, the word itself excluded; empty strings and 0 for an unknown word);
        ``resources`` the lookup table to track.
    """
    import tensorflow as tf

    from keras_adl.conventions import NUM_SPECIAL_TOKENS
    from keras_adl.models.word2vec import word_vectors
    from keras_adl.text.normalization import plain_words
    from keras_adl.text.vocabulary import lookup_table

    table = lookup_table(words, NUM_SPECIAL_TOKENS, -1)
    vectors = tf.constant(word_vectors(model)[NUM_SPECIAL_TOKENS:])
    names = tf.constant(list(words))
    k = min(neighbors, len(words) - 1)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="words")])
    def serve(inputs):
        first = plain_words(inputs).to_tensor(default_value="", shape=[None, 1])[:, 0]
        ids = table.lookup(first)
        known = ids >= 0
        rows = tf.where(known, ids - NUM_SPECIAL_TOKENS, 0)
        query = tf.gather(vectors, rows) * tf.cast(known, vectors.dtype)[:, None]
        scores = tf.matmul(query, vectors, transpose_b=True)
        scores = tf.tensor_scatter_nd_update(
            scores,
            tf.stack([tf.range(tf.shape(rows, out_type=tf.int64)[0]), rows], 1),
            tf.fill(tf.shape(rows), tf.constant(-2.0, scores.dtype)),
        )  # the word itself
        similarities, nearest = tf.math.top_k(scores, k)
        return {
            "vectors": query,
            "known": known,
            "neighbors": tf.where(known[:, None], tf.gather(names, nearest), ""),
            "similarities": tf.where(known[:, None], similarities, 0.0),
        }

    return serve, [table]


def _hypermodels():
    keras_tuner = import_keras_tuner()

    class Word2VecHyperModel(keras_tuner.HyperModel):
        """Searches word2vec: ``dim``, ``window``, ``negatives``, ``subsample`` (t) and
        ``learning_rate`` (SGD's per-example rate, from a quarter to four times the default,
        decaying over ``epochs`` as in training); the objective is the WordSim-353 Spearman
        correlation (``wordsim353_spearman``, gensim's file), computed after training.

        Args:
            recipe: the `EmbeddingsRecipe`.
            model_name: ``"skipgram"`` or ``"cbow"``.
            tokenized, vocabulary: the corpus (`EmbeddingsRecipe.load`).
            epochs: the epochs of each trial (the learning rate decays over them).
        """

        def __init__(self, recipe, model_name, tokenized, vocabulary, epochs=1, name="word2vec"):
            super().__init__(name=name, tunable=True)
            self.recipe, self.model_name = recipe, model_name
            self.tokenized, self.vocabulary = tokenized, vocabulary
            self.epochs = epochs

        def _settings(self, hp):
            default = self.recipe.settings("word2vec", self.model_name)
            rate = default["learning_rate"]
            return dict(
                dim=hp.Choice("dim", [50, 100, 200], default=default["dim"]),
                window=hp.Int("window", 2, 10, default=default["window"]),
                negatives=hp.Choice("negatives", [2, 5, 10, 15], default=default["negatives"]),
                subsample=hp.Choice(
                    "subsample", [0.0, 1e-5, 1e-4, 1e-3], default=default["subsample"]
                ),
                learning_rate=hp.Float(
                    "learning_rate", rate / 4, rate * 4, sampling="log", default=rate
                ),
            )

        def _steps(self, settings):
            cbow = self.model_name == "cbow"
            return self.recipe.steps_per_epoch(self.vocabulary, settings, BATCH_SIZE, cbow)

        def build(self, hp):
            settings = self._settings(hp)
            return self.recipe.build_model(
                "word2vec",
                self.model_name,
                self.vocabulary.size,
                total_steps=self._steps(settings) * self.epochs,
                **settings,
            )

        def fit(self, hp, model, epochs=1, **kwargs):
            from keras_adl.embeddings import evaluate_word_pairs, gensim_test_file

            settings = self._settings(hp)
            cbow = self.model_name == "cbow"
            data = self.recipe.dataset(self.tokenized, self.vocabulary, settings, BATCH_SIZE, cbow)
            model.fit(
                data,
                epochs=epochs,
                steps_per_epoch=self._steps(settings),
                verbose=kwargs.get("verbose", 1),
                shuffle=False,  # tf.data shuffles
            )
            embeddings = self.recipe.embeddings(model, self.vocabulary)
            pairs = evaluate_word_pairs(embeddings, gensim_test_file(STANDARD_FILES["wordsim353"]))
            spearman = pairs["spearman"]
            return {"wordsim353_spearman": spearman if spearman == spearman else -1.0}

    return locals()


__getattr__, __dir__ = lazy_hypermodels(globals(), _hypermodels, ("Word2VecHyperModel",))

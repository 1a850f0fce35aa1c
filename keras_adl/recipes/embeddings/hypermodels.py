"""The embeddings family's HyperModel (needs the ``tuner`` extra)."""

from keras_adl.recipes._tuning import import_keras_tuner
from keras_adl.recipes.embeddings import data
from keras_adl.recipes.embeddings.build import build_model
from keras_adl.recipes.embeddings.evaluate import word_embeddings, wordsim353_spearman
from keras_adl.recipes.embeddings.spec import BATCH_SIZE, CBOW, WORD2VEC_TASK

keras_tuner = import_keras_tuner()


class Word2VecHyperModel(keras_tuner.HyperModel):
    """Searches word2vec: ``dim``, ``window``, ``negatives``, ``subsample`` (t) and
    ``learning_rate`` (SGD's per-example rate, from a quarter to four times the default,
    decaying over ``epochs`` as in training); the defaults are the model's preset, the
    objective is the WordSim-353 Spearman correlation (``wordsim353_spearman``, gensim's file),
    computed after training.

    Args:
        model_name: ``"skipgram"`` or ``"cbow"``.
        stream, vocabulary: the corpus, streamed from disk, and its vocabulary
            (`keras_adl.recipes.embeddings.data.corpus`).
        epochs: the epochs of each trial (the learning rate decays over them).
    """

    def __init__(self, model_name, stream, vocabulary, epochs=1, name="word2vec"):
        super().__init__(name=name, tunable=True)
        self.model_name, self.cbow = model_name, CBOW[model_name]
        self.preset = WORD2VEC_TASK.preset(model_name)
        self.stream, self.vocabulary = stream, vocabulary
        self.epochs = epochs

    def _settings(self, hp):
        default = self.preset
        rate = default["learning_rate"]
        return dict(
            dim=hp.Choice("dim", [50, 100, 200], default=default["dim"]),
            window=hp.Int("window", 2, 10, default=default["window"]),
            negatives=hp.Choice("negatives", [2, 5, 10, 15], default=default["negatives"]),
            subsample=hp.Choice("subsample", [0.0, 1e-5, 1e-4, 1e-3], default=default["subsample"]),
            learning_rate=hp.Float(
                "learning_rate", rate / 4, rate * 4, sampling="log", default=rate
            ),
        )

    def _steps(self, settings):
        return data.steps_per_epoch(self.vocabulary, settings, BATCH_SIZE, self.cbow)

    def build(self, hp):
        settings = self._settings(hp)
        return build_model(
            self.preset,
            self.vocabulary.size,
            self.cbow,
            total_steps=self._steps(settings) * self.epochs,
            **settings,
        )

    def fit(self, hp, model, epochs=1, **kwargs):
        settings = dict(self.preset, **self._settings(hp))
        dataset = data.dataset(self.stream, self.vocabulary, settings, BATCH_SIZE, self.cbow)
        model.fit(
            dataset,
            epochs=epochs,
            steps_per_epoch=self._steps(settings),
            verbose=kwargs.get("verbose", 1),
            shuffle=False,  # tf.data shuffles
        )
        spearman = wordsim353_spearman(word_embeddings(model, self.vocabulary))
        return {"wordsim353_spearman": spearman if spearman == spearman else -1.0}

"""The tagging family's HyperModel (needs the ``tuner`` extra)."""

from keras_adl.recipes._tuning import import_keras_tuner, tuned_learning_rate
from keras_adl.recipes.tagging.build import build_model

keras_tuner = import_keras_tuner()


class CrossViewTaggerHyperModel(keras_tuner.HyperModel):
    """Searches `cross_view_tagger`: ``word_dim``, ``units``, ``hidden_units``, ``dropout``
    and ``learning_rate``; the defaults are the (task, model) preset.

    Args:
        preset: the model's preset (`spec.PRESETS`).
        vocabulary_size: word ids, the special tokens included.
        tasks: ``{task: number of tags}``.
        views: the auxiliary modules (fixed, not searched).
        characters: with the character CNN (fixed).
    """

    def __init__(
        self, preset, vocabulary_size, tasks, views, characters=False, name="cross_view_tagger"
    ):
        super().__init__(name=name, tunable=True)
        self.preset = dict(preset)
        self.vocabulary_size = vocabulary_size
        self.tasks = dict(tasks)
        self.views = tuple(views)
        self.characters = characters

    def build(self, hp):
        preset = self.preset
        return build_model(
            preset,
            self.vocabulary_size,
            self.tasks,
            self.views,
            self.characters,
            word_dim=hp.Choice("word_dim", [32, 64, 128], default=preset["word_dim"]),
            units=hp.Choice("units", [32, 64, 128], default=preset["units"]),
            hidden_units=hp.Choice("hidden_units", [32, 64, 128], default=preset["hidden_units"]),
            dropout=hp.Float("dropout", 0.0, 0.5, step=0.1, default=preset["dropout"]),
            learning_rate=tuned_learning_rate(hp, preset["learning_rate"]),
        )

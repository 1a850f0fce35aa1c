"""The contextual family's HyperModel (needs the ``tuner`` extra)."""

from keras_adl.recipes._tuning import import_keras_tuner, tuned_learning_rate
from keras_adl.recipes.contextual.build import build_classifier
from keras_adl.recipes.contextual.spec import CLASSIFIER

keras_tuner = import_keras_tuner()


class ContextualClassifierHyperModel(keras_tuner.HyperModel):
    """Searches the downstream classifier of ``fortunes_features``: GRU ``units``, ``dropout``
    and ``learning_rate`` (the features stay those of ``--features``); the defaults are the
    task's preset.

    Args:
        features: ``static``, ``cove``, ``elmo`` or ``elmo_top``.
        sources: `keras_adl.recipes.contextual.sources.sources` of those features.
        num_classes: topics.
    """

    def __init__(self, features, sources, num_classes, name="fortunes_features"):
        super().__init__(name=name, tunable=True)
        self.features, self.sources, self.num_classes = features, sources, num_classes

    def build(self, hp):
        return build_classifier(
            CLASSIFIER,
            self.features,
            self.sources,
            self.num_classes,
            units=hp.Choice("units", [32, 64, 128], default=CLASSIFIER["units"]),
            dropout=hp.Float("dropout", 0.0, 0.5, step=0.1, default=CLASSIFIER["dropout"]),
            learning_rate=tuned_learning_rate(hp, CLASSIFIER["learning_rate"]),
        )

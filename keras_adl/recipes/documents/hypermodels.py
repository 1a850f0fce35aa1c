"""The documents family's HyperModel (needs the ``tuner`` extra)."""

from keras_adl.models.han import han_classifier
from keras_adl.recipes._tuning import import_keras_tuner, tuned_learning_rate
from keras_adl.recipes.documents.build import compile_han
from keras_adl.recipes.documents.spec import HAN

keras_tuner = import_keras_tuner()


class HierarchicalAttentionHyperModel(keras_tuner.HyperModel):
    """Searches `han_classifier`: ``embedding_dim``, ``encoder_units``, ``units``
    (attention), ``dropout``, ``learning_rate``; the defaults are the family's preset.

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
            embedding_dim=hp.Choice("embedding_dim", [32, 64, 128], default=HAN["embedding_dim"]),
            units=hp.Choice("units", [32, 64, 100], default=HAN["units"]),
            encoder=self.encoder,
            encoder_units=hp.Choice("encoder_units", [16, 32, 50], default=HAN["encoder_units"]),
            dropout=hp.Float("dropout", 0.0, 0.5, step=0.1, default=HAN["dropout"]),
        )
        return compile_han(model, tuned_learning_rate(hp, HAN["learning_rate"]))

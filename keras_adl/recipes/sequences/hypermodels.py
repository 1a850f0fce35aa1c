"""The sequences family's HyperModels (need the ``tuner`` extra); their defaults are the
family's presets."""

import keras

from keras_adl.models.pointer import pointer_network
from keras_adl.models.seq2seq import attention_seq2seq, encoder_decoder
from keras_adl.models.transformer import transformer_classifier, transformer_seq2seq
from keras_adl.recipes._compile import compile_for_training
from keras_adl.recipes._tuning import import_keras_tuner, tuned_learning_rate
from keras_adl.recipes.sequences.build import compile_pointer_network, compile_seq2seq
from keras_adl.recipes.sequences.spec import DATES_PRESETS, SORT_PRESETS

keras_tuner = import_keras_tuner()


class Seq2SeqHyperModel(keras_tuner.HyperModel):
    """Searches `attention_seq2seq` / `encoder_decoder`.

    Hyperparameters: ``model`` (``"attention"`` or ``"no_attention"``); ``attention``
    (``"bahdanau"``/``"luong"``, only in the ``"attention"`` scope); ``cell``; ``units``;
    ``embedding_dim``; ``learning_rate``. The defaults are the ``dates`` preset's.

    Args:
        source_vocab_size, target_vocab_size: vocabulary sizes.
    """

    def __init__(self, source_vocab_size, target_vocab_size, name="seq2seq", tunable=True):
        super().__init__(name=name, tunable=tunable)
        self.source_vocab_size = source_vocab_size
        self.target_vocab_size = target_vocab_size

    def build(self, hp):
        default = DATES_PRESETS["attention_seq2seq"]
        kind = hp.Choice("model", ["attention", "no_attention"], default="attention")
        units = hp.Choice("units", [32, 64, 128], default=default["units"])
        embedding_dim = hp.Choice("embedding_dim", [16, 32, 64], default=default["embedding_dim"])
        cell = hp.Choice("cell", ["gru", "lstm"], default="gru")
        sizes = (self.source_vocab_size, self.target_vocab_size, embedding_dim, units)
        if kind == "attention":
            with hp.conditional_scope("model", ["attention"]):
                attention = hp.Choice("attention", ["bahdanau", "luong"], default="bahdanau")
            model = attention_seq2seq(*sizes, attention=attention, cell=cell)
        else:
            model = encoder_decoder(*sizes, cell=cell)
        return compile_seq2seq(model, tuned_learning_rate(hp, default["learning_rate"]))


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
        default = DATES_PRESETS["transformer_seq2seq"]
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
        return compile_seq2seq(model, tuned_learning_rate(hp, default["learning_rate"]))


class PointerNetworkHyperModel(keras_tuner.HyperModel):
    """Searches `pointer_network`: ``units``, ``learning_rate``."""

    def __init__(self, input_dim=1, name="pointer_network", tunable=True):
        super().__init__(name=name, tunable=tunable)
        self.input_dim = input_dim

    def build(self, hp):
        default = SORT_PRESETS["pointer_network"]
        model = pointer_network(
            self.input_dim, units=hp.Choice("units", [32, 64, 128], default=default["units"])
        )
        return compile_pointer_network(model, tuned_learning_rate(hp, default["learning_rate"]))


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
        return compile_for_training(model, loss, tuned_learning_rate(hp, 1e-3))


# The HyperModel that ``keras-adl tune dates --model MODEL`` searches.
SEQ2SEQ_HYPERMODELS = {
    "attention_seq2seq": Seq2SeqHyperModel,
    "encoder_decoder": Seq2SeqHyperModel,
    "transformer_seq2seq": TransformerSeq2SeqHyperModel,
}

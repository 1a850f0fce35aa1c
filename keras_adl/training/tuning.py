"""keras-tuner HyperModels, one per builder.

Requires the ``tuner`` extra (``keras-tuner``, ``tensorboard``, ``scipy``, ``scikit-learn``):
keras-tuner 1.4.8 on TensorFlow 2.21 fails every trial without ``tensorboard``, and
``BayesianOptimization`` needs scipy and scikit-learn.
"""

import keras
import keras_tuner

from keras_adl.models.captioning import show_attend_tell
from keras_adl.models.han import han_classifier
from keras_adl.models.memory import compile_memory_model, memory_sequence_model
from keras_adl.models.pointer import pointer_network
from keras_adl.models.ram import recurrent_attention_model
from keras_adl.models.seq2seq import attention_seq2seq, encoder_decoder
from keras_adl.models.transformer import transformer_classifier, transformer_seq2seq
from keras_adl.training.recipes import compile_for_training


def _compile(model, hp, loss, default_lr):
    learning_rate = hp.Float("learning_rate", 1e-4, 1e-2, sampling="log", default=default_lr)
    return compile_for_training(model, loss, learning_rate)


class Seq2SeqHyperModel(keras_tuner.HyperModel):
    """Searches `attention_seq2seq` / `encoder_decoder`.

    Hyperparameters: ``model`` (``"attention"`` or ``"no_attention"``); ``attention``
    (``"bahdanau"``/``"luong"``, only in the ``"attention"`` scope); ``cell``; ``units``;
    ``embedding_dim``; ``learning_rate``.

    Args:
        source_vocab_size, target_vocab_size: vocabulary sizes.
    """

    def __init__(self, source_vocab_size, target_vocab_size, name="seq2seq", tunable=True):
        super().__init__(name=name, tunable=tunable)
        self.source_vocab_size = source_vocab_size
        self.target_vocab_size = target_vocab_size

    def build(self, hp):
        kind = hp.Choice("model", ["attention", "no_attention"], default="attention")
        units = hp.Choice("units", [32, 64, 128], default=64)
        embedding_dim = hp.Choice("embedding_dim", [16, 32, 64], default=32)
        cell = hp.Choice("cell", ["gru", "lstm"], default="gru")
        sizes = (self.source_vocab_size, self.target_vocab_size, embedding_dim, units)
        if kind == "attention":
            with hp.conditional_scope("model", ["attention"]):
                attention = hp.Choice("attention", ["bahdanau", "luong"], default="bahdanau")
            model = attention_seq2seq(*sizes, attention=attention, cell=cell)
        else:
            model = encoder_decoder(*sizes, cell=cell)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return _compile(model, hp, loss, 3e-3)


class TransformerSeq2SeqHyperModel(keras_tuner.HyperModel):
    """Searches `transformer_seq2seq`: ``model_dim``, ``num_heads``, ``num_layers``,
    ``intermediate_factor`` (FFN size / model_dim), ``dropout``, ``learning_rate``."""

    def __init__(self, source_vocab_size, target_vocab_size, name="transformer_seq2seq",
                 tunable=True):
        super().__init__(name=name, tunable=tunable)
        self.source_vocab_size = source_vocab_size
        self.target_vocab_size = target_vocab_size

    def build(self, hp):
        model_dim = hp.Choice("model_dim", [32, 64, 128], default=64)
        model = transformer_seq2seq(
            self.source_vocab_size,
            self.target_vocab_size,
            model_dim=model_dim,
            num_heads=hp.Choice("num_heads", [2, 4], default=4),
            intermediate_dim=model_dim * hp.Choice("intermediate_factor", [2, 4], default=2),
            num_layers=hp.Int("num_layers", 1, 4, default=2),
            dropout=hp.Float("dropout", 0.0, 0.3, step=0.1, default=0.0),
        )
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return _compile(model, hp, loss, 1e-3)


class PointerNetworkHyperModel(keras_tuner.HyperModel):
    """Searches `pointer_network`: ``units``, ``learning_rate``."""

    def __init__(self, input_dim=1, name="pointer_network", tunable=True):
        super().__init__(name=name, tunable=tunable)
        self.input_dim = input_dim

    def build(self, hp):
        model = pointer_network(self.input_dim, units=hp.Choice("units", [32, 64, 128], default=128))
        return _compile(model, hp, keras.losses.SparseCategoricalCrossentropy(), 2e-3)


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
        return _compile(model, hp, loss, 1e-3)


class MemorySequenceHyperModel(keras_tuner.HyperModel):
    """Searches `memory_sequence_model`: ``cell`` (``"ntm"``/``"dnc"``, or the fixed one),
    ``controller_units``, ``memory_size``, ``memory_width``, ``learning_rate`` (for the
    ``"lstm"`` baseline: ``lstm_units``, ``lstm_layers``, ``learning_rate``); compiled with
    `compile_memory_model` (Adam, global-norm clip 50, per-sequence bit loss and metrics).

    Tune on ``val_bit_errors`` (objective ``keras_tuner.Objective("val_bit_errors", "min")``),
    passing the task's weights as sample weights.

    Args:
        input_dim, output_dim: the task's sizes (`keras_adl.tasks.algorithmic.task_dims`).
        cell: a fixed cell, or ``None`` to search over ``"ntm"`` and ``"dnc"``.
        jit_compile: compile the train step with XLA.
    """

    def __init__(self, input_dim, output_dim, cell=None, jit_compile=True,
                 name="memory_sequence", tunable=True):
        super().__init__(name=name, tunable=tunable)
        self.input_dim = input_dim
        self.output_dim = output_dim
        self.cell = cell
        self.jit_compile = jit_compile

    def build(self, hp):
        cell = self.cell or hp.Choice("cell", ["ntm", "dnc"], default="ntm")
        learning_rate = hp.Float("learning_rate", 1e-4, 1e-2, sampling="log", default=1e-3)
        if cell == "lstm":  # the baseline: its own sizes, no memory
            model = memory_sequence_model(
                self.input_dim, self.output_dim, cell="lstm",
                lstm_units=hp.Choice("lstm_units", [64, 128, 256], default=256),
                lstm_layers=hp.Int("lstm_layers", 1, 3, default=3))
            return compile_memory_model(model, learning_rate, jit_compile=self.jit_compile)
        model = memory_sequence_model(
            self.input_dim,
            self.output_dim,
            cell=cell,
            controller_units=hp.Choice("controller_units", [32, 64, 100], default=100),
            memory_size=hp.Choice("memory_size", [16, 32, 64, 128], default=128),
            memory_width=hp.Choice("memory_width", [8, 16, 20], default=20),
        )
        return compile_memory_model(model, learning_rate, jit_compile=self.jit_compile)


class RecurrentAttentionHyperModel(keras_tuner.HyperModel):
    """Searches `recurrent_attention_model` (trained by its own hybrid REINFORCE rule).

    Hyperparameters: ``patch_size``; ``num_scales``; ``units`` (core; the glimpse network's
    ``g`` has the same size and ``h_g``, ``h_l`` half of it); ``location_std``;
    ``learning_rate`` (Adam). Tune on ``keras_tuner.Objective("val_accuracy", "max")``.

    Args:
        image_shape: ``(H, W, C)``.
        num_classes: number of classes.
        num_glimpses: fixed number of glimpses (the budget is part of the task).
        policy: ``"learned"`` or ``"random"`` (the random-glimpse baseline).
        jit_compile: compile the train step with XLA.
    """

    def __init__(self, image_shape, num_classes, num_glimpses=4, policy="learned",
                 jit_compile=True, name="recurrent_attention", tunable=True):
        super().__init__(name=name, tunable=tunable)
        self.image_shape = tuple(image_shape)
        self.num_classes = num_classes
        self.num_glimpses = num_glimpses
        self.policy = policy
        self.jit_compile = jit_compile

    def build(self, hp):
        units = hp.Choice("units", [64, 128, 256], default=128)
        model = recurrent_attention_model(
            self.image_shape,
            self.num_classes,
            num_glimpses=self.num_glimpses,
            patch_size=hp.Choice("patch_size", [6, 8, 12], default=8),
            num_scales=hp.Int("num_scales", 1, 3, default=1),
            glimpse_units=units // 2,
            location_units=units // 2,
            glimpse_output_units=units,
            units=units,
            location_std=hp.Choice("location_std", [0.05, 0.1, 0.2], default=0.1),
            policy=self.policy,
        )
        learning_rate = hp.Float("learning_rate", 1e-4, 1e-2, sampling="log", default=1e-3)
        model.compile(optimizer=keras.optimizers.Adam(learning_rate),
                      jit_compile=self.jit_compile)
        return model


class ShowAttendTellHyperModel(keras_tuner.HyperModel):
    """Searches `show_attend_tell` on images.

    Hyperparameters: ``units``; ``embedding_dim``; ``learning_rate``. The library's recipe
    otherwise (Adam with a global-norm clip of 5, masked sparse cross-entropy). ``λ`` is fixed:
    ``val_loss`` includes ``λ`` times the penalty, whose floor ``L(1 − T/L)²`` is far above a
    good cross-entropy, so a search over ``λ`` on ``val_loss`` would always pick ``λ = 0``.

    Args:
        vocab_size: caption vocabulary size (13 for digit strips).
        image_shape: ``(H, W, C)``.
        encoder_filters: of the CNN encoder (fixed: it sets the number of regions ``L``).
        regularization: the doubly stochastic ``λ``.
        jit_compile: compile the train step with XLA.
    """

    def __init__(self, vocab_size, image_shape, encoder_filters=(8, 16, 32), regularization=1.0,
                 jit_compile=True, name="show_attend_tell", tunable=True):
        super().__init__(name=name, tunable=tunable)
        self.vocab_size = vocab_size
        self.image_shape = tuple(image_shape)
        self.encoder_filters = tuple(encoder_filters)
        self.regularization = regularization
        self.jit_compile = jit_compile

    def build(self, hp):
        model = show_attend_tell(
            self.vocab_size,
            image_shape=self.image_shape,
            units=hp.Choice("units", [32, 64, 128], default=32),
            embedding_dim=hp.Choice("embedding_dim", [16, 32, 64], default=16),
            regularization=self.regularization,
            encoder_filters=self.encoder_filters,
        )
        learning_rate = hp.Float("learning_rate", 1e-4, 3e-2, sampling="log", default=1e-2)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
        return compile_for_training(model, loss, learning_rate, self.jit_compile)


class HierarchicalAttentionHyperModel(keras_tuner.HyperModel):
    """Searches `han_classifier`: ``embedding_dim``, ``encoder_units``, ``units`` (attention),
    ``dropout``, ``learning_rate``.

    Args:
        vocab_size: number of token ids (``DocumentTokenizer.vocabulary_size``).
        num_classes: number of classes.
        max_sentences, max_words: the static ``S`` and ``W`` of the batches (or ``None``).
        encoder: ``"gru"`` or ``"lstm"`` (fixed, not searched).
    """

    def __init__(self, vocab_size, num_classes, max_sentences=None, max_words=None,
                 encoder="gru", name="han_classifier", tunable=True):
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
            embedding_dim=hp.Choice("embedding_dim", [32, 64, 128], default=64),
            units=hp.Choice("units", [32, 64, 100], default=64),
            encoder=self.encoder,
            encoder_units=hp.Choice("encoder_units", [16, 32, 50], default=32),
            dropout=hp.Float("dropout", 0.0, 0.5, step=0.1, default=0.1),
        )
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        return _compile(model, hp, loss, 2e-3)

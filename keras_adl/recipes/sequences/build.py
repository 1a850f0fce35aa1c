"""The one place the sequences family's models are built and compiled, and how each model
decodes greedily."""

import keras

from keras_adl.models.pointer import pointer_network
from keras_adl.models.seq2seq import attention_seq2seq, encoder_decoder, greedy_decode
from keras_adl.models.transformer import transformer_greedy_decode, transformer_seq2seq
from keras_adl.recipes._compile import compile_for_training, override

SEQ2SEQ_BUILDERS = {
    "attention_seq2seq": attention_seq2seq,
    "encoder_decoder": encoder_decoder,
    "transformer_seq2seq": transformer_seq2seq,
}
# Models with a decoder of their own (the Transformer's caches its keys and values); the others
# decode with `greedy_decode`, or beam search.
OWN_DECODERS = {"transformer_seq2seq": transformer_greedy_decode}


def decode_fn(model_name):
    """Greedy decoding for ``model_name``: ``decode(model, ids, max_length) -> (tokens,
    attention, score)``."""
    return OWN_DECODERS.get(model_name, greedy_decode)


def build_seq2seq(
    model_name, preset, source_vocab_size, target_vocab_size, jit_compile=True, **overrides
):
    """The compiled encoder-decoder ``model_name`` of a (task, model) ``preset`` (the task
    spec's `presets`) over the given vocabularies; ``overrides`` replace preset values (only
    existing ones)."""
    settings = override(dict(preset), overrides)
    learning_rate = settings.pop("learning_rate")
    model = SEQ2SEQ_BUILDERS[model_name](source_vocab_size, target_vocab_size, **settings)
    return compile_seq2seq(model, learning_rate, jit_compile)


def build_pointer_network(preset, jit_compile=True, **overrides):
    """The compiled `pointer_network` of a ``preset``; ``overrides`` replace preset values."""
    settings = override(dict(preset), overrides)
    learning_rate = settings.pop("learning_rate")
    return compile_pointer_network(pointer_network(**settings), learning_rate, jit_compile)


def compile_seq2seq(model, learning_rate, jit_compile=True):
    """Compiles an encoder-decoder with the library's recipe (Adam, global clip 5) on its
    logits."""
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return compile_for_training(model, loss, learning_rate, jit_compile)


def compile_pointer_network(model, learning_rate, jit_compile=True):
    """Compiles a `pointer_network` with the library's recipe on its pointer probabilities."""
    loss = keras.losses.SparseCategoricalCrossentropy()
    return compile_for_training(model, loss, learning_rate, jit_compile)

"""Model builders: functional-API recipes returning keras.Model objects."""

from keras_adl.models.seq2seq import (
    attention_seq2seq,
    beam_search,
    encoder_decoder,
    greedy_decode,
)

__all__ = ["attention_seq2seq", "beam_search", "encoder_decoder", "greedy_decode"]

"""Model builders: functional-API recipes returning keras.Model objects."""

from keras_adl.models.baselines import whole_image_convnet, whole_image_mlp
from keras_adl.models.bert import bert_classifier, bert_encoder, bert_pretrainer, encoder_of
from keras_adl.models.captioning import (
    caption_attention,
    caption_beam_search,
    caption_greedy_decode,
    caption_grid_shape,
    show_attend_tell,
)
from keras_adl.models.cross_view import CrossViewTagger, cross_view_tagger
from keras_adl.models.dram import (
    DeepRecurrentAttentionModel,
    deep_recurrent_attention_model,
    rewards_to_go,
)
from keras_adl.models.elmo import (
    compile_bilm,
    elmo_bilm,
    elmo_embedder,
    features_classifier,
)
from keras_adl.models.gpt import filter_logits, generate, gpt_classifier, gpt_lm
from keras_adl.models.han import han_attention, han_classifier
from keras_adl.models.memory import (
    addressing_model,
    memory_sequence_model,
)
from keras_adl.models.pointer import pointer_decode, pointer_network
from keras_adl.models.ram import RecurrentAttentionModel, recurrent_attention_model
from keras_adl.models.seq2seq import (
    attention_seq2seq,
    beam_search,
    cove_encoder,
    encoder_decoder,
    greedy_decode,
)
from keras_adl.models.transformer import (
    transformer_classifier,
    transformer_greedy_decode,
    transformer_seq2seq,
)

__all__ = [
    "CrossViewTagger",
    "cross_view_tagger",
    "bert_classifier",
    "bert_encoder",
    "bert_pretrainer",
    "encoder_of",
    "compile_bilm",
    "cove_encoder",
    "elmo_bilm",
    "elmo_embedder",
    "features_classifier",
    "filter_logits",
    "generate",
    "gpt_classifier",
    "gpt_lm",
    "caption_attention",
    "caption_beam_search",
    "caption_greedy_decode",
    "caption_grid_shape",
    "show_attend_tell",
    "han_attention",
    "han_classifier",
    "DeepRecurrentAttentionModel",
    "deep_recurrent_attention_model",
    "rewards_to_go",
    "RecurrentAttentionModel",
    "recurrent_attention_model",
    "whole_image_convnet",
    "whole_image_mlp",
    "addressing_model",
    "memory_sequence_model",
    "attention_seq2seq",
    "beam_search",
    "encoder_decoder",
    "greedy_decode",
    "pointer_decode",
    "pointer_network",
    "transformer_classifier",
    "transformer_greedy_decode",
    "transformer_seq2seq",
]

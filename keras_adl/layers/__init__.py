"""Public keras-adl layers. Importing this module registers every layer for `.keras` loading."""

from keras_adl.layers.attention_pooling import AttentionPooling
from keras_adl.layers.attention_rnn_decoder import AttentionRNNDecoder
from keras_adl.layers.bahdanau_attention import BahdanauAttention
from keras_adl.layers.character_cnn import CharacterCNN
from keras_adl.layers.deep_recurrent_attention import DeepRecurrentAttention
from keras_adl.layers.dnc_cell import DNCCell
from keras_adl.layers.doubly_stochastic_regularization import DoublyStochasticRegularization
from keras_adl.layers.elmo_embedding import ELMoEmbedding
from keras_adl.layers.glimpse_network import GlimpseNetwork
from keras_adl.layers.glimpse_sensor import GlimpseSensor
from keras_adl.layers.global_batch_dropout import GlobalBatchDropout
from keras_adl.layers.hierarchical_attention import HierarchicalAttention
from keras_adl.layers.highway import Highway
from keras_adl.layers.luong_attention import LuongAttention
from keras_adl.layers.masked_lm_head import MaskedLMHead
from keras_adl.layers.multi_head_cross_attention import MultiHeadCrossAttention
from keras_adl.layers.multi_head_self_attention import MultiHeadSelfAttention
from keras_adl.layers.ntm_cell import NTMCell
from keras_adl.layers.positional_encoding import PositionalEncoding
from keras_adl.layers.prediction_module import PredictionModule
from keras_adl.layers.recurrent_attention import RecurrentAttention
from keras_adl.layers.restricted_views import RestrictedViews
from keras_adl.layers.scalar_mix import ScalarMix
from keras_adl.layers.sequence_pooling import SequencePooling
from keras_adl.layers.token_and_position_embedding import TokenAndPositionEmbedding
from keras_adl.layers.transformer_decoder_block import TransformerDecoderBlock
from keras_adl.layers.transformer_encoder_block import TransformerEncoderBlock

__all__ = [
    "AttentionPooling",
    "AttentionRNNDecoder",
    "BahdanauAttention",
    "CharacterCNN",
    "DeepRecurrentAttention",
    "DNCCell",
    "ELMoEmbedding",
    "DoublyStochasticRegularization",
    "GlimpseNetwork",
    "GlimpseSensor",
    "GlobalBatchDropout",
    "HierarchicalAttention",
    "Highway",
    "LuongAttention",
    "MaskedLMHead",
    "MultiHeadCrossAttention",
    "MultiHeadSelfAttention",
    "NTMCell",
    "PositionalEncoding",
    "PredictionModule",
    "RecurrentAttention",
    "RestrictedViews",
    "ScalarMix",
    "SequencePooling",
    "TokenAndPositionEmbedding",
    "TransformerDecoderBlock",
    "TransformerEncoderBlock",
]

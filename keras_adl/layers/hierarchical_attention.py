"""The hierarchical attention encoder of HAN: words → sentence vectors → a document vector."""

import inspect
from typing import Any

import keras
from keras import ops

from keras_adl.layers.attention_pooling import AttentionPooling
from keras_adl.type_aliases import Initializer
from keras_adl.utils import check_choice, check_positive_int, check_rank, clone_initializer

_RNNS = {"gru": keras.layers.GRU, "lstm": keras.layers.LSTM}


@keras.saving.register_keras_serializable(package="keras_adl")
class HierarchicalAttention(keras.layers.Layer):
    """Encodes documents ``[B, S, W]`` of sentences of words into document vectors.

        h_it = WordEncoder(x_i1 … x_iW)_t              (every sentence i on its own)
        s_i  = Σ_t α_it h_it,   α_it = softmax_t(tanh(W_w h_it + b_w)ᵀ u_w)
        h_i  = SentenceEncoder(s_1 … s_S)_i
        v    = Σ_i α_i h_i,     α_i  = softmax_i(tanh(W_s h_i + b_s)ᵀ u_s)

    (Yang et al. 2016, eq. 1–10.) The word encoder runs once on all ``B·S`` sentences reshaped
    to ``[B·S, W, ·]`` with the word mask reshaped alongside (one batched call, where
    ``TimeDistributed`` loops over sentences), and the sentence mask is built explicitly: a
    sentence is real when it has at least one real word. Both softmaxes are masked, so padded
    words and sentences get exactly zero attention. With mask-aware encoders (the built-in
    GRU/LSTM) adding padding (more sentences, longer sentences) changes nothing, an empty
    sentence is skipped by the sentence encoder, and a document made only of padding encodes
    to the zero vector, without NaN. An encoder that ignores masks (e.g. a convolution) lets
    padded steps shape the real steps' states, though padding still gets no attention.

    Args:
        units: size of the attention projections and of the context vectors ``u_w``, ``u_s``
            (100 in the paper).
        word_encoder: ``"gru"`` or ``"lstm"`` (a recurrent layer of ``encoder_units``,
            bidirectional when ``bidirectional``), or any Keras layer or model mapping
            ``[N, T, D]`` to ``[N, T, D']`` (it receives the mask when its ``call`` takes one
            and, for a model, when it ``supports_masking``),
            or such a layer's serialized config (a dict, as `get_config` writes it).
        sentence_encoder: the same choices, for the sequence of sentence vectors.
        encoder_units: units of each direction of the built-in encoders (50 in the paper).
        bidirectional: whether the built-in encoders read both ways (outputs concatenated).
        vocab_size: if given, the inputs are token ids ``[B, S, W]`` (0 is padding) and the
            layer owns an ``Embedding(vocab_size, embedding_dim)``; if ``None``, the inputs are
            word vectors ``[B, S, W, E]``.
        embedding_dim: size of the word embeddings (required with ``vocab_size``).
        embeddings_initializer: initializer of the embeddings.
        kernel_initializer: initializer of the attention projections and context vectors.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: int token ids ``[B, S, W]`` (with ``vocab_size``) or float word vectors
            ``[B, S, W, E]``.
        mask: optional ``[B, S, W]`` word mask. With ids, ``ids != 0`` is used (and combined
            with this mask); with word vectors the Keras mask (e.g. of an
            ``Embedding(mask_zero=True)``) is used, and without one, all-zero vectors are
            padding.
        training: passed to the encoders (dropout).
        return_attention_scores: also return the attention maps.

    Returns:
        The document vector ``v`` ``[B, D]``; with ``return_attention_scores`` the tuple
        ``(v, word_attention [B, S, W], sentence_attention [B, S])``. No output mask.

    Example:

    >>> layer = HierarchicalAttention(units=8, encoder_units=4, vocab_size=20, embedding_dim=6)
    >>> ids = ops.array([[[3, 4, 0], [5, 0, 0]], [[6, 7, 8], [0, 0, 0]]])  # [B=2, S=2, W=3]
    >>> v, words, sentences = layer(ids, return_attention_scores=True)
    >>> tuple(v.shape), tuple(words.shape), tuple(sentences.shape)
    ((2, 8), (2, 2, 3), (2, 2))
    >>> [float(a) for a in sentences[1]], float(words[0, 1, 0])
    ([1.0, 0.0], 1.0)

    References:
        Yang, Yang, Dyer, He, Smola, Hovy (2016). Hierarchical Attention Networks for Document
        Classification. NAACL-HLT.
    """

    def __init__(
        self,
        units: int = 100,
        word_encoder: str | keras.layers.Layer | dict[str, Any] = "gru",
        sentence_encoder: str | keras.layers.Layer | dict[str, Any] = "gru",
        encoder_units: int = 50,
        bidirectional: bool = True,
        vocab_size: int | None = None,
        embedding_dim: int | None = None,
        embeddings_initializer: Initializer = "uniform",
        kernel_initializer: Initializer = "glorot_uniform",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = "HierarchicalAttention: "
        self.units = check_positive_int("units", units, where=where)
        self.word_encoder = self._check_encoder("word_encoder", word_encoder)
        self.sentence_encoder = self._check_encoder("sentence_encoder", sentence_encoder)
        self.encoder_units = check_positive_int("encoder_units", encoder_units, where=where)
        self.bidirectional = bool(bidirectional)
        self.vocab_size = check_positive_int("vocab_size", vocab_size, allow_none=True, where=where)
        self.embedding_dim = check_positive_int(
            "embedding_dim", embedding_dim, allow_none=True, where=where
        )
        if (vocab_size is None) != (embedding_dim is None):
            raise ValueError(
                f"{where}`vocab_size` and `embedding_dim` go together (token-id inputs) or are "
                f"both None (word-vector inputs); received vocab_size={vocab_size!r}, "
                f"embedding_dim={embedding_dim!r}."
            )
        self.embeddings_initializer = keras.initializers.get(embeddings_initializer)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.supports_masking = True

    @staticmethod
    def _check_encoder(name, encoder):
        if isinstance(encoder, dict):  # a serialized layer, from get_config
            encoder = keras.saving.deserialize_keras_object(encoder)
        if isinstance(encoder, str):
            return check_choice(
                name, encoder.lower(), tuple(_RNNS), where="HierarchicalAttention: "
            )
        if not isinstance(encoder, keras.layers.Layer):
            raise TypeError(
                f"HierarchicalAttention: `{name}` must be 'gru', 'lstm' or a Keras layer; "
                f"received {type(encoder).__name__}: {encoder!r}."
            )
        return encoder

    def _make_encoder(self, encoder, name):
        if not isinstance(encoder, str):
            return encoder

        def make(go_backwards=False, layer_name=None):
            return _RNNS[encoder](
                self.encoder_units,
                return_sequences=True,
                go_backwards=go_backwards,
                dtype=self.dtype_policy,
                name=layer_name,
            )

        if not self.bidirectional:
            return make(layer_name=name)
        # The backward layer is made here, not by Bidirectional: Bidirectional would rebuild
        # it by serializing the forward one, and inside `load_model` that deserialization can
        # return the forward layer itself from the loading scope's shared objects (seen as
        # "Forward layer and backward layer should have different `go_backwards` value").
        return keras.layers.Bidirectional(
            make(layer_name=f"{name}_forward"),
            backward_layer=make(True, f"{name}_backward"),
            dtype=self.dtype_policy,
            name=name,
        )

    def _pooling(self, name):
        return AttentionPooling(
            self.units,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            context_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name=name,
        )

    @staticmethod
    def _build_encoder(encoder, shape):
        if not encoder.built:
            encoder.build(shape)
        output_shape = encoder.compute_output_shape(shape)
        if (
            not isinstance(output_shape, (tuple, list))
            or len(output_shape) != 3
            or not all(d is None or isinstance(d, int) for d in output_shape)
            or output_shape[-1] is None
        ):
            raise ValueError(
                "HierarchicalAttention: an encoder must map [N, T, D] to [N, T, D'] with a "
                f"known D'; {encoder.name} maps {shape} to {output_shape}."
            )
        return tuple(output_shape)

    def build(self, inputs_shape):
        where = "HierarchicalAttention: "
        inputs_shape = tuple(inputs_shape)
        if self.vocab_size is not None:
            check_rank("inputs", inputs_shape, 3, where=where + "with `vocab_size`, token ids ")
            self.embedding = keras.layers.Embedding(
                self.vocab_size,
                self.embedding_dim,
                embeddings_initializer=clone_initializer(self.embeddings_initializer),
                dtype=self.dtype_policy,
                name="embedding",
            )
            self.embedding.build(inputs_shape)
            word_dim = self.embedding_dim
        else:
            check_rank(
                "inputs", inputs_shape, 4, where=where + "without `vocab_size`, word vectors "
            )
            word_dim = inputs_shape[-1]
            if word_dim is None:
                raise ValueError(
                    f"{where}the word-vector size of `inputs` must be known; "
                    f"received shape {inputs_shape}."
                )
        words = inputs_shape[2]
        self.word_rnn = self._make_encoder(self.word_encoder, "word_encoder")
        hidden = self._build_encoder(self.word_rnn, (None, words, word_dim))
        self.word_attention = self._pooling("word_attention")
        self.word_attention.build(hidden)
        self.sentence_rnn = self._make_encoder(self.sentence_encoder, "sentence_encoder")
        sentence_hidden = self._build_encoder(
            self.sentence_rnn, (inputs_shape[0], inputs_shape[1], hidden[-1])
        )
        self.sentence_attention = self._pooling("sentence_attention")
        self.sentence_attention.build(sentence_hidden)

    @staticmethod
    def _encode(encoder, x, mask, training):
        kwargs = {}
        parameters = inspect.signature(encoder.call).parameters
        # Every Keras model's call takes a mask; pass it only to models that can use it.
        if "mask" in parameters and (
            not isinstance(encoder, keras.Model) or encoder.supports_masking
        ):
            kwargs["mask"] = mask
        if "training" in parameters or isinstance(encoder, keras.Model):
            kwargs["training"] = training
        return encoder(x, **kwargs)

    def call(self, inputs, mask=None, training=None, return_attention_scores=False):
        if self.vocab_size is not None:
            if not keras.backend.is_int_dtype(keras.backend.standardize_dtype(inputs.dtype)):
                raise TypeError(
                    "HierarchicalAttention: with `vocab_size`, `inputs` must be integer token "
                    f"ids [B, S, W]; received dtype {inputs.dtype}."
                )
            word_mask = ops.not_equal(inputs, 0)  # ids: 0 is padding
            x = self.embedding(inputs)  # [B, S, W, E]
        else:
            x = inputs
            word_mask = ops.any(ops.not_equal(x, 0), axis=-1) if mask is None else None
        if mask is not None:
            mask = ops.cast(mask, "bool")
            word_mask = mask if word_mask is None else ops.logical_and(word_mask, mask)
        shape = ops.shape(x)
        batch, sentences, words = shape[0], shape[1], shape[2]
        # Every sentence of every document is one sequence for the word encoder.
        flat_words = ops.reshape(x, (batch * sentences, words, x.shape[-1]))
        flat_mask = ops.reshape(word_mask, (batch * sentences, words))
        h_words = self._encode(self.word_rnn, flat_words, flat_mask, training)  # h_it
        s, alpha_words = self.word_attention(  # s_i = Σ_t α_it h_it
            h_words, mask=flat_mask, return_attention_scores=True
        )
        s = ops.reshape(s, (batch, sentences, s.shape[-1]))
        sentence_mask = ops.any(word_mask, axis=-1)  # a sentence with ≥ 1 real word, [B, S]
        h_sentences = self._encode(self.sentence_rnn, s, sentence_mask, training)  # h_i
        v, alpha_sentences = self.sentence_attention(  # v = Σ_i α_i h_i
            h_sentences, mask=sentence_mask, return_attention_scores=True
        )
        if return_attention_scores:
            return v, ops.reshape(alpha_words, (batch, sentences, words)), alpha_sentences
        return v

    def compute_mask(self, inputs, mask=None):
        return None  # the outputs have no step axis left to mask

    def get_config(self):
        config = super().get_config()

        def encoder_config(encoder):
            if isinstance(encoder, str):
                return encoder
            return keras.saving.serialize_keras_object(encoder)

        config.update(
            {
                "units": self.units,
                "word_encoder": encoder_config(self.word_encoder),
                "sentence_encoder": encoder_config(self.sentence_encoder),
                "encoder_units": self.encoder_units,
                "bidirectional": self.bidirectional,
                "vocab_size": self.vocab_size,
                "embedding_dim": self.embedding_dim,
                "embeddings_initializer": keras.initializers.serialize(self.embeddings_initializer),
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config

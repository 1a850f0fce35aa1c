"""Token, learned position and optional segment embeddings (BERT, GPT), reversible for a tied
output projection."""

from typing import Any

import keras
from keras import ops

from keras_adl.type_aliases import Initializer
from keras_adl.utils import check_positive_int, check_rank


@keras.saving.register_keras_serializable(package="keras_adl")
class TokenAndPositionEmbedding(keras.layers.Layer):
    """``E_token[ids] + E_position[t] (+ E_segment[segment_ids])``, masked where ``ids == 0``.

    BERT's and GPT's input embedding (Devlin et al. 2019, figure 2; Radford et al. 2018): a
    token table ``[V, D]``, a learned position table ``[max_length, D]`` and, with
    ``num_segments``, a segment table. Normalisation and dropout are left to the model.

    **Reversible**: ``layer(hidden, reverse=True)`` scores ``[..., D]`` vectors against the
    token table, ``hidden @ E_tokenᵀ (+ b)``: the output projection tied to the input
    embedding (Press & Wolf 2017), as BERT's masked-LM head and GPT's softmax use it. Calling
    the one layer twice in a functional model keeps the tie through ``.keras`` saving. With
    ``output_bias`` the reverse call adds a learned bias ``b [V]`` (BERT's); a model that
    never calls ``reverse`` should not ask for it. A model built on a pretrained layer that
    no longer calls ``reverse`` (a fine-tuned classifier) calls
    ``set_output_bias_trainable(False)``: the bias is frozen, and stays frozen through
    ``.keras`` saving (a variable's own ``trainable`` is not saved) and through the layer's
    ``trainable`` switch, so the reloaded model's optimizer state matches.

    Args:
        vocab_size: ``V``, token ids ``0..V-1`` (0 is padding).
        max_length: the longest sequence (positions ``0..max_length-1``).
        embedding_dim: ``D``.
        num_segments: segment ids ``0..num_segments-1`` (0: no segment table).
        output_bias: learn the bias of the reverse projection.
        output_bias_trainable: whether that bias is trained (`set_output_bias_trainable`).
        embeddings_initializer: for the three tables (BERT's truncated normal, σ = 0.02).
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: int ``[B, T]`` token ids (``T ≤ max_length - start_index``); with
            ``reverse=True``, float ``[..., D]`` vectors.
        segment_ids: int ``[B, T]`` (required with ``num_segments``; 0 for padding).
        start_index: position of the first step (int or scalar tensor), for cached decoding.
        reverse: project vectors to token logits instead.

    Returns:
        ``[B, T, D]`` embeddings with the Keras mask ``ids != 0``; with ``reverse``,
        ``[..., V]`` logits (no mask).

    Example:

    >>> ids = keras.Input((None,), dtype="int32")
    >>> embed = TokenAndPositionEmbedding(100, 16, 8, output_bias=True)
    >>> x = embed(ids)
    >>> tuple(x.shape), tuple(embed(x, reverse=True).shape)
    ((None, None, 8), (None, None, 100))
    """

    def __init__(
        self,
        vocab_size: int,
        max_length: int,
        embedding_dim: int,
        num_segments: int = 0,
        output_bias: bool = False,
        output_bias_trainable: bool = True,
        embeddings_initializer: Initializer = "truncated_normal_002",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = "TokenAndPositionEmbedding: "
        self.vocab_size = check_positive_int("vocab_size", vocab_size, where=where)
        self.max_length = check_positive_int("max_length", max_length, where=where)
        self.embedding_dim = check_positive_int("embedding_dim", embedding_dim, where=where)
        if isinstance(num_segments, bool) or not isinstance(num_segments, int) or num_segments < 0:
            raise ValueError(
                f"{where}`num_segments` must be an int >= 0; received {num_segments!r}."
            )
        self.num_segments = num_segments
        self.output_bias = bool(output_bias)
        self._output_bias_trainable = bool(output_bias_trainable)
        self.bias = None
        self.embeddings_initializer = embeddings_initializer
        self.supports_masking = True

    @property
    def output_bias_trainable(self) -> bool:
        """Whether the reverse projection's bias is trained (with the layer)."""
        return self._output_bias_trainable

    def set_output_bias_trainable(self, trainable: bool) -> None:
        """Trains the reverse projection's bias or freezes it (before or after building).
        A method, not an assignment: TensorFlow's attribute tracking skips assigning an
        attribute the object it already holds."""
        self._output_bias_trainable = bool(trainable)
        self._sync_bias()

    def _sync_bias(self):
        if getattr(self, "bias", None) is not None:
            self.bias.trainable = self.trainable and self._output_bias_trainable

    @property
    def trainable(self):
        return keras.layers.Layer.trainable.fget(self)

    @trainable.setter
    def trainable(self, value):
        # Keras' switch sets every variable; a frozen output bias stays frozen.
        keras.layers.Layer.trainable.fset(self, value)
        self._sync_bias()

    def _initializer(self):
        if self.embeddings_initializer == "truncated_normal_002":
            return keras.initializers.TruncatedNormal(stddev=0.02)
        return keras.initializers.get(self.embeddings_initializer)

    def build(self, inputs_shape, segment_ids_shape=None):
        self.token_embeddings = self.add_weight(
            shape=(self.vocab_size, self.embedding_dim),
            initializer=self._initializer(),
            name="token_embeddings",
        )
        self.position_embeddings = self.add_weight(
            shape=(self.max_length, self.embedding_dim),
            initializer=self._initializer(),
            name="position_embeddings",
        )
        self.segment_embeddings = None
        if self.num_segments:
            self.segment_embeddings = self.add_weight(
                shape=(self.num_segments, self.embedding_dim),
                initializer=self._initializer(),
                name="segment_embeddings",
            )
        self.bias = None
        if self.output_bias:
            # Created trainable (so with the layer's other variables), then frozen if asked.
            self.bias = self.add_weight(shape=(self.vocab_size,), initializer="zeros", name="bias")
            self._sync_bias()

    def call(self, inputs, segment_ids=None, start_index=0, reverse=False):
        where = "TokenAndPositionEmbedding: "
        if reverse:
            if inputs.shape[-1] != self.embedding_dim:
                raise ValueError(
                    f"{where}with `reverse=True`, `inputs` must end in embedding_dim = "
                    f"{self.embedding_dim}; received shape {tuple(inputs.shape)}."
                )
            table = ops.cast(self.token_embeddings, self.compute_dtype)
            logits = ops.matmul(inputs, ops.transpose(table))
            if self.bias is not None:
                logits = logits + ops.cast(self.bias, self.compute_dtype)
            return logits
        check_rank("inputs", inputs, 2, where=where)
        if not keras.backend.standardize_dtype(inputs.dtype).startswith(("int", "uint")):
            raise TypeError(f"{where}`inputs` must be integer token ids; received {inputs.dtype}.")
        length = inputs.shape[1]
        if isinstance(length, int) and isinstance(start_index, int):
            if start_index + length > self.max_length:
                raise ValueError(
                    f"{where}sequences of {length} steps from position {start_index} exceed "
                    f"max_length = {self.max_length}."
                )
        # Tables as tensors: JAX no longer converts a variable inside `take` and `slice`.
        x = ops.take(ops.convert_to_tensor(self.token_embeddings), inputs, axis=0)
        positions = ops.slice(
            ops.convert_to_tensor(self.position_embeddings),
            (start_index, 0),
            (ops.shape(inputs)[1], self.embedding_dim),
        )
        x = x + ops.expand_dims(positions, 0)
        if self.num_segments:
            if segment_ids is None:
                raise ValueError(
                    f"{where}`segment_ids` is required: the layer has {self.num_segments} segments."
                )
            x = x + ops.take(ops.convert_to_tensor(self.segment_embeddings), segment_ids, axis=0)
        return ops.cast(x, self.compute_dtype)

    def compute_output_shape(self, inputs_shape, segment_ids_shape=None):
        # Token ids [B, T] give [B, T, D]; a reverse call's vectors [B, T, D] give logits
        # [B, T, vocab_size]. Declared rather than traced: the slice of the position table is
        # only checked against max_length at run time (JAX cannot compare an unknown length).
        inputs_shape = tuple(inputs_shape)
        if len(inputs_shape) == 3:
            return inputs_shape[:-1] + (self.vocab_size,)
        return inputs_shape + (self.embedding_dim,)

    def compute_mask(self, inputs, mask=None):
        # Keras passes only the first input: float vectors mean a reverse call (no mask).
        if not keras.backend.standardize_dtype(inputs.dtype).startswith(("int", "uint")):
            return None
        return ops.not_equal(inputs, 0)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "max_length": self.max_length,
                "embedding_dim": self.embedding_dim,
                "num_segments": self.num_segments,
                "output_bias": self.output_bias,
                "output_bias_trainable": self._output_bias_trainable,
                "embeddings_initializer": self.embeddings_initializer
                if isinstance(self.embeddings_initializer, str)
                else keras.initializers.serialize(self.embeddings_initializer),
            }
        )
        return config

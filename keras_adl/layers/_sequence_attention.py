"""Private base of the RNN-era attention layers (Bahdanau, Luong): the shared call contract."""

from typing import Any

import keras
from keras import ops

from keras_adl.ops.attention import masked_softmax, weighted_sum
from keras_adl.utils import check_rank, check_rate, check_same_dim, keras_mask_of, require_built


class SequenceAttentionBase(keras.layers.Layer):
    """Call contract shared by `BahdanauAttention` and `LuongAttention`.

    ``query`` is one decoder step ``[B, Dq]`` or all steps ``[B, S, Dq]`` (teacher forcing),
    handled by one code path. ``key`` defaults to ``value``. The key transformation (the part of
    the score that depends only on the memory) is exposed as `precompute_keys` so a decoding
    loop computes it once per source and passes it back as ``processed_keys``.

    Subclasses implement ``_build_scoring(query_shape, key_shape)``, ``_process_keys(key)`` and
    ``_score(query, processed_keys)``.
    """

    def __init__(self, dropout: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.dropout = check_rate("dropout", dropout, where=f"{type(self).__name__}: ")
        self.supports_masking = True

    def build(self, query_shape, value_shape, key_shape=None):
        where = f"{type(self).__name__}: "
        query_shape = check_rank("query", tuple(query_shape), (2, 3), where=where)
        value_shape = check_rank("value", tuple(value_shape), 3, where=where)
        key_shape = (
            value_shape
            if key_shape is None
            else check_rank("key", tuple(key_shape), 3, where=where)
        )
        for name, shape in (("query", query_shape), ("key", key_shape)):
            if shape[-1] is None:
                raise ValueError(f"{where}the last dimension of `{name}` must be known.")
        self._build_scoring(query_shape, key_shape)
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=self.dtype_policy)

    def precompute_keys(self, key):
        """Transforms the memory keys once per source sequence.

        Args:
            key: ``[B, T, Dk]`` (the encoder states when keys and values are the same).

        Returns:
            The processed keys to pass as ``processed_keys`` at every decoding step.
        """
        check_rank("key", key, 3, where=f"{type(self).__name__}: ")
        require_built(self, "precompute_keys")
        return self._process_keys(key)

    def call(
        self,
        query,
        value,
        key=None,
        value_mask=None,
        processed_keys=None,
        return_attention_scores=False,
        training=None,
    ):
        where = f"{type(self).__name__}: "
        query_shape = check_rank("query", query, (2, 3), where=where)
        value_shape = check_rank("value", value, 3, where=where)
        check_same_dim(
            "query", query_shape, 0, "value", value_shape, 0, "The batch sizes", where=where
        )
        if key is not None:
            key_shape = check_rank("key", key, 3, where=where)
            check_same_dim(
                "key", key_shape, 1, "value", value_shape, 1, "The time steps", where=where
            )
        if value_mask is None:
            value_mask = keras_mask_of(value)
        if value_mask is None and key is not None:
            value_mask = keras_mask_of(key)
        if value_mask is not None:
            check_rank("value_mask", value_mask, 2, where=where)
            check_same_dim(
                "value_mask",
                tuple(value_mask.shape),
                1,
                "value",
                value_shape,
                1,
                "The time steps",
                where=where,
            )
        if processed_keys is None:
            processed_keys = self._process_keys(value if key is None else key)
        else:
            keys_shape = check_rank("processed_keys", processed_keys, 3, where=where)
            check_same_dim(
                "processed_keys",
                keys_shape,
                1,
                "value",
                value_shape,
                1,
                "The time steps",
                where=where,
            )

        scores = self._score(query, processed_keys)  # [B, T] or [B, S, T]
        if value_mask is not None and len(query_shape) == 3:
            value_mask = ops.expand_dims(value_mask, 1)
        weights = masked_softmax(scores, value_mask)  # α = softmax_j(e)
        context = weighted_sum(self.dropout_layer(weights, training=training), value)  # Σ α h
        if return_attention_scores:
            return context, weights
        return context

    def compute_mask(self, inputs, previous_mask=None):
        # The output steps are the query steps: the query's mask carries over.
        return previous_mask

    def get_config(self):
        config = super().get_config()
        config["dropout"] = self.dropout
        return config

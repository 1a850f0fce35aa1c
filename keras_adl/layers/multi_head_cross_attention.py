"""Multi-head cross-attention: queries from one sequence, keys and values from another."""

import keras

from keras_adl.layers._multi_head import MultiHeadAttentionBase
from keras_adl.ops.attention import merge_masks
from keras_adl.utils import check_rank, check_same_dim, keras_mask_of, require_built


@keras.saving.register_keras_serializable(package="keras_adl")
class MultiHeadCrossAttention(MultiHeadAttentionBase):
    """Multi-head scaled dot-product attention of a query sequence over a memory sequence.

        Q = X W_q,   [K; V] = M W_kv,   head_h = softmax(Q_h K_hᵀ / sqrt(d_k) + mask) V_h,
        output = [head_1; …; head_H] W_o

    The sibling of `MultiHeadSelfAttention` (same attention op, same config): the query
    projection is its own matrix and the key and value projections of the memory are fused
    into one. Keys and values come from the same memory tensor ``value``, as in the Transformer
    decoder's encoder-decoder attention. The projected memory can be computed once with
    `precompute_key_value` and reused at every decoding step.

    Args:
        num_heads: number of attention heads ``H``.
        key_dim: size of each query/key head; defaults to ``D_query // num_heads``.
        value_dim: size of each value head; defaults to ``key_dim``.
        output_dim: size of the output; defaults to ``D_query``.
        dropout: dropout rate on the attention weights.
        use_bias: whether the projections have biases.
        kernel_initializer: initializer of the projections' kernels.
        bias_initializer: initializer of the projections' biases.
        kernel_regularizer: regularizer of the projections' kernels.
        bias_regularizer: regularizer of the projections' biases.
        **kwargs: standard layer arguments.

    Call arguments:
        query: ``[B, S, D_query]``.
        value: memory ``[B, T, D_value]`` (e.g. encoder outputs); may be omitted when
            ``key_value`` is given.
        query_mask: optional ``[B, S]`` padding mask of the queries (filled from the Keras
            mask of ``query``).
        value_mask: optional ``[B, T]`` padding mask of the memory (filled from the Keras mask
            of ``value``); masked memory steps get exactly zero weight.
        attention_mask: optional boolean mask broadcastable to ``[B, S, T]``.
        return_attention_scores: if ``True``, also return the weights ``[B, H, S, T]``.
        key_value: optional ``(keys, values)`` from `precompute_key_value`; when given,
            ``value`` is not projected again.
        training: whether dropout is active.

    Returns:
        ``output [B, S, output_dim]``, and ``weights [B, H, S, T]`` if requested.

    Example:

    >>> decoder = keras.Input((None, 32))
    >>> encoder = keras.Input((None, 48))
    >>> y = MultiHeadCrossAttention(num_heads=4)(decoder, encoder)
    >>> tuple(y.shape)
    (None, None, 32)

    References:
        Vaswani et al. (2017). Attention Is All You Need, section 3.2.3. arXiv:1706.03762.
    """

    def build(self, query_shape, value_shape=None):
        where = "MultiHeadCrossAttention: "
        query_shape = check_rank("query", tuple(query_shape), 3, where=where)
        key_dim, value_dim, output_dim = self._resolve_dims(query_shape[-1], "query")
        self.query_dense = self._dense(self.num_heads * key_dim, "query")
        self.query_dense.build(query_shape)
        if value_shape is None:
            value_shape = query_shape
        value_shape = check_rank("value", tuple(value_shape), 3, where=where)
        if value_shape[-1] is None:
            raise ValueError(f"{where}the last dimension of `value` must be known.")
        self.key_value_dense = self._dense(self.num_heads * (key_dim + value_dim), "key_value")
        self.key_value_dense.build(value_shape)
        self._build_output(key_dim, value_dim, output_dim)

    def precompute_key_value(self, value):
        """Projects the memory once: returns ``(keys [B, H, T, d_k], values [B, H, T, d_v])``."""
        require_built(self, "precompute_key_value")
        check_rank("value", value, 3, where="MultiHeadCrossAttention: ")
        hk = self.num_heads * self._key_dim
        projected = self.key_value_dense(value)
        keys, values = projected[..., :hk], projected[..., hk:]  # slices: see the self-attention
        return self._split(keys), self._split(values)

    def call(
        self,
        query,
        value=None,
        query_mask=None,
        value_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        key_value=None,
        training=None,
    ):
        where = "MultiHeadCrossAttention: "
        query_shape = check_rank("query", query, 3, where=where)
        if value is None and key_value is None:
            raise ValueError(f"{where}pass the memory as `value` or as precomputed `key_value`.")
        if value is not None:
            value_shape = check_rank("value", value, 3, where=where)
            check_same_dim(
                "query", query_shape, 0, "value", value_shape, 0, "The batch sizes", where=where
            )
            if value_mask is None:
                value_mask = keras_mask_of(value)
        if value_mask is not None:
            # The memory's steps: from `value`, or from the precomputed keys [B, H, T, d].
            memory = tuple(value.shape) if value is not None else (None, key_value[0].shape[2])
            mask_shape = check_rank("value_mask", value_mask, 2, where=where)
            check_same_dim(
                "value_mask", mask_shape, 1, "value", memory, 1, "The time steps", where=where
            )
        if query_mask is None:
            query_mask = keras_mask_of(query)
        keys, values = key_value if key_value is not None else self.precompute_key_value(value)
        query_heads = self._split(self.query_dense(query))
        mask = merge_masks(key_mask=value_mask, attention_mask=attention_mask)
        return self._attend(
            query_heads,
            keys,
            values,
            mask,
            training,
            return_attention_scores,
            query_mask=query_mask,
        )

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

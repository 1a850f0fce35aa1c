"""Multi-head self-attention with one fused QKV projection."""

import keras
from keras import ops

from keras_adl.layers._multi_head import MultiHeadAttentionBase
from keras_adl.ops.attention import causal_mask, merge_masks
from keras_adl.utils import check_rank, keras_mask_of


@keras.saving.register_keras_serializable(package="keras_adl")
class MultiHeadSelfAttention(MultiHeadAttentionBase):
    """Multi-head scaled dot-product self-attention (Vaswani et al. 2017).

        [Q; K; V] = X W_qkv,   head_h = softmax(Q_h K_hᵀ / sqrt(d_k) + mask) V_h,
        output = [head_1; …; head_H] W_o

    The three input projections are one matrix multiplication (``W_qkv`` of shape
    ``[D, H·(2·d_k + d_v)]``). Padding masks from ``Embedding(mask_zero=True)`` are honoured:
    padded keys get exactly zero weight, padded queries get all-zero weights, and the input mask
    is propagated to the output. For incremental (autoregressive) decoding the layer takes a
    fixed-size key/value cache, so each step costs O(T) and compiles to one XLA program.

    Args:
        num_heads: number of attention heads ``H``.
        key_dim: size of each query/key head ``d_k``; defaults to ``D // num_heads`` (``D`` must
            then be divisible by ``num_heads``).
        value_dim: size of each value head ``d_v``; defaults to ``key_dim``.
        output_dim: size of the output projection; defaults to ``D``.
        dropout: dropout rate on the attention weights.
        use_bias: whether the projections have biases.
        kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer: for the
            projections.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, T, D]``.
        mask: optional ``[B, T]`` padding mask (``True`` = real token); filled from the Keras
            mask of ``inputs`` when not given.
        attention_mask: optional boolean mask broadcastable to ``[B, T, T]`` (``True`` = may
            attend), combined with the padding and causal masks.
        use_causal_mask: if ``True``, step ``t`` attends only to steps ``≤ t``.
        return_attention_scores: if ``True``, also return the attention weights.
        cache: optional ``(keys, values)`` tuple of shapes ``[B, H, T_max, d_k]`` and
            ``[B, H, T_max, d_v]`` (see `initial_cache`) for incremental decoding. With a cache
            the inputs are the new steps ``[B, S, D]`` and attention is causal over the cache.
        cache_index: absolute position of the first new step (int or scalar tensor); required
            with ``cache``.
        training: whether dropout is active.

    Returns:
        ``output [B, T, output_dim]``; then ``weights [B, H, T, T]`` if
        ``return_attention_scores``; then the updated ``cache`` if one was given.

    Example:

    >>> tokens = keras.Input((None,), dtype="int32")
    >>> x = keras.layers.Embedding(1000, 64, mask_zero=True)(tokens)
    >>> y, w = MultiHeadSelfAttention(num_heads=4)(x, return_attention_scores=True)
    >>> tuple(y.shape), tuple(w.shape)
    ((None, None, 64), (None, 4, None, None))

    References:
        Vaswani et al. (2017). Attention Is All You Need, section 3.2. arXiv:1706.03762.
    """

    def build(self, input_shape):
        shape = check_rank("inputs", tuple(input_shape), 3, "MultiHeadSelfAttention: ")
        key_dim, value_dim, output_dim = self._resolve_dims(shape[-1], "inputs")
        self.qkv_dense = self._dense(self.num_heads * (2 * key_dim + value_dim), "qkv")
        self.qkv_dense.build(shape)
        self._build_output(key_dim, value_dim, output_dim)

    def initial_cache(self, batch_size, max_length):
        """Zero ``(keys, values)`` cache for `max_length` decoding steps."""
        dtype = self.compute_dtype
        return (
            ops.zeros((batch_size, self.num_heads, max_length, self._key_dim), dtype),
            ops.zeros((batch_size, self.num_heads, max_length, self._value_dim), dtype),
        )

    def call(
        self,
        inputs,
        mask=None,
        attention_mask=None,
        use_causal_mask=False,
        return_attention_scores=False,
        cache=None,
        cache_index=None,
        training=None,
    ):
        check_rank("inputs", inputs, 3, "MultiHeadSelfAttention: ")
        if mask is None:
            mask = keras_mask_of(inputs)
        hk = self.num_heads * self._key_dim
        query, key, value = ops.split(self.qkv_dense(inputs), [hk, 2 * hk], axis=-1)
        query, key, value = self._split(query), self._split(key), self._split(value)

        length = ops.shape(inputs)[1]
        key_mask, causal = mask, None
        if use_causal_mask:
            causal = causal_mask(length, length)
        if cache is not None:
            if cache_index is None:
                raise ValueError(
                    "MultiHeadSelfAttention: `cache_index` is required when `cache` is given."
                )
            index = ops.cast(cache_index, "int32")
            zero = ops.zeros((), "int32")
            start = [zero, zero, index, zero]
            key = ops.slice_update(cache[0], start, ops.cast(key, cache[0].dtype))
            value = ops.slice_update(cache[1], start, ops.cast(value, cache[1].dtype))
            cache = (key, value)
            # Causal over the whole cache; this also hides the slots not written yet.
            key_mask, causal = None, causal_mask(length, ops.shape(key)[2], offset=index)
        combined = merge_masks(mask, key_mask, attention_mask, causal)

        attended = self._attend(query, key, value, combined, training, return_attention_scores)
        results = attended if return_attention_scores else (attended,)
        if cache is not None:
            results += (cache,)
        return results[0] if len(results) == 1 else results

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

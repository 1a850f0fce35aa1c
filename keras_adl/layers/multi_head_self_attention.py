"""Multi-head self-attention with one fused QKV projection."""

import keras
from keras import ops

from keras_adl.layers._multi_head import MultiHeadAttentionBase
from keras_adl.ops.attention import causal_mask, merge_masks
from keras_adl.utils import check_rank, check_same_dim, keras_mask_of, require_built


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
        kernel_initializer: initializer of the projections' kernels.
        bias_initializer: initializer of the projections' biases.
        kernel_regularizer: regularizer of the projections' kernels.
        bias_regularizer: regularizer of the projections' biases.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, T, D]``.
        mask: optional ``[B, T]`` padding mask (``True`` = real token); filled from the Keras
            mask of ``inputs`` when not given.
        attention_mask: optional boolean mask broadcastable to ``[B, T, T]`` (``True`` = may
            attend), combined with the padding and causal masks.
        use_causal_mask: if ``True``, step ``t`` attends only to steps ``≤ t``.
        return_attention_scores: if ``True``, also return the attention weights.
        cache: optional ``(keys, values, valid)`` tuple from `initial_cache` (or a previous
            call) for incremental decoding. With a cache the inputs are the new steps
            ``[B, S, D]``; they are written at ``cache_index`` (their padding mask into
            ``valid``), and attention is causal over the cache and skips padded steps.
        cache_index: absolute position of the first new step (int or scalar tensor); required
            with ``cache``. A Python int that would write past the end of the cache raises; a
            tensor index is not checked (``slice_update`` would clamp it).
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
        shape = check_rank("inputs", tuple(input_shape), 3, where="MultiHeadSelfAttention: ")
        key_dim, value_dim, output_dim = self._resolve_dims(shape[-1], "inputs")
        self.qkv_dense = self._dense(self.num_heads * (2 * key_dim + value_dim), "qkv")
        self.qkv_dense.build(shape)
        self._build_output(key_dim, value_dim, output_dim)

    def initial_cache(self, batch_size, max_length):
        """An empty cache for ``max_length`` decoding steps.

        Args:
            batch_size: ``B``.
            max_length: ``T_max``, the decoding steps the cache holds.

        Returns:
            ``(keys [B, H, T_max, d_k], values [B, H, T_max, d_v], valid [B, T_max])``: zero
            keys and values, and a boolean mask of the slots holding a real (non-padding) step,
            all ``False`` until written.
        """
        require_built(self, "initial_cache")
        dtype = self.compute_dtype
        return (
            ops.zeros((batch_size, self.num_heads, max_length, self._key_dim), dtype),
            ops.zeros((batch_size, self.num_heads, max_length, self._value_dim), dtype),
            ops.zeros((batch_size, max_length), "bool"),
        )

    def _update_cache(self, cache, key, value, mask, cache_index):
        """Writes the new steps' keys, values and validity at ``cache_index``."""
        where = "MultiHeadSelfAttention: "
        if cache_index is None:
            raise ValueError(f"{where}`cache_index` is required when `cache` is given.")
        if not isinstance(cache, (tuple, list)) or len(cache) != 3:
            received = (
                f"a {len(cache)}-tuple"
                if isinstance(cache, (tuple, list))
                else type(cache).__name__
            )
            raise ValueError(
                f"{where}`cache` must be the (keys, values, valid) tuple of `initial_cache`; "
                f"received {received}."
            )
        cached_keys, cached_values, valid = cache
        expected = (key.shape[0], self.num_heads, None, self._key_dim)
        got = tuple(cached_keys.shape)
        mismatch = any(e is not None and g is not None and e != g for e, g in zip(expected, got))
        if len(got) != 4 or mismatch:
            raise ValueError(
                f"{where}`cache` keys must have shape [B, num_heads, T_max, key_dim] = "
                f"{expected}; received {got}."
            )
        steps, capacity = key.shape[2], got[2]
        if isinstance(cache_index, int) and None not in (steps, capacity):
            if cache_index < 0 or cache_index + steps > capacity:
                raise ValueError(
                    f"{where}writing {steps} step(s) at `cache_index`={cache_index} overflows a "
                    f"cache of {capacity} steps; build it with a larger `max_length`."
                )
        index = ops.cast(cache_index, "int32")
        zero = ops.zeros((), "int32")
        start = [zero, zero, index, zero]
        cached_keys = ops.slice_update(cached_keys, start, ops.cast(key, cached_keys.dtype))
        cached_values = ops.slice_update(cached_values, start, ops.cast(value, cached_values.dtype))
        if mask is None:
            mask = ops.ones((ops.shape(key)[0], ops.shape(key)[2]), "bool")
        valid = ops.slice_update(valid, [zero, index], ops.cast(mask, "bool"))
        return cached_keys, cached_values, valid

    def _project(self, inputs):
        """Queries, keys and values ``[B, H, T, d]`` from the fused projection."""
        qkv = self.qkv_dense(inputs)
        heads, key_dim = self.num_heads, self._key_dim
        if key_dim == self._value_dim:
            # One reshape and transpose for all three; its gradient is one stack (slices' are
            # three zero-filled copies: 50 ms of a 330 ms step on PyTorch at T = 512).
            batch, length = ops.shape(inputs)[0], ops.shape(inputs)[1]
            qkv = ops.reshape(qkv, (batch, length, 3, heads, key_dim))
            return ops.unstack(ops.transpose(qkv, (2, 0, 3, 1, 4)), 3, axis=0)
        # Slices, not ops.split: PyTorch's split reads its sizes back from a tensor, which a
        # "meta" tensor cannot do, and Keras then builds the model on real tensors of batch 83.
        hk = heads * key_dim
        parts = qkv[..., :hk], qkv[..., hk : 2 * hk], qkv[..., 2 * hk :]
        return tuple(self._split(part) for part in parts)

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
        where = "MultiHeadSelfAttention: "
        shape = check_rank("inputs", inputs, 3, where=where)
        if mask is None:
            mask = keras_mask_of(inputs)
        if mask is not None:
            check_rank("mask", mask, 2, where=where)
            check_same_dim(
                "mask", tuple(mask.shape), 1, "inputs", shape, 1, "The time steps", where=where
            )
        query, key, value = self._project(inputs)

        key_mask, causal = mask, bool(use_causal_mask)
        if cache is not None:
            cache = self._update_cache(cache, key, value, mask, cache_index)
            key, value, key_mask = cache
            # Causal over the whole cache (this also hides the slots not written yet); padded
            # steps written earlier are hidden by the cache's validity mask.
            steps = causal_mask(ops.shape(inputs)[1], ops.shape(key)[2], offset=cache_index)
            attention_mask = merge_masks(attention_mask=attention_mask, causal=steps)
            causal = False
        combined = merge_masks(key_mask=key_mask, attention_mask=attention_mask)

        attended = self._attend(
            query,
            key,
            value,
            combined,
            training,
            return_attention_scores,
            query_mask=mask,
            causal=causal,
        )
        results = attended if return_attention_scores else (attended,)
        if cache is not None:
            results += (cache,)
        return results[0] if len(results) == 1 else results

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

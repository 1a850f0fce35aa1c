"""Transformer decoder block with key/value caching for incremental decoding."""

import keras

from keras_adl.layers._transformer_block import TransformerBlockBase
from keras_adl.layers.multi_head_cross_attention import MultiHeadCrossAttention
from keras_adl.layers.multi_head_self_attention import MultiHeadSelfAttention
from keras_adl.utils import check_rank, check_same_dim, keras_mask_of, require_built


@keras.saving.register_keras_serializable(package="keras_adl")
class TransformerDecoderBlock(TransformerBlockBase):
    """One Transformer decoder layer: causal self-attention, cross-attention, FFN.

    Post-norm (the paper, ``norm_first=False``)::

        x = LayerNorm(x + Dropout(MultiHeadSelfAttention(x, causal)))
        x = LayerNorm(x + Dropout(MultiHeadCrossAttention(x, encoder_outputs)))
        y = LayerNorm(x + Dropout(FFN(x)))

    Called as ``block(x, encoder_outputs)``; without ``encoder_outputs`` (when the block is
    first built without them) the cross-attention sublayer is absent and the block is a GPT-style
    decoder-only layer.

    Incremental decoding: `initial_cache` gives a fixed-size self-attention cache of
    ``max_length`` steps; each call with ``cache`` and ``cache_index`` writes the new steps'
    keys and values into it and attends causally over it, so one step costs O(T) and the
    compiled step never changes shape. `precompute_cross_attention` projects the encoder outputs
    once for all steps. The cached step-by-step outputs equal the full causal call.

    Args:
        num_heads: number of attention heads; must divide the model dimension unless
            ``key_dim`` is given.
        intermediate_dim: hidden size of the feed-forward network.
        dropout: dropout rate of attention weights, FFN hidden layer and residual branches.
        norm_first: pre-norm instead of post-norm.
        activation: activation of the FFN hidden layer.
        layer_norm_epsilon: epsilon of the layer normalisations.
        key_dim: size of each attention head; defaults to ``D // num_heads``.
        kernel_initializer: initializer of all projections' kernels.
        bias_initializer: initializer of all projections' biases.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: decoder sequence ``[B, S, D]`` (the new steps when decoding with a cache).
        encoder_outputs: optional ``[B, T, D_enc]``.
        padding_mask: optional ``[B, S]`` decoder padding mask (defaults to the Keras mask of
            ``inputs``); with a cache it is recorded for the new steps, so padded steps of a
            prompt written through the cache are never attended to.
        encoder_padding_mask: optional ``[B, T]`` (defaults to the Keras mask of
            ``encoder_outputs``); masked encoder steps get zero cross-attention weight.
        use_causal_mask: causal self-attention (default ``True``; always on with a cache).
        cache: optional self-attention cache from `initial_cache` (or a previous call).
        cache_index: absolute position of the first step of ``inputs``; required with
            ``cache``.
        cross_attention_cache: optional result of `precompute_cross_attention`.
        return_attention_scores: also return a dict of attention weights, ``"self_attention"``
            ``[B, H, S, S or T_max]`` and ``"cross_attention"`` ``[B, H, S, T]``.
        training: whether dropout is active.

    Returns:
        ``output [B, S, D]``; then the weights dict if ``return_attention_scores``; then the
        updated cache if ``cache`` was given.

    Example:

    >>> source = keras.Input((None, 32))
    >>> target = keras.Input((None, 32))
    >>> y = TransformerDecoderBlock(num_heads=4, intermediate_dim=64)(target, source)
    >>> tuple(y.shape)
    (None, None, 32)

    References:
        Vaswani et al. (2017). Attention Is All You Need, section 3.1. arXiv:1706.03762.
    """

    def build(self, inputs_shape, encoder_outputs_shape=None):
        where = "TransformerDecoderBlock: "
        shape = check_rank("inputs", tuple(inputs_shape), 3, where=where)
        self._check_model_dim(shape, "inputs")
        self.self_attention = MultiHeadSelfAttention(
            name="self_attention", **self._attention_kwargs()
        )
        self.self_attention.build(shape)
        self.self_attention_norm = self._norm("self_attention_norm", shape)
        self.cross_attention = None
        if encoder_outputs_shape is not None:
            encoder_shape = check_rank(
                "encoder_outputs", tuple(encoder_outputs_shape), 3, where=where
            )
            self.cross_attention = MultiHeadCrossAttention(
                name="cross_attention", **self._attention_kwargs()
            )
            self.cross_attention.build(shape, encoder_shape)
            self.cross_attention_norm = self._norm("cross_attention_norm", shape)
        self._build_feed_forward(shape)

    def initial_cache(self, batch_size, max_length):
        """An empty self-attention cache for ``max_length`` decoding steps (see
        `MultiHeadSelfAttention.initial_cache`)."""
        require_built(self, "initial_cache")
        return self.self_attention.initial_cache(batch_size, max_length)

    def precompute_cross_attention(self, encoder_outputs):
        """Projected encoder keys and values, to pass as ``cross_attention_cache``."""
        require_built(self, "precompute_cross_attention")
        if self.cross_attention is None:
            raise ValueError(
                "TransformerDecoderBlock: this block was built without `encoder_outputs`, so it "
                "has no cross-attention."
            )
        return self.cross_attention.precompute_key_value(encoder_outputs)

    def _check_call_inputs(self, inputs, encoder_outputs, cross_attention_cache):
        """`call`'s checks: ranks, and encoder outputs exactly when the block cross-attends."""
        where = "TransformerDecoderBlock: "
        shape = check_rank("inputs", inputs, 3, where=where)
        has_memory = encoder_outputs is not None or cross_attention_cache is not None
        if has_memory and self.cross_attention is None:
            raise ValueError(
                f"{where}received `encoder_outputs` but the block was built without them "
                "(decoder-only)."
            )
        if self.cross_attention is not None and not has_memory:
            raise ValueError(
                f"{where}`encoder_outputs` is required: the block has cross-attention."
            )
        if encoder_outputs is not None:
            encoder_shape = check_rank("encoder_outputs", encoder_outputs, 3, where=where)
            check_same_dim(
                "inputs",
                shape,
                0,
                "encoder_outputs",
                encoder_shape,
                0,
                "The batch sizes",
                where=where,
            )

    def call(
        self,
        inputs,
        encoder_outputs=None,
        padding_mask=None,
        encoder_padding_mask=None,
        use_causal_mask=True,
        cache=None,
        cache_index=None,
        cross_attention_cache=None,
        return_attention_scores=False,
        training=None,
    ):
        self._check_call_inputs(inputs, encoder_outputs, cross_attention_cache)
        if padding_mask is None:
            padding_mask = keras_mask_of(inputs)
        if encoder_padding_mask is None and encoder_outputs is not None:
            encoder_padding_mask = keras_mask_of(encoder_outputs)

        scores = {}

        def self_attend(x):
            out = self.self_attention(
                x,
                mask=padding_mask,
                use_causal_mask=use_causal_mask,
                return_attention_scores=return_attention_scores,
                cache=cache,
                cache_index=cache_index,
                training=training,
            )
            if not isinstance(out, tuple):
                return out
            if return_attention_scores:
                scores["self_attention"], out = out[1], (out[0],) + out[2:]
            return out

        x, extras = self._sublayer(inputs, self.self_attention_norm, self_attend, training)
        new_cache = extras[0] if cache is not None else None

        if self.cross_attention is not None:

            def cross_attend(h):
                out = self.cross_attention(
                    h,
                    encoder_outputs,
                    query_mask=padding_mask,
                    value_mask=encoder_padding_mask,
                    key_value=cross_attention_cache,
                    return_attention_scores=return_attention_scores,
                    training=training,
                )
                if return_attention_scores:
                    scores["cross_attention"], out = out[1], out[0]
                return out

            x, _ = self._sublayer(x, self.cross_attention_norm, cross_attend, training)

        x = self._feed_forward(x, training)
        results = (x,)
        if return_attention_scores:
            results += (scores,)
        if cache is not None:
            results += (new_cache,)
        return results[0] if len(results) == 1 else results

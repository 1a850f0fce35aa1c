"""Transformer encoder block."""

import keras

from keras_adl.layers._transformer_block import TransformerBlockBase
from keras_adl.layers.multi_head_self_attention import MultiHeadSelfAttention
from keras_adl.utils import check_rank, keras_mask_of


@keras.saving.register_keras_serializable(package="keras_adl")
class TransformerEncoderBlock(TransformerBlockBase):
    """One Transformer encoder layer: self-attention and a position-wise FFN.

    Post-norm (the paper, ``norm_first=False``)::

        x = LayerNorm(x + Dropout(MultiHeadSelfAttention(x)))
        y = LayerNorm(x + Dropout(W_2 act(W_1 x + b_1) + b_2))

    Pre-norm (``norm_first=True``) normalises the input of each sublayer instead:
    ``x + Dropout(f(LayerNorm(x)))``.

    Args:
        num_heads: number of attention heads; must divide the model dimension unless
            ``key_dim`` is given.
        intermediate_dim: hidden size of the feed-forward network.
        dropout: dropout rate of the attention weights, the FFN hidden layer and the residual
            branches.
        norm_first: pre-norm instead of post-norm.
        activation: activation of the FFN hidden layer.
        layer_norm_epsilon: epsilon of the layer normalisations.
        key_dim: size of each attention head; defaults to ``D // num_heads``.
        kernel_initializer: initializer of all projections' kernels.
        bias_initializer: initializer of all projections' biases.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, T, D]``.
        padding_mask: optional ``[B, T]`` mask (``True`` = real token); defaults to the Keras
            mask of ``inputs``.
        attention_mask: optional boolean mask broadcastable to ``[B, T, T]``.
        use_causal_mask: make the self-attention causal (for decoder-only stacks).
        return_attention_scores: also return the attention weights ``[B, H, T, T]``.
        training: whether dropout is active.

    Returns:
        ``[B, T, D]``, carrying the input mask (and the weights, with
        ``return_attention_scores``).

    Example:

    >>> tokens = keras.Input((None,), dtype="int32")
    >>> x = keras.layers.Embedding(1000, 64, mask_zero=True)(tokens)
    >>> x = TransformerEncoderBlock(num_heads=4, intermediate_dim=128)(x)
    >>> tuple(x.shape)
    (None, None, 64)

    References:
        Vaswani et al. (2017). Attention Is All You Need, section 3.1. arXiv:1706.03762.
    """

    def build(self, input_shape):
        shape = check_rank("inputs", tuple(input_shape), 3, where="TransformerEncoderBlock: ")
        self._check_model_dim(shape, "inputs")
        self.self_attention = MultiHeadSelfAttention(
            name="self_attention", **self._attention_kwargs()
        )
        self.self_attention.build(shape)
        self.self_attention_norm = self._norm("self_attention_norm", shape)
        self._build_feed_forward(shape)

    def call(
        self,
        inputs,
        padding_mask=None,
        attention_mask=None,
        use_causal_mask=False,
        return_attention_scores=False,
        training=None,
        mask=None,
    ):
        check_rank("inputs", inputs, 3, where="TransformerEncoderBlock: ")
        for candidate in (mask, keras_mask_of(inputs)):
            if padding_mask is None:
                padding_mask = candidate

        def attend(x):
            return self.self_attention(
                x,
                mask=padding_mask,
                attention_mask=attention_mask,
                use_causal_mask=use_causal_mask,
                return_attention_scores=return_attention_scores,
                training=training,
            )

        x, extras = self._sublayer(inputs, self.self_attention_norm, attend, training)
        x = self._feed_forward(x, training)
        return (x, extras[0]) if return_attention_scores else x

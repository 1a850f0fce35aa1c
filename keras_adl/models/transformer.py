"""Transformer builders (Vaswani et al. 2017) and cached greedy decoding."""

import keras
from keras import ops

from keras_adl.conventions import PAD
from keras_adl.layers.positional_encoding import PositionalEncoding
from keras_adl.layers.transformer_decoder_block import TransformerDecoderBlock
from keras_adl.layers.transformer_encoder_block import TransformerEncoderBlock
from keras_adl.models._decoding import greedy_loop
from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_positive_ints, check_rate


def _encoder(source, vocab_size, model_dim, num_heads, intermediate_dim, num_layers, dropout):
    x = keras.layers.Embedding(vocab_size, model_dim, mask_zero=True, name="source_embedding")(
        source
    )
    x = PositionalEncoding(name="source_position")(x)
    x = keras.layers.Dropout(dropout, name="source_dropout")(x)
    for i in range(num_layers):
        x = TransformerEncoderBlock(
            num_heads, intermediate_dim, dropout=dropout, name=f"encoder_{i}"
        )(x)
    return x


def transformer_seq2seq(
    source_vocab_size: int,
    target_vocab_size: int,
    model_dim: int = 64,
    num_heads: int = 4,
    intermediate_dim: int = 128,
    num_layers: int = 2,
    dropout: float = 0.0,
    name: str = "transformer_seq2seq",
) -> keras.Model:
    """The Transformer encoder-decoder, teacher-forced (post-norm, sinusoidal positions).

    Ids use 0 for padding (masked throughout); decoding assumes ``<s>=1`` and ``</s>=2``.

    Args:
        source_vocab_size: the source vocabulary size.
        target_vocab_size: the target vocabulary size.
        model_dim: model width ``D`` (divisible by ``num_heads``).
        num_heads: attention heads.
        intermediate_dim: feed-forward hidden size.
        num_layers: encoder and decoder blocks each.
        dropout: dropout rate.
        name: model name.

    Returns:
        A ``keras.Model`` mapping ``{"source": [B, T], "decoder_input": [B, S]}`` to logits
        ``[B, S, target_vocab_size]``, with layers named ``source_embedding``,
        ``source_position``, ``encoder_i``, ``target_embedding``, ``target_position``,
        ``decoder_i`` and ``logits`` (used by `transformer_greedy_decode`).

    Example:

    >>> model = transformer_seq2seq(40, 15, model_dim=16, num_heads=2, intermediate_dim=32)
    >>> tuple(model.output.shape)
    (None, None, 15)

    References:
        Vaswani et al. (2017). Attention Is All You Need. arXiv:1706.03762.
    """
    where = f"{name}: "
    check_positive_ints(
        where=where,
        source_vocab_size=source_vocab_size,
        target_vocab_size=target_vocab_size,
        model_dim=model_dim,
        num_heads=num_heads,
        intermediate_dim=intermediate_dim,
        num_layers=num_layers,
    )
    check_rate("dropout", dropout, where=where)
    source = keras.Input((None,), dtype="int32", name="source")
    decoder_input = keras.Input((None,), dtype="int32", name="decoder_input")
    memory = _encoder(
        source, source_vocab_size, model_dim, num_heads, intermediate_dim, num_layers, dropout
    )
    y = keras.layers.Embedding(
        target_vocab_size, model_dim, mask_zero=True, name="target_embedding"
    )(decoder_input)
    y = PositionalEncoding(name="target_position")(y)
    y = keras.layers.Dropout(dropout, name="target_dropout")(y)
    for i in range(num_layers):
        y = TransformerDecoderBlock(
            num_heads, intermediate_dim, dropout=dropout, name=f"decoder_{i}"
        )(y, memory)
    logits = keras.layers.Dense(target_vocab_size, name="logits")(y)
    return keras.Model([source, decoder_input], logits, name=name)


def transformer_classifier(
    vocab_size: int,
    num_classes: int,
    model_dim: int = 64,
    num_heads: int = 4,
    intermediate_dim: int = 128,
    num_layers: int = 2,
    dropout: float = 0.0,
    name: str = "transformer_classifier",
) -> keras.Model:
    """A Transformer encoder with masked mean pooling and a softmax classifier.

    Args:
        vocab_size: vocabulary size (0 is padding).
        num_classes: number of classes.
        model_dim: as in `transformer_seq2seq`.
        num_heads: as in `transformer_seq2seq`.
        intermediate_dim: as in `transformer_seq2seq`.
        num_layers: as in `transformer_seq2seq`.
        dropout: as in `transformer_seq2seq`.
        name: model name.

    Returns:
        A ``keras.Model`` from token ids ``[B, T]`` to logits ``[B, num_classes]``.

    Example:

    >>> model = transformer_classifier(100, 3, model_dim=16, num_heads=2, intermediate_dim=32)
    >>> tuple(model.output.shape)
    (None, 3)
    """
    where = f"{name}: "
    check_positive_ints(
        where=where,
        vocab_size=vocab_size,
        num_classes=num_classes,
        model_dim=model_dim,
        num_heads=num_heads,
        intermediate_dim=intermediate_dim,
        num_layers=num_layers,
    )
    check_rate("dropout", dropout, where=where)
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    x = _encoder(tokens, vocab_size, model_dim, num_heads, intermediate_dim, num_layers, dropout)
    x = keras.layers.GlobalAveragePooling1D(name="pool")(x)  # mean over unmasked steps
    logits = keras.layers.Dense(num_classes, name="logits")(x)
    return keras.Model(tokens, logits, name=name)


def _count_blocks(model, prefix):
    count = 0
    while any(layer.name == f"{prefix}_{count}" for layer in model.layers):
        count += 1
    return count


def transformer_greedy_decode(
    model: keras.Model, source: Tensor, max_length: int
) -> tuple[Tensor, Tensor, Tensor]:
    """Greedy decoding with key/value caches for a model from `transformer_seq2seq`.

    The encoder runs once; each decoder block gets a fixed-size self-attention cache and its
    cross-attention keys/values precomputed, so each step processes one token (O(T) attention
    per step). A bounded loop with no Python-side state: it traces into a ``tf.function`` /
    SavedModel and compiles with XLA.

    Args:
        model: the training model (or one reloaded from ``.keras``).
        source: ``[B, T]`` int ids, 0-padded.
        max_length: number of target steps (including ``</s>``).

    Returns:
        ``(tokens [B, max_length] int32, attention [B, max_length, T], log_likelihood [B])``;
        ``attention`` is the last decoder block's cross-attention averaged over heads.

    Example:

    >>> model = transformer_seq2seq(40, 15, model_dim=16, num_heads=2, intermediate_dim=32)
    >>> tokens, attention, log_likelihood = transformer_greedy_decode(
    ...     model, ops.ones((2, 7), "int32"), max_length=5)
    >>> tuple(tokens.shape), tuple(attention.shape), tuple(log_likelihood.shape)
    ((2, 5), (2, 5, 7), (2,))
    """
    source = ops.convert_to_tensor(source, "int32")
    source_mask = ops.not_equal(source, PAD)
    memory = model.get_layer("source_position")(model.get_layer("source_embedding")(source))
    for i in range(_count_blocks(model, "encoder")):
        memory = model.get_layer(f"encoder_{i}")(memory, padding_mask=source_mask)
    blocks = [model.get_layer(f"decoder_{i}") for i in range(_count_blocks(model, "decoder"))]
    embedding = model.get_layer("target_embedding")
    position = model.get_layer("target_position")
    project = model.get_layer("logits")
    batch = ops.shape(source)[0]
    cross = tuple(block.precompute_cross_attention(memory) for block in blocks)
    caches = tuple(tuple(block.initial_cache(batch, max_length)) for block in blocks)

    def step(t, token, caches):
        x = position(embedding(ops.expand_dims(token, 1)), start_index=t)
        new_caches = []
        for block, cache, cross_cache in zip(blocks, caches, cross):
            x, scores, cache = block(
                x,
                cross_attention_cache=cross_cache,
                encoder_padding_mask=source_mask,
                cache=cache,
                cache_index=t,
                return_attention_scores=True,
            )
            new_caches.append(tuple(cache))
        weights = ops.mean(ops.cast(scores["cross_attention"], "float32"), axis=1)[:, 0]  # [B, T]
        return project(x[:, 0]), weights, tuple(new_caches)

    return greedy_loop(step, caches, batch, max_length, ops.shape(source)[1])

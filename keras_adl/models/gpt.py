"""GPT-style causal language models (Radford et al. 2018): a decoder-only Transformer with a
tied output embedding, and cached generation (greedy, temperature, top-k, top-p)."""

import keras
from keras import ops

from keras_adl.conventions import END, PAD
from keras_adl.layers.token_and_position_embedding import TokenAndPositionEmbedding
from keras_adl.layers.transformer_decoder_block import TransformerDecoderBlock
from keras_adl.utils import check_positive_int, check_positive_ints, check_rate


def gpt_lm(
    vocab_size,
    sequence_length=128,
    model_dim=128,
    num_heads=4,
    intermediate_dim=512,
    num_layers=2,
    dropout=0.1,
    name="gpt_lm",
):
    """A decoder-only Transformer language model with tied input and output embeddings.

    ``TokenAndPositionEmbedding`` (learned positions) → dropout → ``num_layers`` causal
    `TransformerDecoderBlock` (post-norm, GELU, as GPT-1) → logits ``x · E_tokenᵀ`` (the
    embedding's reverse call: the softmax weights are the input embedding, as in GPT).

    Args:
        vocab_size: ids in use (0 is padding, masked).
        sequence_length: the longest sequence (training windows and generation).
        model_dim, num_heads, intermediate_dim, num_layers: the Transformer's sizes.
        dropout: on the embeddings and inside the blocks.
        name: the model's name.

    Returns:
        A ``keras.Model`` mapping int ``token_ids [B, T]`` (``T ≤ sequence_length``) to
        next-token logits ``[B, T, vocab_size]``, with layers ``embedding`` and
        ``decoder_i`` (used by `generate`).

    Example:

    >>> model = gpt_lm(50, sequence_length=16, model_dim=16, num_heads=2, intermediate_dim=32)
    >>> tuple(model.output.shape)
    (None, None, 50)

    References:
        Radford et al. (2018). Improving Language Understanding by Generative Pre-Training.
    """
    where = f"{name}: "
    check_positive_ints(
        where,
        vocab_size=vocab_size,
        sequence_length=sequence_length,
        model_dim=model_dim,
        num_heads=num_heads,
        intermediate_dim=intermediate_dim,
        num_layers=num_layers,
    )
    check_rate("dropout", dropout, where)
    token_ids = keras.Input((None,), dtype="int32", name="token_ids")
    embedding = TokenAndPositionEmbedding(vocab_size, sequence_length, model_dim, name="embedding")
    x = embedding(token_ids)
    x = keras.layers.Dropout(dropout, name="embedding_dropout")(x)
    for i in range(num_layers):
        x = TransformerDecoderBlock(
            num_heads, intermediate_dim, dropout=dropout, activation="gelu", name=f"decoder_{i}"
        )(x)
    logits = embedding(x, reverse=True)
    return keras.Model(token_ids, logits, name=name)


def compile_lm(model, learning_rate=1e-3, jit_compile=True, optimizer=None):
    """Compiles a `gpt_lm` for next-token prediction: sparse cross-entropy on the logits
    (padding targets, id 0, ignored) with the `Perplexity` metric; Adam with clipping by
    default."""
    from keras_adl.metrics import Perplexity

    model.compile(
        optimizer=optimizer or keras.optimizers.Adam(learning_rate, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=PAD),
        metrics=[Perplexity()],
        jit_compile=jit_compile,
    )
    return model


def _count_decoders(model):
    count = 0
    while any(layer.name == f"decoder_{count}" for layer in model.layers):
        count += 1
    return count


def filter_logits(logits, temperature=1.0, top_k=0, top_p=1.0):
    """Next-token logits ``[B, V]`` reshaped for sampling: divided by ``temperature``, then
    all but the ``top_k`` largest (``0``: no limit) and all outside the smallest set whose
    probability reaches ``top_p`` (nucleus sampling, Holtzman et al. 2020; ``1``: no limit)
    set to a large negative. Every argument may be a tensor (a serving signature's input).

    Example:

    >>> out = filter_logits(ops.array([[3.0, 1.0, 2.0, 0.0]]), top_k=2)
    >>> (ops.convert_to_numpy(out) > -1e8).tolist()
    [[True, False, True, False]]
    """
    logits = ops.cast(logits, "float32")
    temperature = ops.cast(temperature, "float32")
    logits = logits / ops.maximum(temperature, 1e-6)
    vocab = ops.shape(logits)[-1]
    ordered = ops.flip(ops.sort(logits, axis=-1), axis=-1)  # descending
    top_k = ops.cast(top_k, "int32")
    k = ops.where(top_k > 0, ops.minimum(top_k, vocab), vocab)
    kth = ops.take(ordered, ops.reshape(k - 1, (1,)), axis=-1)  # [B, 1]
    logits = ops.where(logits < kth, -1e9, logits)
    ordered = ops.where(ordered < kth, -1e9, ordered)  # still descending: one sort per step
    # Nucleus: keep the tokens whose preceding cumulative probability is below top_p.
    probabilities = ops.softmax(ordered, axis=-1)
    before = ops.cumsum(probabilities, axis=-1) - probabilities
    keep = before < ops.cast(top_p, "float32")
    cutoff = ops.min(ops.where(keep, ordered, 1e9), axis=-1, keepdims=True)
    return ops.where(logits < cutoff, -1e9, logits)


def generate(
    model,
    prompts,
    max_length,
    temperature=0.0,
    top_k=0,
    top_p=1.0,
    seed=None,
    noise=None,
    start_id=END,
):
    """Continues ``prompts`` with a `gpt_lm` model, one cached step per position.

    Every row is fed ``start_id`` (``</s>``, what precedes a document in `lm_windows`) and
    then its prompt; from the end of its own prompt on, a row takes the model's next token
    (prompts of different lengths share one batch and one loop). Each decoder block keeps a
    fixed-size key/value cache, so a step processes one token and the loop is one
    ``keras.ops.while_loop`` of ``max_length`` steps: it traces into a ``tf.function`` /
    SavedModel and compiles with XLA. A row that produces ``</s>`` stops (padding after it).

    Args:
        model: from `gpt_lm` (or reloaded from ``.keras``).
        prompts: int ``[B, P]`` ids, right-padded with 0 (an empty row starts from nothing).
        max_length: positions of the result (prompt included), at most the model's
            ``sequence_length``.
        temperature: ``0`` greedy (argmax); otherwise the softmax temperature of sampling.
        top_k, top_p: sampling filters (`filter_logits`); tensors allowed.
        seed: for sampling, a ``keras.random.SeedGenerator`` (each call draws anew; inside a
            traced function, pass one created outside it) or an int (a generator seeded
            with it is made here, eagerly).
        noise: instead of ``seed``, a function ``(t, shape) -> uniform (0, 1) [B, V]`` giving
            step ``t``'s noise (e.g. stateless draws from a seed input of a serving
            signature). Sampling is Gumbel-max: ``argmax(filtered logits - log(-log u))``.
        start_id: the id fed before the prompt.

    Returns:
        int32 ``[B, max_length]``: each prompt followed by its continuation, 0 after ``</s>``.
    """
    check_positive_int("max_length", max_length, "generate: ")
    embedding = model.get_layer("embedding")
    if max_length > embedding.max_length:
        raise ValueError(
            f"generate: `max_length` must be at most the model's sequence_length = "
            f"{embedding.max_length}; received {max_length}."
        )
    sampling = not (isinstance(temperature, (int, float)) and temperature <= 0)
    if sampling and noise is None:
        if not isinstance(seed, keras.random.SeedGenerator):
            seed = keras.random.SeedGenerator(seed)

        def noise(t, shape):
            return keras.random.uniform(shape, minval=1e-7, maxval=1.0, seed=seed)

    prompts = ops.convert_to_tensor(prompts, "int32")
    if len(prompts.shape) != 2:
        raise ValueError(f"generate: `prompts` must be [batch, length]; received {prompts.shape}.")
    blocks = [model.get_layer(f"decoder_{i}") for i in range(_count_decoders(model))]
    batch = ops.shape(prompts)[0]
    prompt_steps = ops.shape(prompts)[1]
    lengths = ops.sum(ops.cast(ops.not_equal(prompts, PAD), "int32"), axis=1)
    # The prompt, padded (or cut) to max_length: position t of the result.
    width = ops.maximum(max_length - prompt_steps, 0)
    forced = ops.pad(prompts, [[0, 0], [0, width]])[:, :max_length]
    caches = tuple(tuple(block.initial_cache(batch, max_length)) for block in blocks)
    greedy = ops.less_equal(ops.cast(temperature, "float32"), 0.0)

    def body(t, token, caches, done, tokens):
        # Feed the token at input position t (the start token at t = 0); predict output t.
        x = embedding(ops.expand_dims(token, 1), start_index=t)
        new_caches = []
        for block, cache in zip(blocks, caches):
            x, cache = block(x, cache=cache, cache_index=t)
            new_caches.append(tuple(cache))
        logits = ops.cast(embedding(x[:, 0], reverse=True), "float32")
        chosen = ops.cast(ops.argmax(logits, axis=-1), "int32")
        if sampling:
            filtered = filter_logits(logits, temperature, top_k, top_p)
            u = ops.clip(ops.cast(noise(t, ops.shape(logits)), "float32"), 1e-7, 1.0 - 1e-7)
            drawn = ops.argmax(filtered - ops.log(-ops.log(u)), axis=-1)
            chosen = ops.where(greedy, chosen, ops.cast(drawn, "int32"))
        in_prompt = t < lengths
        chosen = ops.where(in_prompt, ops.take(forced, t, axis=1), chosen)
        chosen = ops.where(done, PAD, chosen)
        zero = ops.zeros((), "int32")
        tokens = ops.slice_update(tokens, [zero, t], ops.expand_dims(chosen, 1))
        done = ops.logical_or(done, ops.logical_and(ops.logical_not(in_prompt), chosen == END))
        return t + 1, chosen, tuple(new_caches), done, tokens

    loop = (
        ops.zeros((), "int32"),
        ops.full((batch,), start_id, "int32"),
        caches,
        ops.zeros((batch,), "bool"),
        ops.zeros((batch, max_length), "int32"),
    )
    result = ops.while_loop(lambda t, *_: t < max_length, body, loop, maximum_iterations=max_length)
    return result[-1]

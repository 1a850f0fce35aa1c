"""GPT-style causal language models (Radford et al. 2018): a decoder-only Transformer with a
tied output embedding, cached generation (greedy, temperature, top-k, top-p) and
fine-tuning as a classifier with the auxiliary LM loss."""

from collections.abc import Callable
from typing import Any

import keras
from keras import ops

from keras_adl.conventions import END, PAD
from keras_adl.layers.sequence_pooling import SequencePooling
from keras_adl.layers.token_and_position_embedding import TokenAndPositionEmbedding
from keras_adl.layers.transformer_decoder_block import TransformerDecoderBlock
from keras_adl.metrics import Perplexity
from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_positive_int, check_positive_ints, check_rate, keras_mask_of

__all__ = ["attention_weights", "compile_lm", "compile_classifier"]


def gpt_lm(
    vocab_size: int,
    sequence_length: int = 128,
    model_dim: int = 128,
    num_heads: int = 4,
    intermediate_dim: int = 512,
    num_layers: int = 2,
    dropout: float = 0.1,
    name: str = "gpt_lm",
) -> keras.Model:
    """A decoder-only Transformer language model with tied input and output embeddings.

    ``TokenAndPositionEmbedding`` (learned positions) → dropout → ``num_layers`` causal
    `TransformerDecoderBlock` (post-norm, GELU, as GPT-1) → logits ``x · E_tokenᵀ`` (the
    embedding's reverse call: the softmax weights are the input embedding, as in GPT).

    Args:
        vocab_size: ids in use (0 is padding, masked).
        sequence_length: the longest sequence (training windows and generation).
        model_dim: the Transformer's width ``D``.
        num_heads: the Transformer's attention heads.
        intermediate_dim: the Transformer's feed-forward hidden size.
        num_layers: the Transformer's blocks.
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
        where=where,
        vocab_size=vocab_size,
        sequence_length=sequence_length,
        model_dim=model_dim,
        num_heads=num_heads,
        intermediate_dim=intermediate_dim,
        num_layers=num_layers,
    )
    check_rate("dropout", dropout, where=where)
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


def compile_lm(
    model: keras.Model,
    learning_rate: float = 1e-3,
    jit_compile: bool | str = True,
    optimizer: str | keras.optimizers.Optimizer | None = None,
) -> keras.Model:
    """Compiles a `gpt_lm` for next-token prediction: sparse cross-entropy on the logits
    (padding targets, id 0, ignored) with the `Perplexity` metric; Adam with clipping by
    default.

    Args:
        model: a `gpt_lm`.
        learning_rate: Adam's learning rate when ``optimizer`` is not given.
        jit_compile: passed to ``compile``.
        optimizer: an optimizer to use instead of Adam with ``global_clipnorm=1.0``.

    Returns:
        ``model``, compiled.

    Example:

    >>> model = gpt_lm(50, sequence_length=8, model_dim=16, num_heads=2, intermediate_dim=32)
    >>> model = compile_lm(model, jit_compile=False)
    >>> type(model.optimizer).__name__, model.optimizer.global_clipnorm
    ('Adam', 1.0)
    >>> logs = model.test_on_batch(
    ...     ops.array([[1, 7, 8, 9, 0]]), ops.array([[7, 8, 9, 2, 0]]), return_dict=True)
    >>> sorted(logs)
    ['loss', 'perplexity']
    """
    model.compile(
        optimizer=optimizer or keras.optimizers.Adam(learning_rate, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=PAD),
        metrics=[Perplexity()],
        jit_compile=jit_compile,
    )
    return model


def gpt_classifier(
    lm: keras.Model,
    num_classes: int,
    dropout: float = 0.1,
    lm_loss: bool = True,
    name: str = "gpt_classifier",
) -> keras.Model:
    """GPT-1 fine-tuning: a linear classifier on the last decoder's hidden state at each
    text's last token, optionally keeping the language-model output for the auxiliary loss.

    The text is fed as in pretraining, ``[</s>] pieces [</s>]`` right-padded
    (`keras_adl.data.pretraining.pack_for_lm`); the closing ``</s>`` plays the paper's
    extract token. Radford et al. add the LM loss on the task's texts to the classification
    loss (``L = L_cls + λ·L_lm``, λ = 0.5), which they found helps larger datasets and speeds
    convergence; `compile_classifier` weights it.

    Args:
        lm: a `gpt_lm` (fresh, or pretrained and reloaded from ``.keras``); its layers are
            shared, so fine-tuning trains them.
        num_classes: classes.
        dropout: before the classifier.
        lm_loss: also output the next-token logits (``"lm"``) for the auxiliary loss.
        name: the model's name.

    Returns:
        A ``keras.Model`` from ``token_ids [B, T]`` to ``{"classes": [B, num_classes]}``
        logits (and ``"lm": [B, T, V]`` with ``lm_loss``). A row of padding only gives the
        classifier a zero vector.

    Example:

    >>> lm = gpt_lm(40, sequence_length=12, model_dim=16, num_heads=2, intermediate_dim=32)
    >>> model = gpt_classifier(lm, 3)
    >>> sorted(model.output), tuple(model.output["classes"].shape)
    (['classes', 'lm'], (None, 3))
    """
    where = f"{name}: "
    check_positive_int("num_classes", num_classes, where=where)
    check_rate("dropout", dropout, where=where)
    try:
        last = lm.get_layer(f"decoder_{_count_decoders(lm) - 1}")
        lm.get_layer("embedding")
    except ValueError as error:
        raise ValueError(
            f"{where}`lm` must be a `gpt_lm` model (layers embedding and decoder_i); "
            f"received {getattr(lm, 'name', type(lm).__name__)!r}."
        ) from error
    token_ids = lm.input
    hidden = last.output
    if keras_mask_of(hidden) is None:
        raise ValueError(
            f"{where}`lm`'s last decoder output must carry the padding mask (a `gpt_lm`'s "
            "does); received an output without one."
        )
    # The last real position of each right-padded row (real here, padding or the end next),
    # by a named layer reading the padding mask: `keras.ops` calls here would take automatic
    # names that can clash with those a reloaded `lm`'s operations were saved with.
    pooled = SequencePooling("last", name="last_token")(hidden)
    x = keras.layers.Dropout(dropout, name="classifier_dropout")(pooled)
    outputs = {"classes": keras.layers.Dense(num_classes, name="classifier")(x)}
    if lm_loss:
        outputs["lm"] = lm.output
    return keras.Model(token_ids, outputs, name=name)


def compile_classifier(
    model: keras.Model,
    lm_loss_weight: float = 0.5,
    learning_rate: float = 1e-4,
    jit_compile: bool | str = True,
    optimizer: str | keras.optimizers.Optimizer | None = None,
) -> keras.Model:
    """Compiles a `gpt_classifier`: cross-entropy on the classes (``accuracy`` metric) plus,
    when the model has the ``"lm"`` output, ``lm_loss_weight`` × the next-token loss on the
    same texts (targets: the inputs shifted left, `keras_adl.data.pretraining.pack_for_lm`;
    padding ignored).

    Data: ``(token_ids, {"classes": labels, "lm": next_ids})``.
    """
    if lm_loss_weight < 0:
        raise ValueError(
            f"compile_classifier: `lm_loss_weight` must be >= 0; received {lm_loss_weight}."
        )
    losses = {"classes": keras.losses.SparseCategoricalCrossentropy(from_logits=True)}
    metrics = {"classes": ["accuracy"]}
    weights = {"classes": 1.0}
    if "lm" in model.output:
        losses["lm"] = keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, ignore_class=PAD
        )
        metrics["lm"] = [Perplexity()]
        weights["lm"] = float(lm_loss_weight)
    model.compile(
        optimizer=optimizer or keras.optimizers.Adam(learning_rate, global_clipnorm=1.0),
        loss=losses,
        loss_weights=weights,
        metrics=metrics,
        jit_compile=jit_compile,
    )
    return model


def attention_weights(model: keras.Model, token_ids: Tensor) -> Tensor:
    """Every decoder block's causal self-attention weights for a batch (inference: no
    dropout), e.g. for `keras_adl.recipes.pretraining.plots.plot_attention_heads`.

    Args:
        model: a `gpt_lm` (or a `gpt_classifier` built on one).
        token_ids: int ``[B, T]``, right-padded with 0 (masked).

    Returns:
        ``[num_layers, B, H, T, T]`` weights (zero above the diagonal).

    Example:

    >>> model = gpt_lm(50, sequence_length=8, model_dim=16, num_heads=2, intermediate_dim=32)
    >>> weights = ops.convert_to_numpy(attention_weights(model, [[1, 7, 8, 9, 2, 0]]))
    >>> weights.shape  # 2 blocks, 1 row, 2 heads, 6 queries, 6 keys
    (2, 1, 2, 6, 6)
    >>> first_head = weights[0, 0, 0]
    >>> first_head[:5].sum(axis=-1).round(3).tolist(), float(first_head[0, 1:].sum())
    ([1.0, 1.0, 1.0, 1.0, 1.0], 0.0)
    """
    token_ids = ops.convert_to_tensor(token_ids, "int32")
    count = _count_decoders(model)
    if count == 0:
        raise ValueError(
            f"attention_weights: `model` must be a GPT model (layers embedding and "
            f"decoder_i); received {model.name!r}."
        )
    x = model.get_layer("embedding")(token_ids)
    padding = ops.not_equal(token_ids, PAD)
    weights = []
    for i in range(count):
        x, scores = model.get_layer(f"decoder_{i}")(
            x, padding_mask=padding, return_attention_scores=True, training=False
        )
        weights.append(scores["self_attention"])
    return ops.stack(weights)


def _count_decoders(model):
    count = 0
    while any(layer.name == f"decoder_{count}" for layer in model.layers):
        count += 1
    return count


def filter_logits(
    logits: Tensor,
    temperature: float | Tensor = 1.0,
    top_k: int | Tensor = 0,
    top_p: float | Tensor = 1.0,
) -> Tensor:
    """Next-token logits ``[B, V]`` reshaped for sampling: divided by ``temperature``, then
    all but the ``top_k`` largest (``0``: no limit) and all outside the smallest set whose
    probability reaches ``top_p`` (nucleus sampling, Holtzman et al. 2020; ``1``: no limit)
    set to a large negative. Every argument may be a tensor (a serving signature's input).

    Args:
        logits: ``[B, V]``.
        temperature: divides the logits.
        top_k: the number of largest logits kept (``0``: no limit).
        top_p: the probability the kept logits reach (``1``: no limit).

    Returns:
        float32 ``[B, V]``.

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
    model: keras.Model,
    prompts: Tensor,
    max_length: int,
    temperature: float | Tensor = 0.0,
    top_k: int | Tensor = 0,
    top_p: float | Tensor = 1.0,
    seed: int | keras.random.SeedGenerator | None = None,
    noise: Callable[[Tensor, tuple[Any, ...]], Tensor] | None = None,
    start_id: int = END,
) -> Tensor:
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
        top_k: sampling filter (`filter_logits`); a tensor allowed.
        top_p: sampling filter (`filter_logits`); a tensor allowed.
        seed: for sampling, a ``keras.random.SeedGenerator`` (each call draws anew; inside a
            traced function, pass one created outside it) or an int (a generator seeded
            with it is made here, eagerly).
        noise: instead of ``seed``, a function ``(t, shape) -> uniform (0, 1) [B, V]`` giving
            step ``t``'s noise (e.g. stateless draws from a seed input of a serving
            signature). Sampling is Gumbel-max: ``argmax(filtered logits - log(-log u))``.
        start_id: the id fed before the prompt.

    Returns:
        int32 ``[B, max_length]``: each prompt followed by its continuation, 0 after ``</s>``.

    Example:

    >>> lm = gpt_lm(50, sequence_length=16, model_dim=16, num_heads=2, intermediate_dim=32)
    >>> tokens = ops.convert_to_numpy(generate(lm, [[5, 6, 7, 0], [8, 0, 0, 0]], max_length=6))
    >>> tokens.shape, tokens[0, :3].tolist(), tokens[1, :1].tolist()
    ((2, 6), [5, 6, 7], [8])
    """
    check_positive_int("max_length", max_length, where="generate: ")
    embedding = model.get_layer("embedding")
    if max_length > embedding.max_length:
        raise ValueError(
            f"generate: `max_length` must be at most the model's sequence_length = "
            f"{embedding.max_length}; received {max_length}."
        )
    sampling = not (isinstance(temperature, (int, float)) and temperature <= 0)
    if sampling and noise is None:
        noise = _seeded_noise(seed)
    prompts = ops.convert_to_tensor(prompts, "int32")
    if len(prompts.shape) != 2:
        raise ValueError(f"generate: `prompts` must be [batch, length]; received {prompts.shape}.")
    blocks = [model.get_layer(f"decoder_{i}") for i in range(_count_decoders(model))]
    batch = ops.shape(prompts)[0]
    lengths, forced = _prompt_tokens(prompts, max_length)
    caches = tuple(tuple(block.initial_cache(batch, max_length)) for block in blocks)
    greedy = ops.less_equal(ops.cast(temperature, "float32"), 0.0)

    def body(t, token, caches, done, tokens):
        logits, new_caches = _cached_step(embedding, blocks, token, t, caches)
        chosen = ops.cast(ops.argmax(logits, axis=-1), "int32")
        if sampling:
            drawn = _gumbel_max(logits, t, temperature, top_k, top_p, noise)
            chosen = ops.where(greedy, chosen, drawn)
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


def _prompt_tokens(prompts, max_length):
    """``(lengths [B], forced [B, max_length])``: each prompt's length, and the prompts padded
    (or cut) to ``max_length``, position ``t`` of the result."""
    prompt_steps = ops.shape(prompts)[1]
    lengths = ops.sum(ops.cast(ops.not_equal(prompts, PAD), "int32"), axis=1)
    width = ops.maximum(max_length - prompt_steps, 0)
    forced = ops.pad(prompts, [[0, 0], [0, width]])[:, :max_length]
    return lengths, forced


def _cached_step(embedding, blocks, token, t, caches):
    """Feeds ``token`` at input position ``t`` (the start token at ``t = 0``) through the
    cached blocks: ``(float32 logits [B, V] of output t, the updated caches)``."""
    x = embedding(ops.expand_dims(token, 1), start_index=t)
    new_caches = []
    for block, cache in zip(blocks, caches):
        x, cache = block(x, cache=cache, cache_index=t)
        new_caches.append(tuple(cache))
    return ops.cast(embedding(x[:, 0], reverse=True), "float32"), new_caches


def _seeded_noise(seed):
    """`generate`'s default noise: uniform draws from ``seed`` (a generator, or an int)."""
    if not isinstance(seed, keras.random.SeedGenerator):
        seed = keras.random.SeedGenerator(seed)

    def noise(t, shape):
        return keras.random.uniform(shape, minval=1e-7, maxval=1.0, seed=seed)

    return noise


def _gumbel_max(logits, t, temperature, top_k, top_p, noise):
    """Step ``t``'s sampled tokens (int32 ``[B]``): ``argmax(filtered logits - log(-log u))``."""
    filtered = filter_logits(logits, temperature, top_k, top_p)
    u = ops.clip(ops.cast(noise(t, ops.shape(logits)), "float32"), 1e-7, 1.0 - 1e-7)
    drawn = ops.argmax(filtered - ops.log(-ops.log(u)), axis=-1)
    return ops.cast(drawn, "int32")

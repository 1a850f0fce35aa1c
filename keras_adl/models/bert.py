"""BERT-style encoders (Devlin et al. 2019): the encoder, its masked-LM + next-sentence
pretrainer and a classifier for fine-tuning.

The three models share layers, not copies: `bert_pretrainer` and `bert_classifier` are built
on the encoder's own graph, so training the pretrainer trains the encoder, and
`encoder_of` recovers the encoder from a pretrainer reloaded from ``.keras``. The masked-LM
projection is the token embedding's reverse call (tied weights, `TokenAndPositionEmbedding`).
"""

import keras

from keras_adl.layers.masked_lm_head import MaskedLMHead
from keras_adl.layers.sequence_pooling import SequencePooling
from keras_adl.layers.token_and_position_embedding import TokenAndPositionEmbedding
from keras_adl.layers.transformer_encoder_block import TransformerEncoderBlock
from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_positive_int, check_positive_ints, check_rate, keras_mask_of

__all__ = ["attention_weights", "compile_pretrainer"]


ENCODER_INPUTS = ("token_ids", "segment_ids")


def bert_encoder(
    vocab_size: int,
    sequence_length: int = 128,
    model_dim: int = 128,
    num_heads: int = 2,
    intermediate_dim: int = 512,
    num_layers: int = 2,
    num_segments: int = 2,
    dropout: float = 0.1,
    name: str = "bert_encoder",
) -> keras.Model:
    """The BERT encoder: token + position + segment embeddings, layer norm, dropout, then
    ``num_layers`` post-norm `TransformerEncoderBlock` with GELU, and the pooler (``tanh``
    dense on the ``[CLS]`` vector).

    Args:
        vocab_size: ids in use (a pretraining `WordPieceTokenizer`'s size; 0 is padding).
        sequence_length: the packed length ``L`` (`pack_inputs`).
        model_dim: the Transformer's width ``D``.
        num_heads: the Transformer's attention heads.
        intermediate_dim: the Transformer's feed-forward hidden size.
        num_layers: the Transformer's blocks.
        num_segments: segment ids (2: sentence A and B).
        dropout: on the embeddings and inside the blocks.
        name: the model's name.

    Returns:
        A ``keras.Model`` from ``{"token_ids": [B, L], "segment_ids": [B, L]}`` to
        ``{"sequence_output": [B, L, D], "pooled_output": [B, D]}``; padded positions (id 0)
        are masked in attention.

    Example:

    >>> encoder = bert_encoder(60, sequence_length=16, model_dim=16, intermediate_dim=32)
    >>> tuple(encoder.output["pooled_output"].shape)
    (None, 16)
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
        num_segments=num_segments,
    )
    check_rate("dropout", dropout, where=where)
    token_ids = keras.Input((sequence_length,), dtype="int32", name="token_ids")
    segment_ids = keras.Input((sequence_length,), dtype="int32", name="segment_ids")
    x = TokenAndPositionEmbedding(
        vocab_size,
        sequence_length,
        model_dim,
        num_segments=num_segments,
        output_bias=True,
        name="embedding",
    )(token_ids, segment_ids)
    x = keras.layers.LayerNormalization(epsilon=1e-12, name="embedding_norm")(x)
    x = keras.layers.Dropout(dropout, name="embedding_dropout")(x)
    for i in range(num_layers):
        x = TransformerEncoderBlock(
            num_heads,
            intermediate_dim,
            dropout=dropout,
            activation="gelu",
            layer_norm_epsilon=1e-12,
            name=f"encoder_{i}",
        )(x)
    first = SequencePooling("first", name="cls_state")(x)
    pooled = keras.layers.Dense(model_dim, activation="tanh", name="pooler")(first)
    return keras.Model(
        {"token_ids": token_ids, "segment_ids": segment_ids},
        {"sequence_output": x, "pooled_output": pooled},
        name=name,
    )


def bert_pretrainer(
    encoder: keras.Model,
    max_predictions: int = 20,
    next_sentence: bool = True,
    name: str = "bert_pretrainer",
) -> keras.Model:
    """Masked LM (and next-sentence prediction) on a `bert_encoder`'s graph.

    Args:
        encoder: a `bert_encoder` model.
        max_predictions: ``P``, the masked positions per row (`mask_tokens`).
        next_sentence: add the NSP head (``Dense(2)`` on the pooled output).
        name: the model's name.

    Returns:
        A ``keras.Model`` from the encoder's inputs and ``mask_positions [B, P]`` to
        ``{"mlm": logits [B, P, V]}`` (and ``"nsp": logits [B, 2]``). Train with
        ``SparseCategoricalCrossentropy(from_logits=True)`` on ``mask_ids`` weighted by
        ``mask_weights``, and on the is-next label (`compile_pretrainer` does).

    Example:

    >>> encoder = bert_encoder(60, sequence_length=16, model_dim=16, intermediate_dim=32)
    >>> model = bert_pretrainer(encoder, max_predictions=4)
    >>> sorted(model.output), tuple(model.output["mlm"].shape)
    (['mlm', 'nsp'], (None, 4, 60))
    """
    check_positive_int("max_predictions", max_predictions, where=f"{name}: ")
    mask_positions = keras.Input((max_predictions,), dtype="int32", name="mask_positions")
    head = MaskedLMHead(name="mlm_head")(encoder.output["sequence_output"], mask_positions)
    embedding = encoder.get_layer("embedding")
    embedding.set_output_bias_trainable(True)  # trained here, whatever a classifier set
    outputs = {"mlm": embedding(head, reverse=True)}
    if next_sentence:
        outputs["nsp"] = keras.layers.Dense(2, name="nsp")(encoder.output["pooled_output"])
    inputs = dict(encoder.input)
    inputs["mask_positions"] = mask_positions
    return keras.Model(inputs, outputs, name=name)


def _encoder_blocks(model):
    """The model's ``encoder_i`` blocks in order (empty if none)."""
    blocks = [layer for layer in model.layers if layer.name.startswith("encoder_")]
    return sorted(blocks, key=lambda layer: int(layer.name.split("_")[1]))


def encoder_of(model: keras.Model) -> keras.Model:
    """The encoder inside a `bert_pretrainer` or `bert_classifier` (also one reloaded from
    ``.keras``): a model on the same layers from ``token_ids``/``segment_ids`` to
    ``sequence_output``/``pooled_output``. A pretrainer without next-sentence prediction
    holds no trained pooler; a fresh one is made.

    Args:
        model: a `bert_pretrainer` or `bert_classifier` (or one reloaded from ``.keras``).

    Returns:
        A ``keras.Model`` named ``bert_encoder`` from ``{"token_ids", "segment_ids"}`` to
        ``{"sequence_output", "pooled_output"}``.

    Raises:
        ValueError: ``model`` has not the inputs and ``encoder_i`` layers of a BERT model.

    Example:

    >>> encoder = bert_encoder(60, sequence_length=16, model_dim=16, intermediate_dim=32)
    >>> encoder = encoder_of(bert_pretrainer(encoder, max_predictions=4))
    >>> sorted(encoder.output), tuple(encoder.output["sequence_output"].shape)
    (['pooled_output', 'sequence_output'], (None, 16, 16))
    """
    try:
        inputs = {k: model.input[k] for k in ENCODER_INPUTS}
        last = _encoder_blocks(model)[-1]
    except (AttributeError, IndexError, KeyError, TypeError, ValueError) as error:
        raise ValueError(
            f"encoder_of: `model` must be a BERT pretrainer or classifier (inputs "
            f"{ENCODER_INPUTS}, layers encoder_i); received {model.name!r}."
        ) from error
    if any(layer.name == "pooler" for layer in model.layers):
        pooled = model.get_layer("pooler").output
    else:  # a pretrainer without next-sentence prediction never used (so never saved) it
        first = SequencePooling("first", name="cls_state")(last.output)
        pooled = keras.layers.Dense(last.output.shape[-1], activation="tanh", name="pooler")(first)
    return keras.Model(
        inputs, {"sequence_output": last.output, "pooled_output": pooled}, name="bert_encoder"
    )


def attention_weights(
    model: keras.Model, token_ids: Tensor, segment_ids: Tensor | None = None
) -> Tensor:
    """Every encoder block's self-attention weights for a batch (inference: no dropout), e.g.
    for `keras_adl.recipes.pretraining.plots.plot_attention_heads`.

    Args:
        model: a `bert_encoder`, `bert_pretrainer` or `bert_classifier` (layers
            ``embedding``, ``embedding_norm``, ``encoder_i``).
        token_ids: int ``[B, L]`` packed ids (`pack_inputs`); padding (0) is masked.
        segment_ids: int ``[B, L]``; zeros when omitted.

    Returns:
        ``[num_layers, B, H, L, L]`` weights (rows: queries; each row sums to 1 over the real
        keys).

    Example:

    >>> encoder = bert_encoder(60, sequence_length=8, model_dim=16, intermediate_dim=32)
    >>> weights = attention_weights(encoder, [[1, 7, 8, 2, 0, 0, 0, 0]])
    >>> tuple(weights.shape)  # 2 blocks, 1 row, 2 heads, 8 queries, 8 keys
    (2, 1, 2, 8, 8)
    >>> first_head = keras.ops.convert_to_numpy(weights)[0, 0, 0]
    >>> first_head[:4].sum(axis=-1).round(3).tolist(), float(first_head[:, 4:].sum())
    ([1.0, 1.0, 1.0, 1.0], 0.0)
    """
    token_ids = keras.ops.convert_to_tensor(token_ids, "int32")
    if segment_ids is None:
        segment_ids = keras.ops.zeros_like(token_ids)
    try:
        embedding = model.get_layer("embedding")
        norm = model.get_layer("embedding_norm")
        blocks = _encoder_blocks(model)
    except ValueError as error:
        raise ValueError(
            f"attention_weights: `model` must be a BERT encoder, pretrainer or classifier "
            f"(layers embedding, embedding_norm, encoder_i); received {model.name!r}."
        ) from error
    x = norm(embedding(token_ids, keras.ops.convert_to_tensor(segment_ids, "int32")))
    padding = keras.ops.not_equal(token_ids, 0)
    weights = []
    for block in blocks:
        x, w = block(x, padding_mask=padding, return_attention_scores=True, training=False)
        weights.append(w)
    return keras.ops.stack(weights)


POOLINGS = ("cls", "mean")


def bert_classifier(
    encoder: keras.Model,
    num_classes: int,
    dropout: float = 0.1,
    pooling: str = "cls",
    name: str = "bert_classifier",
) -> keras.Model:
    """Fine-tuning: dropout and a ``Dense(num_classes)`` on a vector of the text.

    The vector is the encoder's pooled ``[CLS]`` output (``pooling="cls"``, BERT's) or the
    mean of its final states over the real (non-padding) positions (``"mean"``, as
    Sentence-BERT pools). The embedding's output bias (used only by the masked-LM
    projection) is frozen, as it gets no gradient here, and stays frozen in a reloaded
    classifier.

    Args:
        encoder: a `bert_encoder` (fresh, or `encoder_of` a pretrainer).
        num_classes: classes.
        dropout: before the classifier.
        pooling: ``"cls"`` or ``"mean"``.
        name: the model's name.

    Returns:
        A ``keras.Model`` from the encoder's inputs to ``[B, num_classes]`` logits.

    Example:

    >>> encoder = bert_encoder(60, sequence_length=16, model_dim=16, intermediate_dim=32)
    >>> model = bert_classifier(encoder, 3)
    >>> sorted(model.input), tuple(model.output.shape)
    (['segment_ids', 'token_ids'], (None, 3))
    """
    where = f"{name}: "
    check_positive_int("num_classes", num_classes, where=where)
    check_rate("dropout", dropout, where=where)
    if pooling not in POOLINGS:
        raise ValueError(f"{where}`pooling` must be one of {POOLINGS}; received {pooling!r}.")
    # Frozen through saving too: a reloaded classifier's optimizer matches the saved one.
    encoder.get_layer("embedding").set_output_bias_trainable(False)
    if pooling == "cls":
        pooled = encoder.output["pooled_output"]
    else:
        # A named layer reading the encoder's padding mask, not `keras.ops` calls: on a
        # reloaded encoder those would take automatic names ("not_equal_1", ...) that can
        # clash with the names its own operations were saved with.
        states = encoder.output["sequence_output"]
        if keras_mask_of(states) is None:
            raise ValueError(
                f"{where}`pooling='mean'` needs the padding mask on the encoder's "
                "`sequence_output` (a `bert_encoder` carries it); received an output without one."
            )
        pooled = SequencePooling("mean", name="mean_pooling")(states)
    x = keras.layers.Dropout(dropout, name="classifier_dropout")(pooled)
    logits = keras.layers.Dense(num_classes, name="classifier")(x)
    return keras.Model(dict(encoder.input), logits, name=name)


def compile_pretrainer(
    model: keras.Model,
    learning_rate: float = 1e-3,
    jit_compile: bool | str = True,
    optimizer: str | keras.optimizers.Optimizer | None = None,
) -> keras.Model:
    """Compiles a `bert_pretrainer`: sparse cross-entropy on the masked tokens (the batch's
    ``mask_weights`` as sample weights, so padded slots count for nothing) and on the NSP
    label, each with its accuracy (``mlm_accuracy`` is the masked-token accuracy).

    Data: ``(inputs, {"mlm": mask_ids, "nsp": is_next}, {"mlm": mask_weights, "nsp": 1})``
    (`keras_adl.data.pretraining.masked_lm_batches`).

    Args:
        model: a `bert_pretrainer` (with or without the NSP head).
        learning_rate: Adam's learning rate when ``optimizer`` is not given.
        jit_compile: passed to ``compile``.
        optimizer: an optimizer to use instead of Adam with ``global_clipnorm=1.0``.

    Returns:
        ``model``, compiled.

    Example:

    >>> encoder = bert_encoder(60, sequence_length=8, model_dim=16, intermediate_dim=32)
    >>> model = compile_pretrainer(bert_pretrainer(encoder, max_predictions=2), jit_compile=False)
    >>> type(model.optimizer).__name__, model.optimizer.global_clipnorm
    ('Adam', 1.0)
    >>> import numpy as np
    >>> inputs = {"token_ids": np.array([[1, 7, 4, 2, 9, 2, 0, 0]]),
    ...           "segment_ids": np.array([[0, 0, 0, 0, 1, 1, 0, 0]]),
    ...           "mask_positions": np.array([[2, 0]])}  # 8 masked ([MASK] is 4); an empty slot
    >>> labels = {"mlm": np.array([[8, 0]]), "nsp": np.array([1])}
    >>> weights = {"mlm": np.array([[1.0, 0.0]]), "nsp": np.array([1.0])}
    >>> logs = model.test_on_batch(inputs, labels, weights, return_dict=True)
    >>> sorted(logs)
    ['loss', 'mlm_accuracy', 'mlm_loss', 'nsp_accuracy', 'nsp_loss']
    """
    outputs = list(model.output)
    # The mean over the weighted slots (not over all P slots, most of them padding for short
    # texts), so the masked-LM loss is the cross-entropy per masked token.
    loss = {
        k: keras.losses.SparseCategoricalCrossentropy(
            from_logits=True, reduction="mean_with_sample_weight"
        )
        for k in outputs
    }
    # Keras prefixes the output's name only when there are several outputs.
    metrics = {
        k: [
            keras.metrics.SparseCategoricalAccuracy(
                name="accuracy" if len(outputs) > 1 else f"{k}_accuracy"
            )
        ]
        for k in outputs
    }
    model.compile(
        optimizer=optimizer or keras.optimizers.Adam(learning_rate, global_clipnorm=1.0),
        loss=loss,
        weighted_metrics=metrics,
        jit_compile=jit_compile,
    )
    return model

"""ELMo (Peters et al. 2018): a character-level bidirectional LSTM language model, its layers
as contextual word vectors, and a classifier reading any such features.

`elmo_bilm` is the biLM: `CharacterCNN` token encoder (character convolutions, highway layers,
projection) shared by a forward and a backward stack of LSTMs (each layer projected back to
the token size, a residual connection between layers, dropout), and one softmax shared by both
directions. The forward LM predicts word ``t + 1`` from words ``≤ t``, the backward LM word
``t - 1`` from words ``≥ t``; `compile_bilm` trains both losses and reports each direction's
perplexity. `elmo_embedder` turns a trained biLM into the model that maps character ids to all
its layers ``[B, L, T, 2·P]`` (layer 0: the token encoder's output for both directions; layer
``j``: the ``j``-th forward and backward states side by side), which
`keras_adl.layers.ELMoEmbedding` mixes for a downstream model (ELMo_k = γ Σ_j s_j h_{k,j}).
"""

from collections.abc import Sequence

import keras
from keras import ops

from keras_adl.conventions import PAD
from keras_adl.layers.character_cnn import CharacterCNN
from keras_adl.metrics import Perplexity
from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_positive_int, check_positive_ints, check_rate

DIRECTIONS = ("forward", "backward")
# A CPU-sized version of ELMo's character CNN (the paper's: widths 1-7, 2,048 filters).
FILTERS = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 128))


@keras.saving.register_keras_serializable(package="keras_adl")
class ReverseSequence(keras.layers.Layer):
    """Reverses each sequence's real steps in place, padding left at the end (the backward
    LSTMs' input).

    ``y[b, t] = x[b, L_b - 1 - t]`` for ``t < L_b`` and ``y[b, t] = x[b, t]`` after, where
    ``L_b`` is the number of unmasked steps of row ``b`` (right padding).

    Unlike ``go_backwards=True``, which reverses the padding too (putting it first), this keeps
    the padding at the end, so the same mask holds before and after and a backward LSTM over
    the reversed sequence starts from the last real step. Applying it twice is the identity.
    Without a mask every step is real.

    Args:
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, T, ...]``.
        mask: ``[B, T]`` (right padding: real steps first).

    Returns:
        ``[B, T, ...]``, with the input's mask.
    """

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.supports_masking = True

    def call(self, inputs, mask=None):
        steps = ops.shape(inputs)[1]
        positions = ops.expand_dims(ops.arange(steps, dtype="int32"), 0)
        if mask is None:
            lengths = ops.full((ops.shape(inputs)[0], 1), steps, dtype="int32")
        else:
            lengths = ops.sum(ops.cast(mask, "int32"), axis=1, keepdims=True)
        index = ops.where(positions < lengths, lengths - 1 - positions, positions)
        for _ in range(len(inputs.shape) - 2):
            index = ops.expand_dims(index, -1)
        return ops.take_along_axis(inputs, ops.broadcast_to(index, ops.shape(inputs)), axis=1)

    def compute_mask(self, inputs, mask=None):
        return mask


def elmo_bilm(
    vocab_size: int,
    max_characters: int = 20,
    num_characters: int = 259,
    character_dim: int = 16,
    filters: Sequence[Sequence[int]] = FILTERS,
    num_highway: int = 2,
    projection_dim: int = 128,
    units: int = 512,
    num_layers: int = 2,
    dropout: float = 0.1,
    name: str = "elmo_bilm",
) -> keras.Model:
    """ELMo's bidirectional language model on character ids.

    Args:
        vocab_size: output words (ids ``0..vocab_size-1``, `keras_adl.conventions`: 0 is
            padding, 3 ``<unk>``); the inputs are characters, so no input word is unknown.
        max_characters: character ids per word (`keras_adl.text.characters`).
        num_characters: the `CharacterCNN`'s size of the character table.
        character_dim: the `CharacterCNN`'s character embedding size.
        filters: the `CharacterCNN`'s ``(width, count)`` filters.
        num_highway: the `CharacterCNN`'s number of highway layers.
        projection_dim: ``P``, the token vectors and each LSTM layer's projected output.
        units: LSTM units per direction and layer.
        num_layers: LSTM layers per direction (ELMo: 2).
        dropout: after the token encoder and after every LSTM layer.
        name: the model's name.

    Returns:
        A ``keras.Model`` mapping int ``characters [B, T, max_characters]`` (all-zero words
        are padding) to ``{"forward": [B, T, V], "backward": [B, T, V]}`` logits: the forward
        LM's scores for word ``t + 1`` and the backward LM's for word ``t - 1``. Its layers are
        named ``token_encoder``, ``{direction}_lstm_{j}``, ``{direction}_projection_{j}``,
        ``reverse_input``, ``reverse_output`` and ``softmax`` (`elmo_embedder` reads them).

    Example:

    >>> bilm = elmo_bilm(30, max_characters=8, filters=((1, 4), (2, 4)), projection_dim=8,
    ...                  units=8)
    >>> {k: tuple(v.shape) for k, v in bilm.output.items()}
    {'forward': (None, None, 30), 'backward': (None, None, 30)}

    References:
        Peters et al. (2018). Deep contextualized word representations. NAACL.
        Józefowicz et al. (2016). Exploring the Limits of Language Modeling (the character
        CNN and the projected LSTMs).
    """
    where = f"{name}: "
    check_positive_ints(
        where=where,
        vocab_size=vocab_size,
        max_characters=max_characters,
        projection_dim=projection_dim,
        units=units,
        num_layers=num_layers,
    )
    check_rate("dropout", dropout, where=where)
    characters = keras.Input((None, max_characters), dtype="int32", name="characters")
    tokens = CharacterCNN(
        num_characters=num_characters,
        character_dim=character_dim,
        filters=filters,
        num_highway=num_highway,
        output_dim=projection_dim,
        name="token_encoder",
    )(characters)
    x = keras.layers.Dropout(dropout, name="token_dropout")(tokens)
    softmax = keras.layers.Dense(vocab_size, name="softmax")
    outputs = {}
    for direction in DIRECTIONS:
        h = x if direction == "forward" else ReverseSequence(name="reverse_input")(x)
        h = _lstm_layers(h, direction, num_layers, units, projection_dim, dropout)
        if direction == "backward":
            h = ReverseSequence(name="reverse_output")(h)
        outputs[direction] = softmax(h)
    return keras.Model(characters, outputs, name=name)


def _lstm_layers(h, direction, num_layers, units, projection_dim, dropout):
    """One direction's stack: projected LSTM layers, residual from the second on, dropout."""
    for j in range(1, num_layers + 1):
        out = keras.layers.LSTM(units, return_sequences=True, name=f"{direction}_lstm_{j}")(h)
        out = keras.layers.Dense(projection_dim, name=f"{direction}_projection_{j}")(out)
        if j > 1:  # the residual connection between LSTM layers
            out = keras.layers.Add(name=f"{direction}_residual_{j}")([out, h])
        h = keras.layers.Dropout(dropout, name=f"{direction}_dropout_{j}")(out)
    return h


def num_bilm_layers(bilm: keras.Model) -> int:
    """The LSTM layers per direction of a model from `elmo_bilm`."""
    count = 0
    while any(layer.name == f"forward_lstm_{count + 1}" for layer in bilm.layers):
        count += 1
    if not count or not any(layer.name == "token_encoder" for layer in bilm.layers):
        raise ValueError(
            f"expected a model from `elmo_bilm` (layers token_encoder, forward_lstm_1, ...); "
            f"received {bilm.name!r} with layers {[layer.name for layer in bilm.layers][:6]}."
        )
    return count


def bilm_states(bilm: keras.Model, characters: Tensor) -> tuple[Tensor, list[Tensor], list[Tensor]]:
    """``(token vectors, forward states, backward states)`` of a trained `elmo_bilm` for
    ``characters`` (inference: no dropout), each state ``[B, T, P]`` with its Keras mask and
    the backward states in input order."""
    tokens = bilm.get_layer("token_encoder")(characters)
    reverse = bilm.get_layer("reverse_input")
    states = {}
    for direction in DIRECTIONS:
        h = tokens if direction == "forward" else reverse(tokens)
        states[direction] = []
        for j in range(1, num_bilm_layers(bilm) + 1):
            out = bilm.get_layer(f"{direction}_lstm_{j}")(h)
            out = bilm.get_layer(f"{direction}_projection_{j}")(out)
            if j > 1:
                out = bilm.get_layer(f"{direction}_residual_{j}")([out, h])
            states[direction].append(out)
            h = out
    states["backward"] = [bilm.get_layer("reverse_output")(s) for s in states["backward"]]
    return tokens, states["forward"], states["backward"]


def elmo_embedder(bilm: keras.Model, name: str = "elmo_embedder") -> keras.Model:
    """The representations ELMo mixes, from a trained biLM: every layer at every word.

    Args:
        bilm: a model from `elmo_bilm` (trained, or reloaded from ``.keras``); the embedder
            shares its layers (and so its weights).
        name: the model's name.

    Returns:
        A ``keras.Model`` mapping ``characters [B, T, C]`` to ``[B, L, T, 2·P]`` float with
        ``L = num_layers + 1``: layer 0 is the token encoder's output twice (``[x; x]``, as in
        ELMo, so every layer has the same size), layer ``j`` is ``[h→_j; h←_j]``. Padded words
        give zeros at layer 0; their other layers are not meaningful (mask them with
        ``characters[..., 0] != 0``, as `keras_adl.layers.ELMoEmbedding` does).

    Example:

    >>> bilm = elmo_bilm(30, max_characters=8, filters=((1, 4), (2, 4)), projection_dim=8,
    ...                  units=8)
    >>> tuple(elmo_embedder(bilm).output.shape)
    (None, 3, None, 16)
    """
    num_bilm_layers(bilm)
    characters = keras.Input(tuple(bilm.input.shape[1:]), dtype="int32", name="characters")
    tokens, forward, backward = bilm_states(bilm, characters)
    layers = [keras.layers.Concatenate(name="layer_0")([tokens, tokens])]
    for j, (f, b) in enumerate(zip(forward, backward), 1):
        layers.append(keras.layers.Concatenate(name=f"layer_{j}")([f, b]))
    stacked = ops.stack(layers, axis=1)
    return keras.Model(characters, stacked, name=name)


def compile_bilm(
    model: keras.Model,
    learning_rate: float = 1e-3,
    jit_compile: bool | str = True,
    optimizer: str | keras.optimizers.Optimizer | None = None,
) -> keras.Model:
    """Compiles an `elmo_bilm`: the forward and backward next-word cross-entropies (padding
    targets, id 0, ignored), summed, and each direction's `Perplexity` (``forward_perplexity``,
    ``backward_perplexity``); Adam with a global-norm clip of 1 by default.

    Args:
        model: an `elmo_bilm`.
        learning_rate: the default optimizer's learning rate.
        jit_compile: as in ``keras.Model.compile``.
        optimizer: replaces the default optimizer.

    Returns:
        ``model``, compiled.

    Example:

    >>> bilm = compile_bilm(elmo_bilm(30, max_characters=8, filters=((1, 4),), projection_dim=8,
    ...                               units=8), jit_compile=False)
    >>> sorted(bilm.loss)
    ['backward', 'forward']
    """
    losses = {
        d: keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=PAD)
        for d in DIRECTIONS
    }
    model.compile(
        optimizer=optimizer or keras.optimizers.Adam(learning_rate, global_clipnorm=1.0),
        loss=losses,
        metrics={d: [Perplexity(name="perplexity")] for d in DIRECTIONS},
        jit_compile=jit_compile,
    )
    return model


def features_classifier(
    inputs: Tensor | list[Tensor] | dict[str, Tensor],
    features: Tensor,
    num_classes: int,
    units: int = 64,
    dropout: float = 0.3,
    name: str = "classifier",
) -> keras.Model:
    """A small classifier on top of per-word features: dropout → bidirectional GRU (its final
    states, masked) → dropout → logits. The downstream model on which word vectors, CoVe and
    ELMo are compared.

    Args:
        inputs: the model's input(s) (Keras inputs).
        features: ``[B, T, D]`` features computed from ``inputs``, with their Keras mask.
        num_classes: classes.
        units: GRU units per direction.
        dropout: on the features and on the sentence vector.
        name: the model's name.

    Returns:
        A ``keras.Model`` from ``inputs`` to logits ``[B, num_classes]``.

    Example:

    >>> ids = keras.Input((None,), dtype="int32")
    >>> vectors = keras.layers.Embedding(100, 16, mask_zero=True)(ids)
    >>> tuple(features_classifier(ids, vectors, num_classes=9).output.shape)
    (None, 9)
    """
    where = f"{name}: "
    check_positive_int("num_classes", num_classes, where=where)
    check_positive_int("units", units, where=where)
    check_rate("dropout", dropout, where=where)
    x = keras.layers.Dropout(dropout, name="feature_dropout")(features)
    x = keras.layers.Bidirectional(keras.layers.GRU(units), name="encoder")(x)
    x = keras.layers.Dropout(dropout, name="sentence_dropout")(x)
    logits = keras.layers.Dense(num_classes, name="logits")(x)
    return keras.Model(inputs, logits, name=name)

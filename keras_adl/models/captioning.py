"""Show, Attend and Tell (Xu et al. 2015): image captioning with soft visual attention.

A CNN turns the image into an annotation grid ``a_1..a_L`` (one ``D``-vector per region); an
LSTM decoder attends over it with Bahdanau attention on ``(a_i, h_{t-1})`` at every step and
reads the next word out of ``[E y_{t-1}; h_t; z_t]`` (the "deep output"). The doubly stochastic
regulariser pushes the attention to cover every region once over a caption.

`show_attend_tell` returns the teacher-forced training model with named layers;
`caption_greedy_decode` and `caption_beam_search` run inference from those layers as bounded
loops (`keras_adl.models._decoding`), so they trace into a ``tf.function`` / SavedModel, and
`caption_attention` gives the teacher-forced attention for alignment figures and plots.

In `show_attend_tell`, the LSTM state is carried from step to step (the TensorFlow tutorial
dropped it, tensorflow#38248). The context ``z_t`` of the read-out is recomputed from the
regulariser's output (the same weights as the decoder's own), which keeps the regulariser on
the path to the logits: a functional model only runs the layers that lead to an output.

The regulariser's weight: Keras averages the cross-entropy over the caption's tokens, while the
authors summed it over each caption; the same ``λ`` therefore weighs about ``S`` times more here
than in the paper (use ``λ / S`` for the paper's balance). With fewer steps ``S`` than regions
``L`` the penalty cannot reach 0 (its floor is ``L (1 − S/L)²``, reached by spreading every
region's total weight evenly), so for ``L ≫ S`` it pulls against sharp attention: on 3-digit
strips (``S = 4``) with the default 4×12 grid (``L = 48``) λ = 1 stalled training (0.29
held-out token accuracy vs 0.87 with λ = 0, 430 steps), while with a 2×6 grid (``L = 12``)
both reach ≈0.96 (`benchmarks/captioning.py`).
"""

from collections.abc import Sequence

import keras
from keras import ops

from keras_adl.conventions import PAD
from keras_adl.layers.attention_rnn_decoder import AttentionRNNDecoder
from keras_adl.layers.doubly_stochastic_regularization import DoublyStochasticRegularization
from keras_adl.models._decoding import beam_loop, greedy_loop, tile_beams
from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_positive_int, check_rate


def _check_shape(name, shape, rank, *, where=""):
    """``shape`` as a tuple of ``rank`` positive integers."""
    if (
        not isinstance(shape, (tuple, list))
        or len(shape) != rank
        or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape)
    ):
        raise ValueError(
            f"{where}`{name}` must be a tuple of {rank} positive integers; received {shape!r}."
        )
    return tuple(shape)


def _check_filters(filters, *, where=""):
    """``encoder_filters`` as a tuple of positive integers."""
    if not isinstance(filters, (tuple, list)) or not all(
        isinstance(f, int) and not isinstance(f, bool) and f > 0 for f in filters
    ):
        raise ValueError(
            f"{where}`encoder_filters` must be a tuple of positive integers; received {filters!r}."
        )
    return tuple(filters)


def _encoder(image_shape, feature_shape, encoder_filters, position_embedding, where):
    """The nested ``encoder`` model: image ``[B, H, W, C]`` (or features ``[B, L, D]``) →
    annotation grid ``[B, L, D]``."""
    if image_shape is not None:
        pooled = (image_shape[0] >> len(encoder_filters), image_shape[1] >> len(encoder_filters))
        if not all(pooled):
            raise ValueError(
                f"{where}`image_shape` {image_shape} is too small for "
                f"{len(encoder_filters)} 2x2 poolings (`encoder_filters`={encoder_filters}); "
                f"height and width must be at least {2 ** len(encoder_filters)}."
            )
        inputs = keras.Input(image_shape, name="image")
        x = inputs
        for i, filters in enumerate(encoder_filters):
            x = keras.layers.Conv2D(
                filters, 3, padding="same", activation="relu", name=f"conv_{i}"
            )(x)
            x = keras.layers.MaxPooling2D(2, name=f"pool_{i}")(x)
        height, width, depth = x.shape[1:]
        # Region l is grid row l // width, column l % width (row-major).
        grid = keras.layers.Reshape((height * width, depth), name="regions")(x)
    else:
        inputs = keras.Input(feature_shape, name="features")
        grid = inputs
    locations, depth = grid.shape[1:]
    if position_embedding:
        # Learned embedding of each region's index 0..L-1, added to its features: without it
        # attention over the regions cannot tell where a region is.
        index = ops.cumsum(ops.ones_like(grid[..., 0], dtype="int32"), axis=1) - 1  # [B, L]
        where_embedding = keras.layers.Embedding(locations, depth, name="region_embedding")
        annotations = keras.layers.Add(name="annotations")([grid, where_embedding(index)])
    else:
        annotations = keras.layers.Identity(name="annotations")(grid)
    return keras.Model(inputs, annotations, name="encoder")


def show_attend_tell(
    vocab_size: int,
    image_shape: Sequence[int] | None = None,
    feature_shape: Sequence[int] | None = None,
    embedding_dim: int = 64,
    units: int = 128,
    attention_units: int | None = None,
    encoder_filters: Sequence[int] = (32, 64),
    position_embedding: bool = True,
    regularization: float = 1.0,
    dropout: float = 0.0,
    name: str = "show_attend_tell",
) -> keras.Model:
    """The soft-attention captioning model of Xu et al. (2015), teacher-forced.

    Encoder: (image mode) a small CNN, ``Conv2D 3×3 'same' + ReLU + 2×2 max-pool`` per entry of
    ``encoder_filters``, whose ``[h, w, D]`` feature map becomes the annotation grid
    ``a ∈ [L = h·w, D]`` (region ``l`` is grid row ``l // w``, column ``l % w``); (feature mode)
    precomputed features ``[L, D]``. With ``position_embedding`` a learned embedding of each
    region's index is added to its features. Decoder (§3.1.2, eq. 4–7):

        h_0, c_0 = tanh(f_init,h(mean_i a_i)), tanh(f_init,c(mean_i a_i))
        α_t = softmax_i(v_aᵀ tanh(W_a h_{t-1} + U_a a_i)),   z_t = Σ_i α_ti a_i
        h_t, c_t = LSTM([E y_{t-1}; z_t], (h_{t-1}, c_{t-1}))
        p(y_t | a, y_{<t}) ∝ exp(L_o tanh(E y_{t-1} + L_h h_t + L_z z_t))

    (the tanh before ``L_o`` is in the authors' code; eq. 7 omits it). The teacher-forced
    attention ``[B, S, L]`` passes through `DoublyStochasticRegularization` masked by the
    caption (``decoder_input != PAD``), which adds ``λ · mean_B Σ_i (1 − Σ_t α_ti)²`` to the
    model's losses (eq. 14; ``fit`` and ``evaluate`` include it); the module docstring has
    notes on the implementation and on choosing ``λ``.

    Tokens: ``PAD=0``, ``START=1``, ``END=2`` (`keras_adl.conventions`). The logits
    carry no Keras mask (the read-out slices ``h_t`` and recomputes ``z_t`` with ops, which
    drop it): train with ``SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)``
    so that padded steps are left out of the loss (the regulariser masks them itself).

    Args:
        vocab_size: vocabulary size, including the three specials.
        image_shape: ``(H, W, C)`` of the images (image mode).
        feature_shape: ``(L, D)`` of precomputed annotation features (feature mode); give
            exactly one of ``image_shape`` and ``feature_shape``.
        embedding_dim: size of the word embedding ``E`` and of the deep output.
        units: LSTM state size.
        attention_units: hidden size of the attention score; defaults to ``units``.
        encoder_filters: filters of the CNN blocks (image mode); each halves ``H`` and ``W``.
        position_embedding: add a learned embedding of each region's index to its features.
        regularization: ``λ`` of the doubly stochastic penalty (0 disables it).
        dropout: dropout rate before the output layer ``L_o``.
        name: model name.

    Returns:
        A ``keras.Model`` mapping ``{"image": [B, H, W, C]}`` (or ``{"features": [B, L, D]}``)
        plus ``{"decoder_input": [B, S]}`` (the caption behind ``START``) to logits
        ``[B, S, vocab_size]``. Its layers are named ``encoder`` (a nested model ending in a
        layer ``annotations``), ``init_h``, ``init_c``, ``embedding``, ``decoder``,
        ``doubly_stochastic``, ``deep_output`` and ``logits``; the decoding functions use them.

    Example:

    >>> model = show_attend_tell(13, image_shape=(16, 48, 1), embedding_dim=8, units=16,
    ...                          encoder_filters=(4, 8))
    >>> tuple(model.output.shape), tuple(model.get_layer("encoder").output.shape)
    ((None, None, 13), (None, 48, 8))
    >>> model = show_attend_tell(13, feature_shape=(10, 6), embedding_dim=8, units=16)
    >>> sorted(model.input)
    ['decoder_input', 'features']

    References:
        Xu et al. (2015). Show, Attend and Tell: Neural Image Caption Generation with Visual
        Attention. arXiv:1502.03044.
    """
    where = f"{name}: "
    _check_sizes(vocab_size, embedding_dim, units, attention_units, where=where)
    image_shape, feature_shape = _check_input_shape(image_shape, feature_shape, where=where)
    encoder_filters, dropout = _check_layers(encoder_filters, dropout, regularization, where=where)
    encoder = _encoder(image_shape, feature_shape, encoder_filters, position_embedding, where)
    return _teacher_forced_model(
        encoder, vocab_size, embedding_dim, units, attention_units, regularization, dropout, name
    )


def _check_sizes(vocab_size, embedding_dim, units, attention_units, *, where=""):
    """Checks `show_attend_tell`'s sizes: positive integers (``attention_units`` or None)."""
    check_positive_int("vocab_size", vocab_size, where=where)
    check_positive_int("embedding_dim", embedding_dim, where=where)
    check_positive_int("units", units, where=where)
    check_positive_int("attention_units", attention_units, allow_none=True, where=where)


def _check_input_shape(image_shape, feature_shape, *, where=""):
    """``(image_shape, feature_shape)`` checked, as tuples: exactly one of them given."""
    if (image_shape is None) == (feature_shape is None):
        raise ValueError(
            f"{where}give exactly one of `image_shape` and `feature_shape`; received "
            f"image_shape={image_shape!r}, feature_shape={feature_shape!r}."
        )
    if image_shape is not None:
        return _check_shape("image_shape", image_shape, 3, where=where), None
    return None, _check_shape("feature_shape", feature_shape, 2, where=where)


def _check_layers(encoder_filters, dropout, regularization, *, where=""):
    """``(encoder_filters, dropout)`` checked (a tuple, a float), and ``regularization`` (``λ``)
    checked to be a non-negative number."""
    encoder_filters = _check_filters(encoder_filters, where=where)
    dropout = check_rate("dropout", dropout, where=where)
    if (
        isinstance(regularization, bool)
        or not isinstance(regularization, (int, float))
        or (not regularization >= 0)
    ):
        raise ValueError(
            f"{where}`regularization` must be a non-negative float; received {regularization!r}."
        )
    return encoder_filters, dropout


def _teacher_forced_model(
    encoder, vocab_size, embedding_dim, units, attention_units, regularization, dropout, name
):
    """`show_attend_tell`'s model around ``encoder``: the attending decoder, the regulariser
    and the deep output, fed the caption behind ``START``."""
    inputs = keras.Input(encoder.input.shape[1:], name=encoder.input.name)
    decoder_input = keras.Input((None,), dtype="int32", name="decoder_input")
    annotations = encoder(inputs)  # a_i, [B, L, D]
    mean = keras.layers.GlobalAveragePooling1D(name="mean_annotation")(annotations)
    initial_state = [
        keras.layers.Dense(units, activation="tanh", name="init_h")(mean),  # h_0
        keras.layers.Dense(units, activation="tanh", name="init_c")(mean),  # c_0
    ]
    embedded = keras.layers.Embedding(vocab_size, embedding_dim, mask_zero=True, name="embedding")(
        decoder_input
    )  # E y_{t-1}
    outputs, attention = AttentionRNNDecoder(
        units,
        attention="bahdanau",
        attention_units=attention_units,
        cell="lstm",
        name="decoder",
    )(embedded, annotations, initial_state=initial_state, return_attention_scores=True)
    caption_mask = ops.not_equal(decoder_input, PAD)
    attention = DoublyStochasticRegularization(regularization, name="doubly_stochastic")(
        attention, mask=caption_mask
    )
    hidden = outputs[..., :units]  # h_t (the decoder's output is [h_t; z_t])
    context = ops.matmul(attention, annotations)  # z_t = Σ_i α_ti a_i
    logits = _deep_output(embedded, hidden, context, embedding_dim, vocab_size, dropout)
    return keras.Model(
        {encoder.input.name: inputs, "decoder_input": decoder_input}, logits, name=name
    )


def _deep_output(embedded, hidden, context, embedding_dim, vocab_size, dropout):
    """The logits ``L_o tanh(E y_{t-1} + L_h h_t + L_z z_t)`` (dropout before ``L_o``)."""
    deep = keras.layers.Concatenate(name="deep_input")([hidden, context])
    deep = keras.layers.Dense(embedding_dim, name="deep_output")(deep)  # L_h h_t + L_z z_t
    deep = keras.layers.Add(name="deep_sum")([embedded, deep])  # + E y_{t-1}
    deep = keras.layers.Activation("tanh", name="deep_tanh")(deep)
    if dropout > 0:
        deep = keras.layers.Dropout(dropout, name="output_dropout")(deep)
    return keras.layers.Dense(vocab_size, name="logits")(deep)  # L_o


def _annotations_and_state(model, images_or_features):
    """Annotation grid ``[B, L, D]`` and the initial LSTM state ``[h_0, c_0]``."""
    annotations = model.get_layer("encoder")(images_or_features)
    mean = model.get_layer("mean_annotation")(annotations)  # mean_i a_i
    state = [model.get_layer("init_h")(mean), model.get_layer("init_c")(mean)]
    return annotations, state


def _step_fn(model, annotations):
    """``step(t, token, state) -> (logits, weights, state)`` of the decoding loops."""
    decoder = model.get_layer("decoder")
    embedding = model.get_layer("embedding")
    deep_output = model.get_layer("deep_output")
    project = model.get_layer("logits")
    keys = decoder.precompute_keys(annotations)  # U_a a_i, once per image
    units = decoder.units

    def step(t, token, state):
        embedded = embedding(token)  # E y_{t-1}
        output, weights, state = decoder.step(embedded, list(state), annotations, keys)
        hidden, context = output[:, :units], output[:, units:]  # h_t, z_t
        deep = embedded + deep_output(ops.concatenate([hidden, context], axis=-1))
        return project(ops.tanh(deep)), weights, tuple(state)

    return step


def _images(model, images_or_features):
    dtype = model.get_layer("encoder").input.dtype
    return ops.convert_to_tensor(images_or_features, dtype)


def caption_greedy_decode(
    model: keras.Model, images_or_features: Tensor, max_length: int
) -> tuple[Tensor, Tensor, Tensor]:
    """Greedy decoding with a model from `show_attend_tell`.

    A bounded loop over ``max_length`` steps (no Python-side state), so it traces into a
    ``tf.function`` / SavedModel and compiles with XLA. After ``END`` a caption emits padding.

    Args:
        model: the training model (or one reloaded from ``.keras``).
        images_or_features: ``[B, H, W, C]`` images (or ``[B, L, D]`` features in feature
            mode).
        max_length: number of steps to produce (including ``END``).

    Returns:
        ``(tokens [B, max_length] int32, attention [B, max_length, L] float32,
        log_likelihood [B])``; the log-likelihood sums the chosen tokens' log-probabilities up
        to and including ``END``.

    Example:

    >>> model = show_attend_tell(13, feature_shape=(10, 6), embedding_dim=8, units=16)
    >>> tokens, attention, score = caption_greedy_decode(model, ops.ones((2, 10, 6)), 4)
    >>> tuple(tokens.shape), tuple(attention.shape), tuple(score.shape)
    ((2, 4), (2, 4, 10), (2,))
    """
    check_positive_int("max_length", max_length, where="caption_greedy_decode: ")
    annotations, state = _annotations_and_state(model, _images(model, images_or_features))
    return greedy_loop(
        _step_fn(model, annotations),
        tuple(state),
        ops.shape(annotations)[0],
        max_length,
        annotations.shape[1],
    )


def caption_beam_search(
    model: keras.Model,
    images_or_features: Tensor,
    max_length: int,
    beam_width: int = 4,
    length_penalty: float = 0.0,
) -> tuple[Tensor, Tensor, Tensor]:
    """Beam search with a model from `show_attend_tell`.

    Keeps the ``beam_width`` best partial captions by summed log-probability (finished ones
    extend with padding at no cost) and picks the best under the GNMT length penalty
    ``((5 + |y|) / 6)^α``, ``α = length_penalty``; ``beam_width=1`` is greedy decoding. A
    bounded loop: it traces into a ``tf.function`` / SavedModel.

    Args:
        model: the training model (or one reloaded from ``.keras``).
        images_or_features: ``[B, H, W, C]`` images (or ``[B, L, D]`` features).
        max_length: number of steps (including ``END``).
        beam_width: number of hypotheses kept per image.
        length_penalty: ``α`` of the length penalty.

    Returns:
        ``(tokens [B, max_length] int32, attention [B, max_length, L] float32,
        log_likelihood [B])`` of the best caption (the log-likelihood without the penalty).

    Example:

    >>> model = show_attend_tell(13, feature_shape=(10, 6), embedding_dim=8, units=16)
    >>> tokens, attention, _ = caption_beam_search(model, ops.ones((2, 10, 6)), 4, beam_width=3)
    >>> tuple(tokens.shape), tuple(attention.shape)
    ((2, 4), (2, 4, 10))
    """
    where = "caption_beam_search: "
    check_positive_int("max_length", max_length, where=where)
    check_positive_int("beam_width", beam_width, where=where)
    annotations, state = _annotations_and_state(model, _images(model, images_or_features))
    batch = ops.shape(annotations)[0]
    # Row b·K + j is beam j of image b.
    annotations = tile_beams(annotations, beam_width)
    state = tuple(tile_beams(s, beam_width) for s in state)
    return beam_loop(
        _step_fn(model, annotations),
        state,
        batch,
        max_length,
        annotations.shape[1],
        beam_width,
        model.get_layer("logits").units,
        length_penalty,
    )


def caption_attention(model: keras.Model, inputs: dict[str, Tensor]) -> Tensor:
    """The teacher-forced attention weights of a model from `show_attend_tell`.

    Args:
        model: the training model.
        inputs: the model's inputs: ``{"image": [B, H, W, C]`` (or ``"features"``)``,
            "decoder_input": [B, S]}``.

    Returns:
        ``[B, S, L]`` float32: step ``t``'s weights over the ``L`` regions (also at padded
        steps, which the regulariser leaves out).

    Example:

    >>> model = show_attend_tell(13, feature_shape=(10, 6), embedding_dim=8, units=16)
    >>> alpha = caption_attention(
    ...     model, {"features": ops.ones((2, 10, 6)), "decoder_input": ops.ones((2, 4), "int32")})
    >>> tuple(alpha.shape), round(float(ops.sum(alpha[0, 0])), 4)
    ((2, 4, 10), 1.0)
    """
    if not isinstance(inputs, dict) or "decoder_input" not in inputs:
        raise TypeError(
            "caption_attention: `inputs` must be a dict with 'decoder_input' and 'image' (or "
            f"'features'); received {type(inputs).__name__}"
            + (f" with keys {sorted(inputs)}." if isinstance(inputs, dict) else ".")
        )
    key = model.get_layer("encoder").input.name
    if key not in inputs:
        raise ValueError(
            f"caption_attention: `inputs` must hold {key!r} for this model; received keys "
            f"{sorted(inputs)}."
        )
    annotations, state = _annotations_and_state(model, _images(model, inputs[key]))
    embedded = model.get_layer("embedding")(ops.convert_to_tensor(inputs["decoder_input"], "int32"))
    _, attention = model.get_layer("decoder")(
        embedded, annotations, initial_state=state, return_attention_scores=True
    )
    return ops.cast(attention, "float32")


def caption_grid_shape(model: keras.Model) -> tuple[int, int]:
    """``(h, w)`` of a `show_attend_tell` image model's annotation grid (``L = h · w``).

    Args:
        model: a `show_attend_tell` model.

    Returns:
        ``(h, w)``, two ints.

    Example:

    >>> model = show_attend_tell(13, image_shape=(16, 48, 1), encoder_filters=(4, 8))
    >>> caption_grid_shape(model)
    (4, 12)
    """
    encoder = model.get_layer("encoder")
    pools = [layer for layer in encoder.layers if isinstance(layer, keras.layers.MaxPooling2D)]
    shape = pools[-1].output.shape if pools else encoder.input.shape
    return int(shape[1]), int(shape[2])

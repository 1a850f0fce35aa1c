"""Pointer network (Vinyals, Fortunato, Jaitly 2015): attention whose softmax over the input
positions is the output."""

import keras
from keras import ops

from keras_adl.conventions import START_VALUE
from keras_adl.layers.attention_rnn_decoder import AttentionRNNDecoder
from keras_adl.layers.bahdanau_attention import BahdanauAttention
from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_positive_int


def pointer_network(
    input_dim: int = 1, units: int = 128, name: str = "pointer_network"
) -> keras.Model:
    """A pointer network, teacher-forced.

    Encoder: a shared input projection and an LSTM over the input elements ``x_j``, giving
    ``e_j``. Decoder: an `AttentionRNNDecoder` (LSTM, with an attention glimpse over ``e``) fed
    the element chosen at the previous step, giving ``d_i``. The output at step ``i`` is the
    pointer distribution

        u_ij = vᵀ tanh(W_1 e_j + W_2 d_i),   p(C_i = j | …) = softmax_j(u_ij)

    computed by a `BahdanauAttention` whose weights are the output (Vinyals et al. 2015, eq. 3).

    Args:
        input_dim: features per input element (1 for numbers to sort).
        units: size of the projection, the LSTMs and the attention.
        name: model name.

    Returns:
        A ``keras.Model`` mapping ``{"inputs": [B, N, input_dim], "decoder_input": [B, S,
        input_dim]}`` (the chosen elements shifted right behind ``START_VALUE``) to pointer
        probabilities ``[B, S, N]``; train with sparse categorical cross-entropy on the target
        positions. Layers are named ``input_projection``, ``encoder``, ``decoder`` and
        ``pointer`` (used by `pointer_decode`).

    Example:

    >>> model = pointer_network(units=16)
    >>> tuple(model.output.shape)
    (None, None, None)

    References:
        Vinyals, Fortunato, Jaitly (2015). Pointer Networks. arXiv:1506.03134.
    """
    where = f"{name}: "
    check_positive_int("input_dim", input_dim, where=where)
    check_positive_int("units", units, where=where)
    inputs = keras.Input((None, input_dim), name="inputs")
    decoder_input = keras.Input((None, input_dim), name="decoder_input")
    project = keras.layers.Dense(units, name="input_projection")
    encoded, h, c = keras.layers.LSTM(
        units, return_sequences=True, return_state=True, name="encoder"
    )(project(inputs))
    decoded = AttentionRNNDecoder(units, cell="lstm", name="decoder")(
        project(decoder_input), encoded, initial_state=[h, c]
    )
    _, pointer = BahdanauAttention(units, name="pointer")(
        decoded, encoded, return_attention_scores=True
    )
    return keras.Model([inputs, decoder_input], pointer, name=name)


def pointer_decode(
    model: keras.Model, inputs: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """Greedy pointer decoding that never points at the same position twice.

    Each step feeds the element chosen at the previous step and masks the positions already
    chosen, so the output is a permutation. A bounded loop (traceable, exportable).

    Args:
        model: a model from `pointer_network`.
        inputs: ``[B, N, input_dim]``.
        mask: optional bool ``[B, N]``, the real elements of each row (rows of different
            lengths padded at the end): the encoder, the glimpse and the pointer skip the rest.

    Returns:
        ``(order [B, N] int32, probabilities [B, N, N])``: a row of ``n`` real elements points
        at them in its first ``n`` steps; its later steps hold -1 and zero probabilities.

    Example:

    >>> model = pointer_network(units=16)
    >>> order, probabilities = pointer_decode(model, ops.ones((2, 5, 1)))
    >>> sorted(ops.convert_to_numpy(order)[0].tolist()), tuple(probabilities.shape)
    ([0, 1, 2, 3, 4], (2, 5, 5))
    >>> mask = ops.convert_to_tensor([[True] * 5, [True, True, False, False, False]])
    >>> order, _ = pointer_decode(model, ops.ones((2, 5, 1)), mask)
    >>> sorted(ops.convert_to_numpy(order)[1].tolist())
    [-1, -1, -1, 0, 1]
    """
    inputs = ops.convert_to_tensor(inputs, "float32")
    batch, length = ops.shape(inputs)[0], ops.shape(inputs)[1]
    mask = ops.ones((batch, length), "bool") if mask is None else ops.cast(mask, "bool")
    project = model.get_layer("input_projection")
    decoder = model.get_layer("decoder")
    pointer = model.get_layer("pointer")
    encoded, h, c = model.get_layer("encoder")(project(inputs), mask=mask)
    keys = decoder.precompute_keys(encoded)
    pointer_keys = pointer.precompute_keys(encoded)
    positions = ops.arange(length, dtype="int32")
    counts = ops.sum(ops.cast(mask, "int32"), axis=1)

    def body(t, previous, states, free, order, probabilities):
        output, _, states = decoder.step(
            project(previous), list(states), encoded, keys, memory_mask=mask
        )
        _, p = pointer(
            output,
            encoded,
            value_mask=free,
            processed_keys=pointer_keys,
            return_attention_scores=True,
        )
        chosen = ops.where(t < counts, ops.cast(ops.argmax(p, axis=-1), "int32"), -1)
        picked = ops.equal(ops.expand_dims(positions, 0), ops.expand_dims(chosen, 1))
        free = ops.logical_and(free, ops.logical_not(picked))
        at = ops.reshape(ops.maximum(chosen, 0), (-1, 1, 1))  # a finished row feeds anything
        previous = ops.take_along_axis(inputs, at, axis=1)[:, 0]
        zero = ops.zeros((), "int32")
        order = ops.slice_update(order, [zero, t], ops.expand_dims(chosen, 1))
        probabilities = ops.slice_update(
            probabilities, [zero, t, zero], ops.expand_dims(ops.cast(p, "float32"), 1)
        )
        return t + 1, previous, tuple(states), free, order, probabilities

    loop = (
        ops.zeros((), "int32"),
        ops.full((batch, inputs.shape[-1]), START_VALUE, "float32"),
        (h, c),
        mask,
        ops.zeros((batch, length), "int32"),
        ops.zeros((batch, length, length), "float32"),
    )
    result = ops.while_loop(lambda t, *_: t < length, body, loop, maximum_iterations=length)
    return result[4], result[5]

"""The bounded decoding loops (greedy and beam search) shared by the sequence models.

Both loops are one ``keras.ops.while_loop`` of ``max_length`` steps with no Python-side state,
so decoding traces into a ``tf.function`` / SavedModel and compiles with XLA. A model plugs in
through ``step(t, token, state) -> (logits, weights, new_state)``: one decoder step fed the
previous token (``<s>`` at ``t = 0``), returning next-token logits, the attention weights of
the step and the new state structure.
"""

import keras
from keras import ops

from keras_adl.conventions import END, PAD, START


def greedy_loop(step, initial_state, batch, max_length, memory_steps):
    """Runs ``max_length`` greedy steps as one ``keras.ops.while_loop`` (traceable, exportable).

    Args:
        step: ``(t, token [B], state) -> (logits [B, V], weights [B, T], new_state)``: one
            decoder step fed the previous token (``<s>`` at ``t = 0``).
        initial_state: the decoder's state structure before the first step.
        batch: batch size (int or scalar tensor).
        max_length: number of steps.
        memory_steps: ``T``, the length of the attended memory.

    Returns:
        ``(tokens [B, max_length] int32, attention [B, max_length, T], log_likelihood [B])``.
        After ``</s>`` a sequence emits padding and its log-likelihood stops growing.
    """

    def body(t, token, state, done, score, tokens, attention):
        logits, weights, state = step(t, token, state)
        log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
        chosen = ops.where(done, PAD, ops.cast(ops.argmax(log_probs, axis=-1), "int32"))
        gained = ops.take_along_axis(log_probs, ops.expand_dims(chosen, -1), axis=-1)[:, 0]
        score = score + ops.where(done, 0.0, gained)
        zero = ops.zeros((), "int32")
        tokens = ops.slice_update(tokens, [zero, t], ops.expand_dims(chosen, 1))
        attention = ops.slice_update(
            attention, [zero, t, zero], ops.expand_dims(ops.cast(weights, "float32"), 1)
        )
        done = ops.logical_or(done, ops.equal(chosen, END))
        return t + 1, chosen, state, done, score, tokens, attention

    loop = (
        ops.zeros((), "int32"),
        ops.full((batch,), START, "int32"),
        initial_state,
        ops.zeros((batch,), "bool"),
        ops.zeros((batch,), "float32"),
        ops.zeros((batch, max_length), "int32"),
        ops.zeros((batch, max_length, memory_steps), "float32"),
    )
    result = ops.while_loop(lambda t, *_: t < max_length, body, loop, maximum_iterations=max_length)
    _, _, _, _, score, tokens, attention = result
    return tokens, attention, score


def tile_beams(x, beam_width):
    """Repeats every example ``beam_width`` times along the batch: row ``b·K + j`` is beam ``j``
    of example ``b`` (``None`` stays ``None``).

    Example:

    >>> ops.convert_to_numpy(tile_beams(ops.array([[1], [2]]), 2))[:, 0].tolist()
    [1, 1, 2, 2]
    """
    return None if x is None else ops.repeat(x, beam_width, axis=0)


def beam_loop(
    step,
    initial_state,
    batch,
    max_length,
    memory_steps,
    beam_width,
    vocab_size,
    length_penalty=0.0,
):
    """Runs ``max_length`` beam-search steps as one ``keras.ops.while_loop``.

    Keeps the ``beam_width`` best partial hypotheses per example by summed log-probability; a
    finished hypothesis (after ``</s>``) only extends with padding at no cost. The final choice
    divides each hypothesis' score by the GNMT length penalty ``((5 + |y|) / 6)^α`` with
    ``α = length_penalty`` (0 = plain log-likelihood). ``beam_width=1`` is greedy decoding.

    (example, beam) pairs are flattened into the batch: row ``b·K + j`` is beam ``j`` of
    example ``b`` (`tile_beams` builds such tensors). Every step reorders the state rows to
    follow the surviving hypotheses' parents.

    Args:
        step: ``(t, token [B·K], state) -> (logits [B·K, V], weights [B·K, T], new_state)``;
            every tensor in the (nested) state structure has ``B·K`` leading rows.
        initial_state: the state structure before the first step, already tiled to ``B·K``
            rows (e.g. with `tile_beams`).
        batch: ``B`` (int or scalar tensor).
        max_length: number of steps.
        memory_steps: ``T``, the length of the attended memory.
        beam_width: ``K``, a Python int.
        vocab_size: ``V``, a Python int.
        length_penalty: ``α`` of the length penalty.

    Returns:
        ``(tokens [B, max_length] int32, attention [B, max_length, T], log_likelihood [B])``
        of the best hypothesis; ``log_likelihood`` is its summed log-probability (without the
        penalty).

    References:
        Wu et al. (2016). Google's Neural Machine Translation System, eq. 14. arXiv:1609.08144.
    """
    k, vocab = beam_width, vocab_size
    offsets = ops.expand_dims(ops.arange(batch, dtype="int32") * k, 1)  # [B, 1]
    pad_only = ops.where(ops.arange(vocab) == PAD, 0.0, -1e9)  # finished beams emit padding

    def body(t, token, state, done, lengths, scores, tokens, attention):
        logits, weights, state = step(t, token, state)
        log_probs = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
        log_probs = ops.reshape(log_probs, (batch, k, vocab))
        log_probs = ops.where(ops.expand_dims(done, -1), pad_only, log_probs)
        total = ops.reshape(ops.expand_dims(scores, -1) + log_probs, (batch, k * vocab))
        scores, flat = ops.top_k(total, k)
        parent = ops.cast(flat // vocab, "int32")  # [B, K]
        chosen = ops.cast(flat % vocab, "int32")
        rows = ops.reshape(parent + offsets, (-1,))  # parent rows in the flat batch
        state = keras.tree.map_structure(lambda s: ops.take(s, rows, axis=0), state)
        done = ops.take_along_axis(done, parent, axis=1)
        lengths = ops.take_along_axis(lengths, parent, axis=1) + ops.cast(
            ops.logical_not(done), "int32"
        )
        zero = ops.zeros((), "int32")
        tokens = ops.take_along_axis(tokens, ops.expand_dims(parent, -1), axis=1)
        tokens = ops.slice_update(tokens, [zero, zero, t], ops.expand_dims(chosen, -1))
        step_weights = ops.reshape(
            ops.take(ops.cast(weights, "float32"), rows, axis=0), (batch, k, 1, memory_steps)
        )
        attention = ops.take_along_axis(attention, ops.reshape(parent, (batch, k, 1, 1)), axis=1)
        attention = ops.slice_update(attention, [zero, zero, t, zero], step_weights)
        done = ops.logical_or(done, ops.equal(chosen, END))
        return (t + 1, ops.reshape(chosen, (-1,)), state, done, lengths, scores, tokens, attention)

    loop = _initial_beams(initial_state, batch, k, max_length, memory_steps)
    result = ops.while_loop(lambda t, *_: t < max_length, body, loop, maximum_iterations=max_length)
    _, _, _, _, lengths, scores, tokens, attention = result
    return _best_hypothesis(lengths, scores, tokens, attention, batch, length_penalty)


def _initial_beams(initial_state, batch, k, max_length, memory_steps):
    """`beam_loop`'s loop variables before the first step: only beam 0 of each example live."""
    first = ops.where(ops.arange(k) == 0, 0.0, -1e9)  # only beam 0 is live at the start
    return (
        ops.zeros((), "int32"),
        ops.full((batch * k,), START, "int32"),
        initial_state,
        ops.zeros((batch, k), "bool"),
        ops.zeros((batch, k), "int32"),
        ops.broadcast_to(first, (batch, k)),
        ops.zeros((batch, k, max_length), "int32"),
        ops.zeros((batch, k, max_length, memory_steps), "float32"),
    )


def _best_hypothesis(lengths, scores, tokens, attention, batch, length_penalty):
    """``(tokens, attention, score)`` of each example's best beam under the length penalty."""
    penalty = ops.power((5.0 + ops.cast(lengths, "float32")) / 6.0, float(length_penalty))
    best = ops.argmax(scores / penalty, axis=-1)  # [B]
    best = ops.cast(ops.expand_dims(best, -1), "int32")
    tokens = ops.take_along_axis(tokens, ops.expand_dims(best, -1), axis=1)[:, 0]
    attention = ops.take_along_axis(attention, ops.reshape(best, (batch, 1, 1, 1)), axis=1)[:, 0]
    score = ops.take_along_axis(scores, best, axis=1)[:, 0]
    return tokens, attention, score

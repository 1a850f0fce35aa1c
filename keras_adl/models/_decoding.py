"""The bounded greedy-decoding loop shared by the sequence-to-sequence models."""

from keras import ops

PAD, START, END = 0, 1, 2


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
    result = ops.while_loop(
        lambda t, *_: t < max_length, body, loop, maximum_iterations=max_length
    )
    _, _, _, _, score, tokens, attention = result
    return tokens, attention, score

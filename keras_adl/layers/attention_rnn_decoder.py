"""Recurrent decoder with attention over a memory (the RNNsearch decoder of Bahdanau et al.)."""

from typing import Any

import keras
from keras import ops

from keras_adl.layers.bahdanau_attention import BahdanauAttention
from keras_adl.layers.luong_attention import LuongAttention
from keras_adl.ops.recurrence import scan_steps
from keras_adl.type_aliases import Initializer
from keras_adl.utils import (
    check_choice,
    check_positive_int,
    check_rank,
    check_same_dim,
    clone_initializer,
    keras_mask_of,
    require_built,
)


@keras.saving.register_keras_serializable(package="keras_adl")
class AttentionRNNDecoder(keras.layers.Layer):
    """An RNN decoder that attends over a memory at every step.

    At decoder step ``i``, with input embedding ``e_i`` (the previous target token under
    teacher forcing), previous state ``s_{i-1}`` and memory (encoder states) ``h``:

        α_i = softmax_j(score(s_{i-1}, h_j)),   c_i = Σ_j α_ij h_j
        s_i = RNN([e_i; c_i], s_{i-1})
        o_i = [s_i; c_i]

    as in Bahdanau et al. (2014), where the context ``c_i`` is computed from the previous
    state and fed to the recurrence. The memory side of the score is projected once per call
    (`precompute_keys`). `step` runs one step, for greedy or beam decoding; the whole-sequence
    call runs the same step in `keras_adl.ops.recurrence.scan_steps`, so it trains with
    ``jit_compile=True``. Keras 3's ``RNN`` has no ``constants`` argument, so the memory cannot
    be handed to an RNN cell; this layer runs the loop itself.

    Args:
        units: size of the recurrent state.
        attention: ``"bahdanau"`` (additive) or ``"luong"`` (multiplicative).
        attention_units: hidden size of the Bahdanau score; defaults to ``units``.
        luong_score: ``"dot"``, ``"general"`` or ``"scaled_dot"`` for Luong attention
            (``"dot"`` needs ``units`` equal to the memory size).
        cell: ``"gru"`` or ``"lstm"``; the attention query is the (first) state ``h``.
        kernel_initializer: the recurrent cell's kernel initializer.
        recurrent_initializer: the recurrent cell's recurrent initializer.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, S, E]`` decoder input embeddings.
        memory: ``[B, T, H]`` encoder states.
        inputs_mask: optional ``[B, S]`` mask of real decoder steps (filled from the Keras mask
            of ``inputs``); propagated to the outputs.
        memory_mask: optional ``[B, T]`` mask of real memory steps (filled from the Keras mask
            of ``memory``); masked steps get zero attention.
        initial_state: optional list of states (``[h]`` for GRU, ``[h, c]`` for LSTM), each
            ``[B, units]``; zeros by default.
        return_attention_scores: also return the attention weights ``[B, S, T]``.
        return_state: also return the list of final states.

    Returns:
        ``outputs [B, S, units + H]``; then ``weights [B, S, T]`` if requested; then the final
        states if requested.

    Example:

    >>> memory = keras.Input((None, 16))
    >>> targets = keras.Input((None, 8))
    >>> outputs, weights = AttentionRNNDecoder(32)(targets, memory, return_attention_scores=True)
    >>> tuple(outputs.shape), tuple(weights.shape)
    ((None, None, 48), (None, None, None))

    References:
        Bahdanau, Cho, Bengio (2014). Neural Machine Translation by Jointly Learning to Align
        and Translate, appendix A.2. arXiv:1409.0473.
    """

    def __init__(
        self,
        units: int,
        attention: str = "bahdanau",
        attention_units: int | None = None,
        luong_score: str = "general",
        cell: str = "gru",
        kernel_initializer: Initializer = "glorot_uniform",
        recurrent_initializer: Initializer = "orthogonal",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = "AttentionRNNDecoder: "
        self.units = check_positive_int("units", units, where=where)
        self.attention = check_choice("attention", attention, ("bahdanau", "luong"), where=where)
        self.attention_units = check_positive_int(
            "attention_units", attention_units, allow_none=True, where=where
        )
        self.luong_score = check_choice(
            "luong_score", luong_score, ("dot", "general", "scaled_dot"), where=where
        )
        self.cell = check_choice("cell", cell, ("gru", "lstm"), where=where)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.recurrent_initializer = keras.initializers.get(recurrent_initializer)
        self.supports_masking = True

    def build(self, inputs_shape, memory_shape):
        where = "AttentionRNNDecoder: "
        inputs_shape = check_rank("inputs", tuple(inputs_shape), 3, where=where)
        memory_shape = check_rank("memory", tuple(memory_shape), 3, where=where)
        if inputs_shape[-1] is None or memory_shape[-1] is None:
            raise ValueError(f"{where}the last dimensions of `inputs` and `memory` must be known.")
        if self.attention == "bahdanau":
            self.attention_layer = BahdanauAttention(
                self.attention_units or self.units, dtype=self.dtype_policy, name="attention"
            )
        else:
            self.attention_layer = LuongAttention(
                self.luong_score, dtype=self.dtype_policy, name="attention"
            )
        self.attention_layer.build((None, self.units), memory_shape)
        cell_class = keras.layers.GRUCell if self.cell == "gru" else keras.layers.LSTMCell
        self.rnn_cell = cell_class(
            self.units,
            kernel_initializer=clone_initializer(self.kernel_initializer),
            recurrent_initializer=clone_initializer(self.recurrent_initializer),
            dtype=self.dtype_policy,
            name="cell",
        )
        self.rnn_cell.build((None, inputs_shape[-1] + memory_shape[-1]))

    def get_initial_state(self, batch_size):
        """Zero states: ``[h]`` for GRU, ``[h, c]`` for LSTM, each ``[batch_size, units]``."""
        count = 1 if self.cell == "gru" else 2
        return [ops.zeros((batch_size, self.units), self.compute_dtype) for _ in range(count)]

    def precompute_keys(self, memory):
        """The memory side of the attention score, computed once per source."""
        require_built(self, "precompute_keys")
        return self.attention_layer.precompute_keys(memory)

    def step(self, inputs, states, memory, processed_keys, memory_mask=None):
        """One decoder step.

        Args:
            inputs: ``[B, E]`` embedding of the previous token.
            states: list of ``[B, units]`` states.
            memory: ``[B, T, H]``.
            processed_keys: from `precompute_keys`.
            memory_mask: optional ``[B, T]``.

        Returns:
            ``(output [B, units + H], weights [B, T], new_states)``.
        """
        context, weights = self.attention_layer(
            states[0],  # s_{i-1}
            memory,
            value_mask=memory_mask,
            processed_keys=processed_keys,
            return_attention_scores=True,
        )
        cell_input = ops.concatenate(
            [inputs, ops.cast(context, inputs.dtype)], axis=-1
        )  # [e_i; c_i]
        output, new_states = self.rnn_cell(cell_input, list(states))
        if not isinstance(new_states, (list, tuple)):
            new_states = [new_states]
        return ops.concatenate([output, context], axis=-1), weights, list(new_states)

    def call(
        self,
        inputs,
        memory,
        inputs_mask=None,
        memory_mask=None,
        initial_state=None,
        return_attention_scores=False,
        return_state=False,
    ):
        where = "AttentionRNNDecoder: "
        shape = check_rank("inputs", inputs, 3, where=where)
        memory_shape = check_rank("memory", memory, 3, where=where)
        check_same_dim(
            "inputs", shape, 0, "memory", memory_shape, 0, "The batch sizes", where=where
        )
        if memory_mask is None:
            memory_mask = keras_mask_of(memory)
        states = initial_state
        if states is None:
            states = self.get_initial_state(ops.shape(inputs)[0])
        states = list(states) if isinstance(states, (list, tuple)) else [states]
        expected = 1 if self.cell == "gru" else 2
        if len(states) != expected:
            raise ValueError(
                f"{where}`initial_state` must be a list of {expected} state(s) for cell="
                f"{self.cell!r}; received {len(states)}."
            )
        keys = self.attention_layer.precompute_keys(memory)

        def body(state, x):
            output, weights, new_state = self.step(x, list(state), memory, keys, memory_mask)
            return tuple(new_state), (output, weights)

        final, (outputs, weights) = scan_steps(
            body,
            tuple(states),
            ops.transpose(inputs, (1, 0, 2)),  # time-major steps
        )
        results = (ops.transpose(outputs, (1, 0, 2)),)
        if return_attention_scores:
            results += (ops.transpose(weights, (1, 0, 2)),)
        if return_state:
            results += (list(final),)
        return results[0] if len(results) == 1 else results

    def compute_mask(self, inputs, previous_mask=None):
        return previous_mask

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "units": self.units,
                "attention": self.attention,
                "attention_units": self.attention_units,
                "luong_score": self.luong_score,
                "cell": self.cell,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
                "recurrent_initializer": keras.initializers.serialize(self.recurrent_initializer),
            }
        )
        return config

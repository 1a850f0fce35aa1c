"""The Neural Turing Machine as a Keras RNN cell."""

from typing import Any

import keras
from keras import ops

from keras_adl.layers._memory_cell import MemoryCellBase, split_sizes
from keras_adl.ops.addressing import (
    circular_shift,
    content_addressing,
    erase_and_write,
    interpolate,
    oneplus,
    read_memory,
    sharpen,
)
from keras_adl.type_aliases import Initializer
from keras_adl.utils import check_positive_int


@keras.saving.register_keras_serializable(package="keras_adl")
class NTMCell(MemoryCellBase):
    """Neural Turing Machine cell (Graves et al. 2014), for ``keras.layers.RNN``.

    Each step, the controller reads ``[x_t; r_{t−1}]`` and emits, per head, a key
    ``k = tanh(·)``, a key strength ``β = softplus(·)``, an interpolation gate ``g = σ(·)``,
    shift weights ``s = softmax(·)`` over ``−R..R`` and a sharpening exponent
    ``γ = 1 + softplus(·)``; write heads also emit an erase vector ``e = σ(·)`` and an add
    vector ``a = tanh(·)``. Each head addresses

        w^c = softmax(β cos(k, M_i))          content           (eq. 5-6)
        w^g = g w^c + (1 − g) w_{t−1}         interpolation     (eq. 7)
        w̃   = w^g ⊛ s                          circular shift    (eq. 8)
        w   = w̃^γ / Σ w̃^γ                     sharpening        (eq. 9)

    the write heads write ``M_t = M_{t−1} ∘ Π_h (1 − w_h e_hᵀ) + Σ_h w_h a_hᵀ`` (eq. 3-4), then
    the read heads read ``r = Σ_i w(i) M_t(i)`` from the new memory (eq. 2). The step's output is
    ``[h_t; r_t]``; put a ``Dense`` on top for the task's outputs.

    Recipe defaults follow Collier & Beel (2018): the controller output and the heads'
    parameters clipped to ±20, bounded keys and add vectors (``tanh``), and a memory
    initialised to the constant 1e-6 (faster to train than a learned or random initial memory).
    Initial read and write weights are one-hot on slot 0, so location-based shifts can move
    from the start; the initial read vectors are the reads of the initial memory. The memory
    math of a step runs in ``float32``, also under ``mixed_float16``; between steps Keras'
    ``RNN`` keeps the states in the compute dtype (``float16`` under ``mixed_float16``). For a
    full-precision memory in a mixed-precision model, give the cell and its ``RNN``
    ``dtype="float32"``.

    Args:
        controller_units: size of the controller output ``h``.
        memory_size: number of memory slots ``N``.
        memory_width: width ``W`` of a slot.
        num_read_heads: number of read heads.
        num_write_heads: number of write heads.
        shift_range: allowed shifts ``−R..R`` (``2R + 1 ≤ N``).
        controller: ``"lstm"`` (``keras.layers.LSTMCell``) or ``"dense"`` (a ReLU layer, the
            feed-forward controller).
        memory_init: ``"constant"`` (1e-6, not trained), ``"learned"`` (trained, initialised from
            a truncated normal with σ = 0.5) or ``"random"`` (that draw, not trained).
        clip_value: clip the controller output and the heads' parameters to ``±clip_value``;
            ``None`` disables.
        return_addressing: append the step's read and write weights to the output (see
            `split_output`), for plots.
        kernel_initializer: of the controller and interface kernels.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, D]``, one step's input.
        states: list of states as from `get_initial_state`; their order is `state_names`
            (controller ``h, c`` for an LSTM controller, then ``memory [B, N·W]``,
            ``read_weights [B, R·N]``, ``write_weights [B, Hw·N]``, ``reads [B, R·W]``).
        training: passed to the controller.

    Returns:
        ``(output, new_states)`` with ``output [B, controller_units + R·W]`` (plus
        ``(R + Hw)·N`` with ``return_addressing=True``).

    Example:

    >>> rnn = keras.layers.RNN(NTMCell(16, memory_size=8, memory_width=4), return_sequences=True)
    >>> tuple(rnn(ops.zeros((2, 5, 3))).shape)
    (2, 5, 20)

    References:
        Graves, Wayne, Danihelka (2014). Neural Turing Machines. arXiv:1410.5401.
        Collier, Beel (2018). Implementing Neural Turing Machines. ICANN. arXiv:1807.08518.
    """

    def __init__(
        self,
        controller_units: int,
        memory_size: int,
        memory_width: int,
        num_read_heads: int = 1,
        num_write_heads: int = 1,
        shift_range: int = 1,
        controller: str = "lstm",
        memory_init: str = "constant",
        clip_value: float | None = 20.0,
        return_addressing: bool = False,
        kernel_initializer: Initializer = "glorot_uniform",
        **kwargs: Any,
    ) -> None:
        super().__init__(
            controller_units=controller_units,
            memory_size=memory_size,
            memory_width=memory_width,
            num_read_heads=num_read_heads,
            num_write_heads=num_write_heads,
            controller=controller,
            memory_init=memory_init,
            clip_value=clip_value,
            return_addressing=return_addressing,
            kernel_initializer=kernel_initializer,
            **kwargs,
        )
        self.shift_range = check_positive_int("shift_range", shift_range, where="NTMCell: ")
        if 2 * self.shift_range + 1 > self.memory_size:
            raise ValueError(
                f"NTMCell: `shift_range` allows {2 * self.shift_range + 1} shifts, more than "
                f"`memory_size` ({self.memory_size}) slots; received shift_range={shift_range}."
            )

    def _head_sizes(self, write):
        w, s = self.memory_width, 2 * self.shift_range + 1
        # key, strength β, gate g, shift weights s, sharpening γ (+ erase e, add a).
        return [w, 1, 1, s, 1] + ([w, w] if write else [])

    def _interface_size(self):
        return self.num_read_heads * sum(self._head_sizes(False)) + self.num_write_heads * sum(
            self._head_sizes(True)
        )

    def _memory_state_shapes(self):
        n, w = self.memory_size, self.memory_width
        return [
            ("memory", (n, w)),
            ("read_weights", (self.num_read_heads, n)),
            ("write_weights", (self.num_write_heads, n)),
            ("reads", (self.num_read_heads, w)),
        ]

    def _initial_memory_states(self, memory, batch_size):
        n = self.memory_size
        one_hot = ops.one_hot(ops.zeros((batch_size,), "int32"), n, dtype="float32")[:, None]
        read_weights = ops.repeat(one_hot, self.num_read_heads, axis=1)
        write_weights = ops.repeat(one_hot, self.num_write_heads, axis=1)
        return [memory, read_weights, write_weights, read_memory(memory, read_weights)]

    def _heads(self, params, num_heads, write):
        """Parses ``[B, H·P]`` head parameters into activated pieces."""
        params = ops.reshape(params, (-1, num_heads, sum(self._head_sizes(write))))
        pieces = split_sizes(params, self._head_sizes(write))
        key, strength, gate, shift, gamma = pieces[:5]
        head = {
            "key": ops.tanh(key),
            "strength": ops.softplus(strength[..., 0]),
            "gate": ops.sigmoid(gate[..., 0]),
            "shift": ops.softmax(shift, axis=-1),
            "gamma": oneplus(gamma[..., 0]),
        }
        if write:
            head["erase"] = ops.sigmoid(pieces[5])
            head["add"] = ops.tanh(pieces[6])
        return head

    @staticmethod
    def _address(memory, previous, head):
        content = content_addressing(memory, head["key"], head["strength"])
        gated = interpolate(content, previous, head["gate"])
        return sharpen(circular_shift(gated, head["shift"]), head["gamma"])

    def _memory_step(self, interface, states):
        read_size = self.num_read_heads * sum(self._head_sizes(False))
        read_head = self._heads(interface[:, :read_size], self.num_read_heads, False)
        write_head = self._heads(interface[:, read_size:], self.num_write_heads, True)
        memory = states["memory"]
        write_weights = self._address(memory, states["write_weights"], write_head)
        memory = erase_and_write(memory, write_weights, write_head["erase"], write_head["add"])
        read_weights = self._address(memory, states["read_weights"], read_head)
        reads = read_memory(memory, read_weights)
        new_states = {
            "memory": memory,
            "read_weights": read_weights,
            "write_weights": write_weights,
            "reads": reads,
        }
        return new_states, reads, read_weights, write_weights

    def get_config(self):
        config = super().get_config()
        config["shift_range"] = self.shift_range
        return config

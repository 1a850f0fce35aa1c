"""What the NTM and DNC cells share: the controller, the initial memory, the state layout."""

from typing import Any

import keras
from keras import ops

from keras_adl.type_aliases import Initializer
from keras_adl.utils import (
    check_choice,
    check_positive_int,
    check_rank,
    clone_initializer,
)

CONTROLLERS = ("lstm", "dense")
MEMORY_INITS = ("constant", "learned", "random")
#: The value of every slot under ``memory_init="constant"`` (Collier & Beel 2018).
CONSTANT_MEMORY = 1e-6


class MemoryCellBase(keras.layers.Layer):
    """Base of `NTMCell` and `DNCCell` (not public).

    A step: the controller reads ``[x_t; r_{t−1}]`` and gives ``h_t`` (clipped to
    ``±clip_value``); a linear layer maps ``h_t`` to the interface vector (the heads'
    parameters, also clipped to ``±clip_value``, which bounds key strengths and ``γ``); the
    subclass's
    `_memory_step` parses it and addresses, writes and reads the memory in ``float32``; the
    output is ``[h_t; r_t]`` (and the addressing weights with ``return_addressing=True``).

    States are a flat list of ``[B, size]`` tensors (Keras' ``RNN`` requires rank-2 states), in
    the order of `state_names`: the controller's states, then the memory and addressing state.
    `unpack_states` reshapes them into a dict.
    """

    def __init__(
        self,
        controller_units: int,
        memory_size: int,
        memory_width: int,
        num_read_heads: int,
        num_write_heads: int,
        controller: str = "lstm",
        memory_init: str = "constant",
        clip_value: float | None = 20.0,
        return_addressing: bool = False,
        kernel_initializer: Initializer = "glorot_uniform",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = f"{type(self).__name__}: "
        self.controller_units = check_positive_int(
            "controller_units", controller_units, where=where
        )
        self.memory_size = check_positive_int("memory_size", memory_size, where=where)
        self.memory_width = check_positive_int("memory_width", memory_width, where=where)
        self.num_read_heads = check_positive_int("num_read_heads", num_read_heads, where=where)
        self.num_write_heads = check_positive_int("num_write_heads", num_write_heads, where=where)
        self.controller = check_choice("controller", controller, CONTROLLERS, where=where)
        self.memory_init = check_choice("memory_init", memory_init, MEMORY_INITS, where=where)
        if clip_value is not None and (
            isinstance(clip_value, bool)
            or not isinstance(clip_value, (int, float))
            or clip_value <= 0
        ):
            raise ValueError(
                f"{where}`clip_value` must be a positive number or None; received {clip_value!r}."
            )
        self.clip_value = None if clip_value is None else float(clip_value)
        self.return_addressing = bool(return_addressing)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    # Layout -----------------------------------------------------------------------------------

    def _memory_state_shapes(self):
        """``[(name, per-example shape)]`` of the memory and addressing states."""
        raise NotImplementedError

    def _interface_size(self):
        raise NotImplementedError

    def _controller_state_shapes(self):
        if self.controller == "lstm":
            return [
                ("controller_h", (self.controller_units,)),
                ("controller_c", (self.controller_units,)),
            ]
        return []

    def _state_shapes(self):
        return self._controller_state_shapes() + self._memory_state_shapes()

    @property
    def state_names(self):
        """The name of each state, in order."""
        return [name for name, _ in self._state_shapes()]

    @property
    def state_size(self):
        sizes = []
        for _, shape in self._state_shapes():
            size = 1
            for d in shape:
                size *= d
            sizes.append(size)
        return sizes

    @property
    def output_size(self):
        size = self.controller_units + self.num_read_heads * self.memory_width
        if self.return_addressing:
            size += (self.num_read_heads + self.num_write_heads) * self.memory_size
        return size

    def unpack_states(self, states):
        """The flat states as a dict of name → ``[B, *shape]`` tensors.

        Args:
            states: the list of states (as returned by ``RNN(..., return_state=True)``).

        Returns:
            A dict keyed by `state_names`.
        """
        shapes = self._state_shapes()
        if len(states) != len(shapes):
            raise ValueError(
                f"{type(self).__name__}: expected {len(shapes)} states "
                f"({self.state_names}); received {len(states)}."
            )
        return {name: ops.reshape(s, (-1,) + shape) for (name, shape), s in zip(shapes, states)}

    def split_output(self, outputs):
        """Splits outputs of a cell with ``return_addressing=True``.

        Args:
            outputs: ``[..., output_size]`` (one step ``[B, D]`` or a sequence ``[B, T, D]``).

        Returns:
            A dict: ``"output"`` ``[..., controller_units + R·W]`` (controller output and reads),
            ``"read_weights"`` ``[..., R, N]`` and ``"write_weights"`` ``[..., Hw, N]``.
        """
        if not self.return_addressing:
            raise ValueError(
                f"{type(self).__name__}: `split_output` needs a cell created with "
                "`return_addressing=True`."
            )
        n, r, w = self.memory_size, self.num_read_heads, self.num_write_heads
        base = self.controller_units + r * self.memory_width

        def heads(flat, count):  # [..., count·N] → [..., count, N], without a static reshape
            if count == 1:
                return ops.expand_dims(flat, -2)
            return ops.stack(ops.split(flat, count, axis=-1), axis=-2)

        return {
            "output": outputs[..., :base],
            "read_weights": heads(outputs[..., base : base + r * n], r),
            "write_weights": heads(outputs[..., base + r * n :], w),
        }

    # Weights ----------------------------------------------------------------------------------

    def build(self, inputs_shape):
        check_rank("inputs", inputs_shape, 2, where=f"{type(self).__name__}: ")
        input_dim = inputs_shape[-1]
        if input_dim is None:
            raise ValueError(
                f"{type(self).__name__}: the last dimension of `inputs` must be "
                f"known; received shape {tuple(inputs_shape)}."
            )
        controller_input = (inputs_shape[0], input_dim + self.num_read_heads * self.memory_width)
        if self.controller == "lstm":
            self.controller_layer = keras.layers.LSTMCell(
                self.controller_units,
                kernel_initializer=clone_initializer(self.kernel_initializer),
                dtype=self.dtype_policy,
                name="controller",
            )
        else:
            self.controller_layer = keras.layers.Dense(
                self.controller_units,
                activation="relu",
                kernel_initializer=clone_initializer(self.kernel_initializer),
                dtype=self.dtype_policy,
                name="controller",
            )
        self.controller_layer.build(controller_input)
        self.interface = keras.layers.Dense(
            self._interface_size(),
            kernel_initializer=clone_initializer(self.kernel_initializer),
            dtype=self.dtype_policy,
            name="interface",
        )
        self.interface.build((inputs_shape[0], self.controller_units))
        shape = (self.memory_size, self.memory_width)
        if self.memory_init == "constant":
            self.initial_memory = self.add_weight(
                shape=shape,
                initializer=keras.initializers.Constant(CONSTANT_MEMORY),
                trainable=False,
                name="initial_memory",
            )
        else:
            self.initial_memory = self.add_weight(
                shape=shape,
                initializer=keras.initializers.TruncatedNormal(stddev=0.5),
                trainable=self.memory_init == "learned",
                name="initial_memory",
            )
        self.built = True

    # States -----------------------------------------------------------------------------------

    def _initial_memory_states(self, memory, batch_size):
        """Initial memory and addressing states (float32, shaped), given ``memory [B, N, W]``."""
        raise NotImplementedError

    def get_initial_state(self, batch_size=None):
        """The initial states: zero controller state, the initial memory, and the subclass's
        initial addressing state; a list of ``[batch_size, size]`` float32 tensors.

        An unbuilt cell answers too with ``memory_init="constant"`` (as a cell that
        `keras.layers.Bidirectional` copies stays unbuilt); a learned or random initial memory is
        a weight of the built cell.
        """
        if self.built:
            memory = ops.cast(self.initial_memory, "float32")[None]
        elif self.memory_init == "constant":
            memory = ops.full((1, self.memory_size, self.memory_width), CONSTANT_MEMORY, "float32")
        else:
            raise ValueError(
                f"{type(self).__name__}: get_initial_state needs the built cell with "
                f"memory_init={self.memory_init!r} (its initial memory is a weight that build "
                "creates); call the cell, or the RNN that holds it, on an input first."
            )
        memory = ops.broadcast_to(memory, (batch_size, self.memory_size, self.memory_width))
        states = [
            ops.zeros((batch_size, self.controller_units), "float32")
            for _ in self._controller_state_shapes()
        ]
        for value in self._initial_memory_states(memory, batch_size):
            states.append(ops.reshape(value, (batch_size, -1)))
        return states

    # Step -------------------------------------------------------------------------------------

    def _memory_step(self, interface, memory_states):
        """Addresses, writes and reads; returns ``(new_memory_states, reads [B,R,W],
        read_weights [B,R,N], write_weights [B,Hw,N])``, all float32."""
        raise NotImplementedError

    def call(self, inputs, states, training=None):
        if not keras.backend.is_float_dtype(keras.backend.standardize_dtype(inputs.dtype)):
            raise TypeError(
                f"{type(self).__name__}: `inputs` must be a float tensor (one step's "
                f"input vectors); received dtype {inputs.dtype}. Embed token ids "
                "first, e.g. with keras.layers.Embedding."
            )
        states = list(states)
        shapes = self._state_shapes()
        num_controller = len(self._controller_state_shapes())
        if len(states) != len(shapes):
            raise ValueError(
                f"{type(self).__name__}: expected {len(shapes)} states "
                f"({self.state_names}); received {len(states)}."
            )
        memory_states = {
            name: ops.reshape(ops.cast(s, "float32"), (-1,) + shape)
            for (name, shape), s in zip(shapes[num_controller:], states[num_controller:])
        }
        reads_size = self.num_read_heads * self.memory_width
        previous_reads = ops.reshape(memory_states["reads"], (-1, reads_size))
        controller_input = ops.concatenate(
            [inputs, ops.cast(previous_reads, inputs.dtype)], axis=-1
        )
        if self.controller == "lstm":
            hidden, controller_states = self.controller_layer(
                controller_input, states[:num_controller], training=training
            )
        else:
            hidden, controller_states = self.controller_layer(controller_input), []
        if self.clip_value is not None:
            hidden = ops.clip(hidden, -self.clip_value, self.clip_value)
        interface = ops.cast(self.interface(hidden), "float32")
        if self.clip_value is not None:
            interface = ops.clip(interface, -self.clip_value, self.clip_value)
        new_memory_states, reads, read_weights, write_weights = self._memory_step(
            interface, memory_states
        )
        batch = ops.shape(inputs)[0]
        pieces = [hidden, ops.cast(ops.reshape(reads, (batch, -1)), hidden.dtype)]
        if self.return_addressing:
            pieces.append(ops.cast(ops.reshape(read_weights, (batch, -1)), hidden.dtype))
            pieces.append(ops.cast(ops.reshape(write_weights, (batch, -1)), hidden.dtype))
        output = ops.concatenate(pieces, axis=-1)
        state_dtype = states[0].dtype
        new_states = [ops.cast(s, state_dtype) for s in controller_states]
        for name, _ in shapes[num_controller:]:
            flat = ops.reshape(new_memory_states[name], (batch, -1))
            new_states.append(ops.cast(flat, state_dtype))
        return output, new_states

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "controller_units": self.controller_units,
                "memory_size": self.memory_size,
                "memory_width": self.memory_width,
                "num_read_heads": self.num_read_heads,
                "num_write_heads": self.num_write_heads,
                "controller": self.controller,
                "memory_init": self.memory_init,
                "clip_value": self.clip_value,
                "return_addressing": self.return_addressing,
                "kernel_initializer": keras.initializers.serialize(self.kernel_initializer),
            }
        )
        return config


def split_sizes(x, sizes):
    """Splits the last axis of ``x`` into consecutive pieces of the given static sizes."""
    pieces, start = [], 0
    for size in sizes:
        pieces.append(x[..., start : start + size])
        start += size
    return pieces

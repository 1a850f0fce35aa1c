"""The Differentiable Neural Computer as a Keras RNN cell."""

from typing import Any

import keras
from keras import ops

from keras_adl.layers._memory_cell import MemoryCellBase, split_sizes
from keras_adl.ops.addressing import (
    allocation_weights,
    content_addressing,
    directional_read_weights,
    erase_and_write,
    initial_sparse_link,
    oneplus,
    read_memory,
    sparse_directional_read_weights,
    update_precedence,
    update_sparse_temporal_link,
    update_temporal_link,
    update_usage,
)
from keras_adl.type_aliases import Initializer
from keras_adl.utils import check_positive_int

#: The largest slot index each state dtype holds exactly (the sparse link keeps its column
#: indices in the float states Keras' ``RNN`` carries).
_EXACT_INTEGERS = {"float16": 2048, "bfloat16": 256}


@keras.saving.register_keras_serializable(package="keras_adl")
class DNCCell(MemoryCellBase):
    """Differentiable Neural Computer cell (Graves et al. 2016), for ``keras.layers.RNN``.

    The controller reads ``[x_t; r_{t−1}]``; its output ``h_t`` is mapped to the interface
    vector: read keys ``k^r`` and strengths ``β^r = oneplus(·)``, write key ``k^w`` and strength
    ``β^w``, erase vector ``e = σ(·)``, write vector ``v``, free gates ``f = σ(·)``, allocation
    gate ``g^a = σ(·)``, write gate ``g^w = σ(·)`` and read modes ``π = softmax(·)``. Then, as
    in the paper's Methods:

        u_t = (u_{t−1} + w^w_{t−1} − u_{t−1} ∘ w^w_{t−1}) ∘ Π_i (1 − f^i w^{r,i}_{t−1})   usage
        a_t = allocation(u_t)                   free slots first, least used first
        w^w = g^w (g^a a_t + (1 − g^a) C(M_{t−1}, k^w, β^w))               write weights
        M_t = M_{t−1} ∘ (1 − w^w eᵀ) + w^w vᵀ                              write
        L_t, p_t = temporal link and precedence updates                  (zero diagonal)
        w^r = π_b Lᵀ_t w^r_{t−1} + π_c C(M_t, k^r, β^r) + π_f L_t w^r_{t−1}   read weights
        r = M_tᵀ w^r                                                     read

    With several write heads, each keeps its own link matrix and precedence, the heads
    allocate in turn (each sees the usage the previous ones will claim), and each read head
    has ``1 + 2·Hw`` modes ordered (backward per write head, content, forward per write head).
    The output is ``[h_t; r_t]``. All memory state starts at zero except the memory itself
    (``memory_init``). The memory math of a step runs in ``float32``, also under
    ``mixed_float16``; between steps Keras' ``RNN`` keeps the states in the compute dtype
    (``float16`` under ``mixed_float16``): for a full-precision memory in a mixed-precision
    model, give the cell and its ``RNN`` ``dtype="float32"``.
    The link matrix costs ``O(N²)`` memory and time per step and write head; with
    ``sparse_links=K`` each row keeps only its ``K`` largest entries (the sparse link of the
    paper's Methods; `keras_adl.ops.addressing.update_sparse_temporal_link`), ``O(N·K log K)``.

    By default, as in DeepMind's DNC code, the gradient of the usage with respect to the
    previous write weights is stopped; ``stop_usage_gradient=False`` keeps it, as the paper's
    equations do. On copy at Adam 3e-3 over 5 seeds the stop-gradient converged no later on
    every seed (median 20.0k sequences against 21.6k; 2 seeds at 1e-3 had leaned the other
    way; benchmarks/RESULTS.md).

    Args:
        controller_units: size of the controller output ``h``.
        memory_size: number of memory slots ``N``.
        memory_width: width ``W`` of a slot.
        num_read_heads: number of read heads ``R``.
        num_write_heads: number of write heads ``Hw``.
        controller: ``"lstm"`` or ``"dense"`` (feed-forward ReLU).
        memory_init: ``"constant"`` (1e-6, not trained), ``"learned"`` or ``"random"`` (see
            `NTMCell`).
        clip_value: clip the controller output and the interface vector to ``±clip_value``;
            ``None`` disables.
        sparse_links: ``None`` for the dense ``N × N`` link matrix, or ``K`` (``1 ≤ K ≤ N``)
            to keep the ``K`` largest entries of each row (equal to the dense link for
            ``K = N``; the paper uses small ``K`` such as 8). Its column indices are kept in the
            float states, so under ``float16`` (``bfloat16``) states ``N`` may not exceed
            2048 (256).
        stop_usage_gradient: stop the gradient of the usage with respect to the previous
            write weights, as DeepMind's code does (default ``True``; ``False`` keeps it, as
            the paper's equations do; measured in benchmarks/RESULTS.md).
        return_addressing: append the read and write weights to the output (see
            `split_output`).
        kernel_initializer: of the controller and interface kernels.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: ``[B, D]``, one step's input.
        states: list of states in the order of `state_names`: the controller's (``h, c`` for
            an LSTM), ``memory [B, N·W]``, ``usage [B, N]``, ``link [B, Hw·N·N]`` (with
            ``sparse_links=K``: ``link_values`` and ``link_indices``, ``[B, Hw·N·K]`` each),
            ``precedence [B, Hw·N]``, ``read_weights [B, R·N]``, ``write_weights [B, Hw·N]``,
            ``reads [B, R·W]``.
        training: passed to the controller.

    Returns:
        ``(output, new_states)`` with ``output [B, controller_units + R·W]`` (plus
        ``(R + Hw)·N`` with ``return_addressing=True``).

    Example:

    >>> rnn = keras.layers.RNN(DNCCell(16, memory_size=8, memory_width=4, num_read_heads=2),
    ...                        return_sequences=True)
    >>> tuple(rnn(ops.zeros((2, 5, 3))).shape)
    (2, 5, 24)

    References:
        Graves et al. (2016). Hybrid computing using a neural network with dynamic external
        memory. Nature 538, 471-476.
    """

    def __init__(
        self,
        controller_units: int,
        memory_size: int,
        memory_width: int,
        num_read_heads: int = 4,
        num_write_heads: int = 1,
        controller: str = "lstm",
        memory_init: str = "constant",
        clip_value: float | None = 20.0,
        sparse_links: int | None = None,
        stop_usage_gradient: bool = True,
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
        where = "DNCCell: "
        if not isinstance(stop_usage_gradient, bool):
            raise TypeError(
                f"{where}`stop_usage_gradient` must be a bool; received {stop_usage_gradient!r}."
            )
        self.stop_usage_gradient = stop_usage_gradient
        self.sparse_links = check_positive_int(
            "sparse_links", sparse_links, allow_none=True, where=where
        )
        if self.sparse_links is not None:
            if self.sparse_links > self.memory_size:
                raise ValueError(
                    f"{where}`sparse_links` must be at most `memory_size` ({self.memory_size}); "
                    f"received {self.sparse_links}."
                )
            limit = _EXACT_INTEGERS.get(self.compute_dtype)
            if limit is not None and self.memory_size > limit:
                raise ValueError(
                    f"{where}with `sparse_links`, the slot indices live in the {self.compute_dtype} "
                    f"states, exact up to {limit}; `memory_size` must be at most {limit} "
                    f"under this dtype; received {self.memory_size}. Give the cell and its RNN "
                    "dtype='float32'."
                )

    @property
    def num_read_modes(self):
        """``1 + 2·Hw``: backward per write head, content, forward per write head."""
        return 1 + 2 * self.num_write_heads

    def _interface_sizes(self):
        r, hw, w = self.num_read_heads, self.num_write_heads, self.memory_width
        return [
            r * w,  # read keys
            r,  # read strengths
            hw * w,  # write keys
            hw,  # write strengths
            hw * w,  # erase vectors
            hw * w,  # write vectors
            r,  # free gates
            hw,  # allocation gates
            hw,  # write gates
            r * self.num_read_modes,  # read modes
        ]

    def _interface_size(self):
        return sum(self._interface_sizes())

    def _memory_state_shapes(self):
        n, w, r, hw = self.memory_size, self.memory_width, self.num_read_heads, self.num_write_heads
        if self.sparse_links is None:
            link = [("link", (hw, n, n))]
        else:
            k = self.sparse_links
            link = [("link_values", (hw, n, k)), ("link_indices", (hw, n, k))]
        return [
            ("memory", (n, w)),
            ("usage", (n,)),
            *link,
            ("precedence", (hw, n)),
            ("read_weights", (r, n)),
            ("write_weights", (hw, n)),
            ("reads", (r, w)),
        ]

    def _initial_memory_states(self, memory, batch_size):
        shapes = self._memory_state_shapes()[1:]
        states = [ops.zeros((batch_size,) + shape, "float32") for _, shape in shapes]
        if self.sparse_links is not None:
            _, indices = initial_sparse_link(
                batch_size, self.memory_size, self.sparse_links, heads=self.num_write_heads
            )
            states[[name for name, _ in shapes].index("link_indices")] = ops.cast(
                indices, "float32"
            )
        return [memory] + states

    def _parse_interface(self, interface):
        r, hw, w = self.num_read_heads, self.num_write_heads, self.memory_width
        (
            read_keys,
            read_strengths,
            write_keys,
            write_strengths,
            erase,
            write_vectors,
            free_gates,
            allocation_gates,
            write_gates,
            read_modes,
        ) = split_sizes(interface, self._interface_sizes())
        return {
            "read_keys": ops.reshape(read_keys, (-1, r, w)),
            "read_strengths": oneplus(read_strengths),
            "write_keys": ops.reshape(write_keys, (-1, hw, w)),
            "write_strengths": oneplus(write_strengths),
            "erase": ops.sigmoid(ops.reshape(erase, (-1, hw, w))),
            "write_vectors": ops.reshape(write_vectors, (-1, hw, w)),
            "free_gates": ops.sigmoid(free_gates),
            "allocation_gates": ops.sigmoid(allocation_gates),
            "write_gates": ops.sigmoid(write_gates),
            "read_modes": ops.softmax(ops.reshape(read_modes, (-1, r, self.num_read_modes)), -1),
        }

    def _memory_step(self, interface, states):
        p = self._parse_interface(interface)
        memory = states["memory"]
        previous_writes = states["write_weights"]
        if self.stop_usage_gradient:
            previous_writes = ops.stop_gradient(previous_writes)
        usage = update_usage(
            states["usage"], previous_writes, p["free_gates"], states["read_weights"]
        )

        # Write weights: each write head allocates from the usage the previous heads claim.
        write_content = content_addressing(memory, p["write_keys"], p["write_strengths"])
        allocation_gates, write_gates = p["allocation_gates"], p["write_gates"]
        allocations, claimed = [], usage
        for h in range(self.num_write_heads):
            allocation = allocation_weights(claimed)
            allocations.append(allocation)
            claimed = claimed + (1.0 - claimed) * (
                allocation_gates[:, h : h + 1] * write_gates[:, h : h + 1] * allocation
            )
        allocation = ops.stack(allocations, axis=1)  # [B, Hw, N]
        g_a, g_w = allocation_gates[:, :, None], write_gates[:, :, None]
        write_weights = g_w * (g_a * allocation + (1.0 - g_a) * write_content)

        memory = erase_and_write(memory, write_weights, p["erase"], p["write_vectors"])
        if self.sparse_links is None:
            link = update_temporal_link(states["link"], states["precedence"], write_weights)
            link_states = {"link": link}
        else:
            values, indices = update_sparse_temporal_link(
                states["link_values"], states["link_indices"], states["precedence"], write_weights
            )
            link_states = {"link_values": values, "link_indices": ops.cast(indices, "float32")}
        precedence = update_precedence(states["precedence"], write_weights)

        # Read weights: backward / content / forward, mixed by the read modes.
        hw = self.num_write_heads
        previous_reads = states["read_weights"]
        read_content = content_addressing(memory, p["read_keys"], p["read_strengths"])
        if self.sparse_links is None:
            backward = directional_read_weights(link, previous_reads, forward=False)  # [B,R,Hw,N]
            forward = directional_read_weights(link, previous_reads, forward=True)
        else:
            backward = sparse_directional_read_weights(values, indices, previous_reads, False)
            forward = sparse_directional_read_weights(values, indices, previous_reads, True)
        modes = p["read_modes"]
        read_weights = (
            ops.sum(modes[:, :, :hw, None] * backward, axis=2)
            + modes[:, :, hw : hw + 1] * read_content
            + ops.sum(modes[:, :, hw + 1 :, None] * forward, axis=2)
        )
        reads = read_memory(memory, read_weights)
        new_states = {
            "memory": memory,
            "usage": usage,
            **link_states,
            "precedence": precedence,
            "read_weights": read_weights,
            "write_weights": write_weights,
            "reads": reads,
        }
        return new_states, reads, read_weights, write_weights

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        config["sparse_links"] = self.sparse_links
        config["stop_usage_gradient"] = self.stop_usage_gradient
        return config

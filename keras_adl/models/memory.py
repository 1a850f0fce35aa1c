"""Memory-augmented sequence models: NTM, DNC and the LSTM baseline of the papers."""

import keras
import numpy as np  # noqa: F401  (the Example uses it)

from keras_adl.layers.dnc_cell import DNCCell
from keras_adl.layers.ntm_cell import NTMCell
from keras_adl.utils import check_choice, check_positive_int

CELLS = ("ntm", "dnc", "lstm")


def memory_sequence_model(
    input_dim: int,
    output_dim: int,
    cell: str = "ntm",
    controller_units: int = 100,
    memory_size: int = 128,
    memory_width: int = 20,
    num_read_heads: int | None = None,
    num_write_heads: int = 1,
    shift_range: int = 1,
    controller: str = "lstm",
    memory_init: str = "constant",
    clip_value: float | None = 20.0,
    sparse_links: int | None = None,
    stop_usage_gradient: bool | None = None,
    lstm_units: int = 256,
    lstm_layers: int = 3,
    return_addressing: bool = False,
    name: str | None = None,
) -> keras.Model:
    """A sequence-to-sequence model over a memory cell: ``x_t → cell → Dense → logits_t``.

    One output per input step (the algorithmic tasks read, then answer, on one time axis). The
    defaults are the NTM paper's copy-task configuration (LSTM controller of 100 units,
    128 × 20 memory, one read and one write head, shifts −1..1). ``cell="lstm"`` is the papers'
    baseline: a stack of ``lstm_layers`` LSTMs of ``lstm_units`` (3 × 256 in the NTM paper).

    Args:
        input_dim: size of each input vector.
        output_dim: number of output bits (logits).
        cell: ``"ntm"``, ``"dnc"`` or ``"lstm"``.
        controller_units: the size of the controller output; this and ``memory_size``,
            ``memory_width``, ``num_write_heads``, ``controller``, ``memory_init`` and
            ``clip_value`` are those of `NTMCell` / `DNCCell`.
        memory_size: the number of memory slots ``N``.
        memory_width: the width ``W`` of a slot.
        num_read_heads: read heads; ``None`` → 1 for the NTM, 4 for the DNC.
        num_write_heads: the number of write heads.
        shift_range: the NTM's shift range.
        controller: ``"lstm"`` or ``"dense"``.
        memory_init: ``"constant"``, ``"learned"`` or ``"random"``.
        clip_value: the clip of the controller output and the heads' parameters; ``None``
            disables.
        sparse_links: the DNC's sparse temporal link (``K`` entries kept per row; see
            `DNCCell`); ``None`` for the dense link.
        stop_usage_gradient: the DNC's usage without gradient to the write weights (see
            `DNCCell`); ``None`` for the cell's default (``True``, DeepMind's choice).
        lstm_units: the LSTM baseline's units per layer.
        lstm_layers: the LSTM baseline's number of layers.
        return_addressing: the model outputs a dict with ``"logits"``, ``"read_weights"``
            ``[B, T, R, N]`` and ``"write_weights"`` ``[B, T, Hw, N]`` (NTM/DNC only), for
            plots; it has the same weights as the model without, so `set_weights` copies a
            trained model into it.
        name: model name; defaults to ``f"{cell}_sequence_model"``.

    Returns:
        A ``keras.Model`` from ``[B, T, input_dim]`` to logits ``[B, T, output_dim]``. Compile it
        with `keras_adl.recipes.memory.build.compile_memory_model`.

    Example:

    >>> model = memory_sequence_model(9, 8, cell="ntm", memory_size=16, memory_width=8,
    ...                               controller_units=32)
    >>> tuple(model.output.shape)
    (None, None, 8)

    References:
        Graves, Wayne, Danihelka (2014). Neural Turing Machines. arXiv:1410.5401.
        Graves et al. (2016). Hybrid computing using a neural network with dynamic external
        memory. Nature 538.
    """
    arguments = dict(locals())  # by name: `_memory_cell` takes the cell's from it
    where = "memory_sequence_model: "
    _check_arguments(input_dim, output_dim, cell, sparse_links, stop_usage_gradient, where=where)
    inputs = keras.Input((None, input_dim), name="inputs")
    addressing = None
    if cell == "lstm":
        hidden = _lstm_stack(inputs, lstm_units, lstm_layers, return_addressing, where=where)
    else:
        memory_cell = _memory_cell(cell, arguments)
        hidden = keras.layers.RNN(memory_cell, return_sequences=True, name="memory")(inputs)
        if return_addressing:
            addressing = memory_cell.split_output(hidden)
            hidden = addressing["output"]
    outputs = _outputs(hidden, addressing, output_dim)
    return keras.Model(inputs, outputs, name=name or f"{cell}_sequence_model")


# `memory_sequence_model`'s arguments that both memory cells take as they are.
_CELL_ARGUMENTS = (
    "controller_units",
    "memory_size",
    "memory_width",
    "num_write_heads",
    "controller",
    "memory_init",
    "clip_value",
    "return_addressing",
)


def _check_arguments(input_dim, output_dim, cell, sparse_links, stop_usage_gradient, *, where=""):
    """`memory_sequence_model`'s own checks (the cells check their arguments)."""
    check_positive_int("input_dim", input_dim, where=where)
    check_positive_int("output_dim", output_dim, where=where)
    check_choice("cell", cell, CELLS, where=where)
    for option, value, default in (
        ("sparse_links", sparse_links, None),
        ("stop_usage_gradient", stop_usage_gradient, None),
    ):
        if value != default and cell != "dnc":
            raise ValueError(
                f"{where}`{option}` is a DNC option; received {option}={value!r} with "
                f"cell={cell!r}."
            )


def _lstm_stack(inputs, lstm_units, lstm_layers, return_addressing, *, where=""):
    """The papers' LSTM baseline: ``lstm_layers`` LSTMs of ``lstm_units``, all steps out."""
    if return_addressing:
        raise ValueError(
            f"{where}`return_addressing=True` needs a memory cell; received cell='lstm'."
        )
    check_positive_int("lstm_layers", lstm_layers, where=where)
    hidden = inputs
    for i in range(lstm_layers):
        hidden = keras.layers.LSTM(lstm_units, return_sequences=True, name=f"lstm_{i}")(hidden)
    return hidden


def _memory_cell(cell, arguments):
    """The `NTMCell` or `DNCCell` of `memory_sequence_model`'s ``arguments`` (by name)."""
    common = {name: arguments[name] for name in _CELL_ARGUMENTS}
    reads = arguments["num_read_heads"]
    if cell == "ntm":
        reads = 1 if reads is None else reads
        shift_range = arguments["shift_range"]
        return NTMCell(num_read_heads=reads, shift_range=shift_range, name="ntm_cell", **common)
    reads = 4 if reads is None else reads
    if arguments["stop_usage_gradient"] is not None:
        common["stop_usage_gradient"] = arguments["stop_usage_gradient"]
    sparse_links = arguments["sparse_links"]
    return DNCCell(num_read_heads=reads, sparse_links=sparse_links, name="dnc_cell", **common)


def _outputs(hidden, addressing, output_dim):
    """The logits ``[B, T, output_dim]``, or with ``addressing`` the dict of logits, read and
    write weights."""
    logits = keras.layers.Dense(output_dim, name="logits")(hidden)
    if addressing is None:
        return logits
    return {
        "logits": logits,
        "read_weights": addressing["read_weights"],
        "write_weights": addressing["write_weights"],
    }


def addressing_model(model: keras.Model) -> keras.Model:
    """A copy of a trained NTM/DNC `memory_sequence_model` that also outputs its addressing.

    The copy shares no variables with ``model``: it is rebuilt with ``return_addressing=True``
    and the trained weights are copied into it.

    Args:
        model: a model from `memory_sequence_model` with ``cell="ntm"`` or ``"dnc"``.

    Returns:
        A ``keras.Model`` whose output is a dict: ``"logits"`` ``[B, T, output_dim]``,
        ``"read_weights"`` ``[B, T, R, N]``, ``"write_weights"`` ``[B, T, Hw, N]``.

    Example:

    >>> model = memory_sequence_model(9, 8, memory_size=16, memory_width=8, controller_units=32)
    >>> outputs = addressing_model(model)(np.zeros((1, 5, 9), "float32"))
    >>> tuple(outputs["write_weights"].shape)
    (1, 5, 1, 16)
    """
    try:
        rnn = model.get_layer("memory")
    except ValueError:
        rnn = None
    if rnn is None or not isinstance(rnn.cell, (NTMCell, DNCCell)):
        raise ValueError(
            "addressing_model: `model` must come from memory_sequence_model with "
            f"cell='ntm' or 'dnc'; received a model named {model.name!r}."
        )
    if rnn.cell.return_addressing:
        return model
    config = rnn.cell.get_config()
    config["return_addressing"] = True
    cell = type(rnn.cell).from_config(config)
    logits = model.get_layer("logits")
    inputs = keras.Input((None, model.input.shape[-1]), name="inputs")
    hidden = keras.layers.RNN(cell, return_sequences=True, name="memory")(inputs)
    parts = cell.split_output(hidden)
    dense = keras.layers.Dense.from_config(logits.get_config())
    outputs = {
        "logits": dense(parts["output"]),
        "read_weights": parts["read_weights"],
        "write_weights": parts["write_weights"],
    }
    copy = keras.Model(inputs, outputs, name=f"{model.name}_addressing")
    copy.set_weights(model.get_weights())
    return copy

"""Number sorting for the pointer network (Vinyals et al. 2015): output the input positions in
the order that sorts their values."""

import numpy as np

from keras_adl.conventions import START_VALUE


def sort_arrays(num, length=10, seed=0):
    """Seeded fixed-shape arrays for the sorting task.

    Args:
        num: number of sequences.
        length: numbers per sequence.
        seed: random seed.

    Returns:
        A dict with ``inputs`` ``[N, length, 1]`` float32 values in [0, 1),
        ``decoder_input`` ``[N, length, 1]`` (``START_VALUE`` then the sorted values, shifted
        right: teacher forcing) and ``target`` ``[N, length]`` int32, the positions in sorted
        order (``argsort``).

    Example:

    >>> data = sort_arrays(2, length=4, seed=0)
    >>> bool(np.all(np.diff(np.take_along_axis(data["inputs"][..., 0], data["target"], 1)) > 0))
    True
    """
    if num < 0 or length < 1:
        raise ValueError(f"`num` must be >= 0 and `length` >= 1; received {num}, {length}.")
    rng = np.random.default_rng(seed)
    values = rng.random((num, length)).astype("float32")
    order = np.argsort(values, axis=1).astype("int32")
    ordered = np.take_along_axis(values, order, axis=1)
    decoder_input = np.concatenate([np.full((num, 1), START_VALUE, "float32"), ordered[:, :-1]], 1)
    return {"inputs": values[..., None], "decoder_input": decoder_input[..., None], "target": order}

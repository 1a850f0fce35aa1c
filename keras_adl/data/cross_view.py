"""The batch stream of cross-view training: labelled and unlabelled batches in turn.

Clark et al. (2018, section 3) alternate a minibatch of labelled examples (each task in turn
when several share the encoder) with a minibatch of unlabelled ones. `cross_view_batches`
yields that stream as ``(x, y)`` pairs for one ``fit``: ``y["labelled"]`` marks each batch (1
labelled, 0 unlabelled; every example of a batch carries the same value) and ``y[task]`` holds
the tags of the task the batch labels, zeros for the other tasks and on unlabelled batches
(tag 0 means "no label"), which is what `keras_adl.models.CrossViewTagger` reads. Every batch
has ``batch_size`` examples (fixed shapes: one compiled step); each source is drawn as
reshuffled passes, so a labelled set smaller than a batch is repeated within it.

Pure numpy: the stream feeds ``fit`` on every backend (a Python generator) or a
``tf.data.Dataset.from_generator``.
"""

from collections.abc import Iterator, Mapping

import numpy as np

from keras_adl.data._checks import as_generator, check_int, check_positive_int

__all__ = ["cross_view_batches"]

_WHERE = "cross_view_batches: "
LABELLED = "labelled"  # the same key as keras_adl.models.cross_view.LABELLED


def _num_examples(name, x):
    """The common first dimension of the arrays of the dict ``x``."""
    if not isinstance(x, Mapping) or not x:
        raise ValueError(
            f"{_WHERE}`{name}` must be a non-empty dict of input arrays (e.g. "
            f"{{'words': [N, T]}}); received {type(x).__name__}."
        )
    sizes = {key: len(np.asarray(value)) for key, value in x.items()}
    if len(set(sizes.values())) != 1 or 0 in sizes.values():
        raise ValueError(
            f"{_WHERE}the arrays of `{name}` must share a non-zero first dimension; received "
            f"{sizes}."
        )
    return next(iter(sizes.values()))


def _passes(num, batch_size, rng):
    """Endless ``[batch_size]`` index arrays: reshuffled passes over ``range(num)``."""
    order = np.empty(0, dtype=np.int64)
    while True:
        while len(order) < batch_size:
            order = np.concatenate([order, rng.permutation(num)])
        yield order[:batch_size]
        order = order[batch_size:]


def _check_labelled(labelled):
    """``{task: (x dict, tags [N, T])}``, checked."""
    if not isinstance(labelled, Mapping) or not labelled:
        raise ValueError(
            f"{_WHERE}`labelled` must be a non-empty dict {{task: (x, tags)}}; received "
            f"{type(labelled).__name__}."
        )
    checked = {}
    for task, pair in labelled.items():
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise ValueError(
                f"{_WHERE}`labelled[{task!r}]` must be a pair (x, tags); received "
                f"{type(pair).__name__}."
            )
        x, tags = {key: np.asarray(v) for key, v in pair[0].items()}, np.asarray(pair[1])
        num = _num_examples(f"labelled[{task!r}][0]", x)
        if tags.ndim != 2 or len(tags) != num or not np.issubdtype(tags.dtype, np.integer):
            raise ValueError(
                f"{_WHERE}`labelled[{task!r}]`'s tags must be integers [N, T] with N = {num}; "
                f"received {tags.dtype} {tags.shape}."
            )
        checked[task] = (x, tags)
    return checked


def cross_view_batches(
    labelled: Mapping,
    unlabelled: Mapping | None = None,
    batch_size: int = 32,
    unlabelled_per_labelled: int = 1,
    seed: int | np.random.Generator | None = 0,
) -> Iterator[tuple[dict, dict]]:
    """An endless stream of CVT batches: one labelled batch per task in turn, each followed by
    ``unlabelled_per_labelled`` unlabelled batches.

    Args:
        labelled: ``{task: (x, tags)}``: a dict of input arrays ``[N, ...]`` (e.g.
            ``{"words": [N, T]}``) and its integer tags ``[N, T]`` (0: no label), per task.
            Every task's ``x`` and the unlabelled ``x`` have the same keys and shapes beyond N.
        unlabelled: a dict of input arrays without tags, or ``None`` (labelled batches only:
            the supervised baseline's stream).
        batch_size: examples per batch.
        unlabelled_per_labelled: unlabelled batches after each labelled one (ignored without
            ``unlabelled``).
        seed: an int, ``None`` or a ``numpy.random.Generator``.

    Yields:
        ``(x, y)``: ``x`` the inputs ``[batch_size, ...]``; ``y`` ``{task: int32 tags
        [batch_size, T] for every task, "labelled": float32 [batch_size]}``.

    Example:

    >>> x = {"words": np.array([[5, 6, 0], [7, 0, 0]])}
    >>> stream = cross_view_batches({"dates": (x, np.array([[1, 2, 0], [3, 0, 0]]))},
    ...                             {"words": np.array([[8, 9, 9]])}, batch_size=2)
    >>> [float(next(stream)[1]["labelled"][0]) for _ in range(4)]
    [1.0, 0.0, 1.0, 0.0]
    """
    labelled = _check_labelled(labelled)
    batch_size = check_positive_int("batch_size", batch_size, where=_WHERE)
    unlabelled_per_labelled = check_int(
        "unlabelled_per_labelled", unlabelled_per_labelled, 1, where=_WHERE
    )
    rng = as_generator(seed)
    tasks = list(labelled)
    keys = sorted(next(iter(labelled.values()))[0])
    length = {task: tags.shape[1] for task, (_, tags) in labelled.items()}
    sources = {task: _passes(len(tags), batch_size, rng) for task, (_, tags) in labelled.items()}
    if unlabelled is not None:
        unlabelled = {key: np.asarray(v) for key, v in unlabelled.items()}
        if sorted(unlabelled) != keys:
            raise ValueError(
                f"{_WHERE}`unlabelled` must have the labelled inputs' keys {keys}; received "
                f"{sorted(unlabelled)}."
            )
        unlabelled_order = _passes(_num_examples("unlabelled", unlabelled), batch_size, rng)

    def no_tags(task):
        return np.zeros((batch_size, length[task]), dtype="int32")

    while True:
        for task in tasks:
            x, tags = labelled[task]
            index = next(sources[task])
            y = {other: no_tags(other) for other in tasks}
            y[task] = tags[index].astype("int32")
            y[LABELLED] = np.ones(batch_size, dtype="float32")
            yield {key: x[key][index] for key in keys}, y
            if unlabelled is None:
                continue
            for _ in range(unlabelled_per_labelled):
                index = next(unlabelled_order)
                y = {other: no_tags(other) for other in tasks}
                y[LABELLED] = np.zeros(batch_size, dtype="float32")
                yield {key: unlabelled[key][index] for key in keys}, y

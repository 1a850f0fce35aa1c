"""The development split: carved from a task's training examples (or drawn with its own seed on
a generated task), disjoint from the test set its figures are reported on; its loss picks the
best epoch, ends a run by ``--patience`` and scores ``tune``'s trials."""

import numpy as np

from keras_adl.training.rundir import RecipeError

DEVELOPMENT_FRACTION = 0.1
# Fixed, so that a resumed run sees the same split.
DEVELOPMENT_SEED = 7
# Fewer training examples than this and no development split is set aside: two or three
# held-out examples give a loss too noisy to choose an epoch by, and training needs them more.
MIN_FOR_DEVELOPMENT = 20


def development_rows(count, most, seed=DEVELOPMENT_SEED):
    """``(train_rows, development_rows)`` of ``count`` training examples: a seeded
    `DEVELOPMENT_FRACTION` of them (at least 2, at most ``most``) set aside, both in their
    original order; ``None`` below `MIN_FOR_DEVELOPMENT` examples.

    >>> train, development = development_rows(30, most=5)
    >>> len(train), len(development), sorted([*train, *development]) == list(range(30))
    (27, 3, True)
    """
    if count < MIN_FOR_DEVELOPMENT:
        return None
    size = min(int(most), max(2, int(round(count * DEVELOPMENT_FRACTION))))
    order = np.random.default_rng(seed).permutation(count)
    return np.sort(order[size:]), np.sort(order[:size])


def without_development(run, reason):
    """A run of a held-out task whose data is too small for a development split: ``--patience``
    is refused in one line (as on a task without a held-out split), otherwise one line says
    that the last epoch's weights are kept. ``reason`` completes "no development split: …"."""
    if run.patience is not None:
        raise RecipeError(
            f"--patience watches a held-out loss, and {run.task!r} has no development split "
            f"here: {reason}; --minutes bounds its training time"
        )
    print(f"{run.task}: no development split: {reason}; the last epoch's weights are kept")
    run.record["development_examples"] = 0


def too_few_to_tune(count, what):
    """The `RecipeError` of ``tune`` on data too small for a development split."""
    return RecipeError(
        f"tune scores trials on a development split, and {count} {what} are too few to set "
        f"some aside (it takes {MIN_FOR_DEVELOPMENT})"
    )

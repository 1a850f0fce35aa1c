import numpy as np
import pytest

from keras_adl.data.algorithmic import (
    GENERATORS,
    associative_recall_batch,
    copy_batch,
    priority_sort_batch,
    repeat_copy_batch,
    task_dataset,
    task_dims,
)


def test_copy_layout_for_every_length():
    x, y, w = copy_batch(64, 1, 7, bits=5, seed=0)
    assert x.shape == (64, 15, 6) and y.shape == (64, 15, 5) and w.shape == (64, 15)
    for b in range(64):
        delimiter = np.flatnonzero(x[b, :, 5])
        assert len(delimiter) == 1
        length = int(delimiter[0])
        assert 1 <= length <= 7
        np.testing.assert_array_equal(
            w[b], (np.arange(15) > length) & (np.arange(15) <= 2 * length)
        )
        np.testing.assert_array_equal(y[b, length + 1 : 2 * length + 1], x[b, :length, :5])
        assert not x[b, length + 1 :, :5].any() and not y[b, w[b] == 0].any()
    lengths = x[:, :, 5].argmax(1)
    assert lengths.min() == 1 and lengths.max() == 7  # the range is covered


def test_copy_is_seeded_and_fixed_shape():
    a, b = copy_batch(4, seed=3), copy_batch(4, seed=3)
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u, v)
    assert copy_batch(4, 1, 20, seed=1)[0].shape == copy_batch(4, 20, 20, seed=2)[0].shape


def test_repeat_copy_layout():
    x, y, w = repeat_copy_batch(16, 1, 4, 1, 3, bits=3, seed=1)
    assert x.shape == (16, 4 + 2 + 12, 5) and y.shape == (16, 18, 4)
    for b in range(16):
        length = int(np.flatnonzero(x[b, :, 3])[0])
        repeats = int(round(x[b, length, 4] * 10))
        assert 1 <= repeats <= 3
        answer = np.flatnonzero(w[b])
        assert answer[0] == length + 1 and len(answer) == repeats * length + 1
        np.testing.assert_array_equal(
            y[b, length + 1 : length + 1 + repeats * length, :3],
            np.tile(x[b, :length, :3], (repeats, 1)),
        )
        assert y[b, answer[-1], 3] == 1 and y[b, :, 3].sum() == 1


def test_associative_recall_answer_is_the_item_after_the_query():
    x, y, w = associative_recall_batch(16, 2, 5, item_length=2, bits=4, seed=2)
    for b in range(16):
        starts = np.flatnonzero(x[b, :, 4])
        items = [x[b, s + 1 : s + 3, :4] for s in starts]
        q = np.flatnonzero(x[b, :, 5])
        assert len(q) == 2 and q[1] - q[0] == 3
        query = x[b, q[0] + 1 : q[1], :4]
        answer_steps = np.flatnonzero(w[b])
        # The answer starts right after the second query delimiter and is one item long.
        np.testing.assert_array_equal(answer_steps, q[1] + 1 + np.arange(2))
        answer = y[b, answer_steps]
        # Random items may repeat: the answer follows one of the items equal to the query.
        assert any(
            np.array_equal(item, query) and np.array_equal(items[i + 1], answer)
            for i, item in enumerate(items[:-1])
        )


def test_priority_sort_targets_are_sorted_by_priority():
    x, y, w = priority_sort_batch(8, num_inputs=6, num_outputs=4, bits=3, seed=3)
    for b in range(8):
        order = np.argsort(-x[b, :6, 3])[:4]
        np.testing.assert_array_equal(y[b, 7:], x[b, order, :3])
    assert w[:, 7:].all() and not w[:, :7].any()


def test_generators_name_every_task():
    assert GENERATORS == {
        "copy": copy_batch,
        "repeat_copy": repeat_copy_batch,
        "associative_recall": associative_recall_batch,
        "priority_sort": priority_sort_batch,
    }


def test_dataset_yields_fixed_shapes_and_fresh_batches():
    ds = iter(task_dataset("repeat_copy", 4, seed=0, max_length=3, max_repeats=2))
    first, second = next(ds), next(ds)
    assert [tuple(t.shape) for t in first] == [tuple(t.shape) for t in second]
    assert not np.array_equal(first[0].numpy(), second[0].numpy())
    assert task_dims("associative_recall", bits=6) == (8, 6)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: copy_batch(2, 5, 3), "`min_length` \\(5\\) must be ≤ `max_length` \\(3\\)"),
        (lambda: copy_batch(0), "`batch_size` must be a positive integer"),
        (lambda: associative_recall_batch(2, 1, 3), "`min_items` must be ≥ 2"),
        (lambda: priority_sort_batch(2, num_inputs=3, num_outputs=4), "`num_outputs`"),
        (lambda: task_dataset("sorting", 2), "`task` must be one of"),
    ],
)
def test_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()

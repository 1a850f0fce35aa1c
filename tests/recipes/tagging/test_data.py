"""The tagging family's data: the three splits, the character table and the marked stream."""

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.data.date_fields import DATE_FIELD_TAGS, DATE_FIELD_VOCABULARY
from keras_adl.recipes.tagging import data
from keras_adl.text.characters import character_ids
from keras_adl.training.rundir import RecipeError

OPTIONS = {"labelled": 10, "unlabelled": "on", "views": "past,forward"}


def test_views_are_checked_and_put_in_the_papers_order():
    assert data.check_views("past, forward") == ("forward", "past")
    for bad in ("sideways", "past,past", "", "forward;past"):
        with pytest.raises(RecipeError, match="--views must be distinct names from forward,"):
            data.check_views(bad)


def test_splits_are_seeded_and_the_held_out_sequences_are_the_same_for_every_seed():
    (words, tags), unlabelled, (test_words, test_tags) = data.date_fields(10, 20, seed=0, test=30)
    (words_1, _), unlabelled_1, (test_words_1, _) = data.date_fields(10, 20, seed=1, test=30)
    assert words.shape == tags.shape == (10, words.shape[1]) and unlabelled.shape[0] == 20
    assert not np.array_equal(words, words_1) and not np.array_equal(unlabelled, unlabelled_1)
    np.testing.assert_array_equal(test_words, test_words_1)
    # No held-out sequence is among the labelled or unlabelled ones of these seeds.
    seen = {tuple(row) for row in np.concatenate([words, unlabelled, words_1, unlabelled_1])}
    assert not seen & {tuple(row) for row in test_words}
    assert ((tags > 0) == (words > 0)).all() and ((test_tags > 0) == (test_words > 0)).all()


def test_the_character_table_spells_each_word_id():
    table = data.character_table(DATE_FIELD_VOCABULARY)
    assert table.shape[0] == len(DATE_FIELD_VOCABULARY) + 4
    assert not table[0].any()  # padding
    row = 4 + DATE_FIELD_VOCABULARY.index("September")
    np.testing.assert_array_equal(table[row], character_ids(tf.constant("September"), 12).numpy())
    words = np.array([[row, 0]])
    inputs = data.model_inputs(words, table)
    assert inputs["characters"].shape == (1, 2, 12) and not inputs["characters"][0, 1].any()
    assert set(data.model_inputs(words)) == {"words"}


@pytest.mark.parametrize("characters", [False, True])
def test_the_stream_alternates_marked_batches_of_fixed_shape(characters):
    tagging_data = data.date_field_data("date_fields", OPTIONS, 40, seed=0, characters=characters)
    assert tagging_data.views == ("forward", "past")
    assert tagging_data.tag_names == DATE_FIELD_TAGS
    batches = list(data.training_dataset(tagging_data, 8).take(4).as_numpy_iterator())
    assert [float(y["labelled"][0]) for _, y in batches] == [1.0, 0.0, 1.0, 0.0]
    for x, y in batches:
        assert x["words"].shape == y["date_fields"].shape == (8, x["words"].shape[1])
        assert ("characters" in x) == characters
        labelled = y["labelled"][0] == 1.0
        assert (y["date_fields"] > 0).any() == labelled
        assert ((y["date_fields"] > 0) == (x["words"] > 0)).all() or not labelled


def test_unlabelled_off_streams_labelled_batches_only_and_no_views():
    options = dict(OPTIONS, unlabelled="off")
    tagging_data = data.date_field_data("date_fields", options, 40, seed=0, characters=False)
    assert tagging_data.unlabelled is None and tagging_data.views == ()
    batches = list(data.training_dataset(tagging_data, 8).take(3).as_numpy_iterator())
    assert all(y["labelled"].min() == 1.0 for _, y in batches)


def test_a_multi_task_stream_labels_each_task_in_turn():
    (words, tags), unlabelled, _ = data.date_fields(12, 30, seed=0, test=1)
    labelled = {"a": (words[:6], tags[:6]), "b": (words[6:], tags[6:])}
    table = data.character_table(DATE_FIELD_VOCABULARY)
    stream = data.stream_dataset(labelled, unlabelled, 4, table)
    kinds = []
    for x, y in stream.take(8).as_numpy_iterator():
        assert x["characters"].shape == (4, words.shape[1], 12)
        kinds.append([task for task in ("a", "b") if y[task].any()] or ["-"])
        assert float(y["labelled"][0]) == (kinds[-1] != ["-"])
    assert kinds == [["a"], ["-"], ["b"], ["-"]] * 2


def test_cvt_adds_unlabelled_steps_to_the_same_labelled_schedule():
    assert data.steps_per_epoch(None, 300) == 300
    assert data.steps_per_epoch(np.zeros((5, 3)), 300) == 600

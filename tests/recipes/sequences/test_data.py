"""The sequences family's data: generated examples, the text pairs' options, splits and cuts."""

import numpy as np
import pytest

from keras_adl.recipes.sequences import data
from keras_adl.recipes.sequences.spec import SORT_LENGTH
from keras_adl.text import TextPairTokenizer
from keras_adl.training.rundir import RecipeError


def test_generated_examples_are_seeded_model_inputs_targets_and_texts():
    inputs, targets, raw = data.date_examples(8, seed=1)
    assert set(inputs) == {"source", "decoder_input"} and targets.shape == (8, 12)
    assert len(raw["source_text"]) == 8
    again = data.date_examples(8, seed=1)[0]
    np.testing.assert_array_equal(inputs["source"], again["source"])
    inputs, targets, raw = data.sort_examples(4, seed=0)
    assert set(inputs) == {"inputs", "decoder_input"}
    assert inputs["inputs"].shape == (4, SORT_LENGTH, 1) and targets.shape == (4, SORT_LENGTH)


def test_the_target_case_follows_the_tokens_and_keep_needs_subwords():
    assert data.cased_target({"tokens": "subword"})
    assert not data.cased_target({"tokens": "subword", "target_case": "fold"})
    assert not data.cased_target({"tokens": "word"})
    with pytest.raises(RecipeError, match="--target-case keep needs --tokens subword"):
        data.cased_target({"tokens": "char", "target_case": "keep"})


def test_training_pairs_hold_out_a_seeded_split_and_cut_to_samples(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"source {i}\ttarget {i}\n" for i in range(100)))
    options = {"data": str(path), "validation_split": 0.05}
    sources, targets, held_out, available = data.training_pairs(options, 10**6)
    assert (len(sources), len(held_out[0]), available) == (95, 5, 95)
    assert not set(sources) & set(held_out[0])
    assert data.training_pairs(options, 10**6)[2] == held_out  # seeded
    cut, _, same_held_out, available = data.training_pairs(options, 50)
    assert available == 95 and len(cut) == 50 and same_held_out == held_out
    with pytest.raises(RecipeError, match="not found|No such file"):
        data.load_pairs(str(tmp_path / "none.tsv"))


def test_fitting_pairs_leave_out_pairs_longer_than_max_length():
    sources = ["a b", "a b c d e", "a"]
    targets = ["x y", "x", "x y z w"]  # the target needs its </s> too
    tokenizer = TextPairTokenizer.build(sources, targets, level="word")
    kept_sources, kept_targets, left_out = data.fitting_pairs(tokenizer, sources, targets, 4)
    assert (kept_sources, kept_targets, left_out) == (["a b"], ["x y"], 2)
    assert data.held_out_dataset(tokenizer, [], [], 8, 4) is None
    batches = list(data.held_out_dataset(tokenizer, kept_sources, kept_targets, 8, 4))
    assert len(batches) == 1 and batches[0][1].shape == (1, 4)

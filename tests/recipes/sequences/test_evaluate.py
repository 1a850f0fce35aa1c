"""The sequences family's scorers: `translation_scores` against known values and by source
length."""

import pytest

from keras_adl.recipes.sequences.evaluate import (
    LENGTH_BUCKETS,
    length_bucket_name,
    translation_scores,
)


def test_translation_scores_against_known_values():
    # Corpus BLEU needs 4-grams: sentences of four words or more.
    texts = ["le chat dort sur le lit", "un chien court dans le jardin"]
    same = translation_scores(texts, texts)
    assert same["bleu"] == pytest.approx(100.0) and same["chrf"] == pytest.approx(100.0)
    assert same["exact_match"] == 1.0 and same["pairs"] == 2
    disjoint = translation_scores(["xyz"], ["abc"])
    assert disjoint["bleu"] == 0.0 and disjoint["chrf"] == 0.0 and disjoint["exact_match"] == 0.0
    half = translation_scores(["le chat dort", "un chien"], ["le chat dort", "le chien"])
    assert half["exact_match"] == 0.5 and 0.0 < half["chrf"] < 100.0


def test_translation_scores_by_source_length():
    predictions = ["a", "b", "c", "d"]
    references = ["a", "x", "c", "d"]
    scores = translation_scores(predictions, references, source_lengths=[3, 8, 20, 30])
    buckets = scores["by_source_length"]
    assert set(buckets) == {"1-6", "7-12", "13+"}  # every bucket holds a pair here
    assert buckets["1-6"]["exact_match"] == 1.0 and buckets["1-6"]["pairs"] == 1
    assert buckets["7-12"]["exact_match"] == 0.0 and buckets["13+"]["pairs"] == 2
    only_short = translation_scores(["a"], ["a"], source_lengths=[2])["by_source_length"]
    assert list(only_short) == ["1-6"]  # empty buckets are left out
    assert [length_bucket_name(*bucket) for bucket in LENGTH_BUCKETS] == ["1-6", "7-12", "13+"]


def test_translation_scores_reject_bad_input():
    with pytest.raises(ValueError, match="non-empty and of one length; received 2 and 1"):
        translation_scores(["a", "b"], ["a"])
    with pytest.raises(ValueError, match="one length per prediction"):
        translation_scores(["a"], ["a"], source_lengths=[1, 2])

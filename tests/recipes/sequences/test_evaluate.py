"""The sequences family's scorers: `translation_scores` against known values and by source
length; a translation memory completing a model (`with_memory`) from the threshold chosen on
development pairs."""

import numpy as np
import pytest

from keras_adl.recipes.sequences.evaluate import (
    EXACT_ONLY,
    LENGTH_BUCKETS,
    choose_memory_threshold,
    length_bucket_name,
    translation_scores,
    with_memory,
)
from keras_adl.text import TextPairTokenizer


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


def _found(targets, scores, exact, index=None):
    index = list(range(len(targets))) if index is None else index
    return {
        "target": [t.encode() for t in targets],
        "score": np.array(scores, np.float32),
        "exact": np.array(exact),
        "index": np.array(index),
    }


def test_the_memory_answers_exact_matches_and_matches_from_its_threshold():
    found = _found(["m0", "m1", "m2", "m3"], [1.0, 0.9, 0.5, 0.95], [True, False, False, False])
    found["index"][3] = -1  # nothing found (a memory of one pair, excluded)
    outputs, chosen = with_memory(["p0", "p1", "p2", "p3"], found, 0.8)
    assert outputs == ["m0", "m1", "p2", "p3"] and chosen.tolist() == [True, True, False, False]
    outputs, _ = with_memory(["p0", "p1", "p2", "p3"], found, EXACT_ONLY)
    assert outputs == ["m0", "p1", "p2", "p3"]  # exact matches only
    # A fuzzy match missing a span of its source is not trusted; an exact one always is.
    found["complete"] = np.array([False, False, True, True])
    outputs, chosen = with_memory(["p0", "p1", "p2", "p3"], found, 0.8)
    assert outputs == ["m0", "p1", "p2", "p3"] and chosen.tolist() == [True, False, False, False]


def test_the_threshold_is_the_best_on_development_pairs():
    references = ["le chat dort", "le chien court", "un oiseau vole", "la vache mange"]
    words = references + ["xx yy zz ww vv uu"]
    tokenizer = TextPairTokenizer.build(words, words, level="word")
    predictions = ["le chat dort", "le chien court", "xx", "yy"]  # right on the first two
    # The memory is right on the last two, and its scores there are the higher ones.
    found = _found(
        ["zz", "ww", "un oiseau vole", "la vache mange"], [0.3, 0.4, 0.7, 0.9], [False] * 4
    )
    threshold, figures = choose_memory_threshold(tokenizer, predictions, found, references)
    assert threshold == pytest.approx(0.69)  # 0.7 to hundredths, down: both of the memory's
    assert figures["chrf"] == pytest.approx(100.0)
    assert figures["model_chrf"] < 100.0 and figures["memory_chrf"] < 100.0
    # A memory never better than the model: exact matches only.
    found = _found(["zz", "ww", "vv", "uu"], [0.3, 0.4, 0.7, 0.9], [False] * 4)
    threshold, _ = choose_memory_threshold(tokenizer, references, found, references)
    assert threshold == EXACT_ONLY

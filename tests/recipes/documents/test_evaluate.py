"""The documents family's figure: how often the sentence attention peaks on the key sentence."""

import numpy as np
import pytest

from keras_adl.recipes.documents.evaluate import sentence_attention_hit_rate


def test_hit_rate_on_a_hand_made_example():
    attention = np.array(
        [
            [0.1, 0.8, 0.1, 0.0],  # argmax 1, key 1: hit
            [0.6, 0.2, 0.2, 0.0],  # argmax 0, key 2: miss
            [0.0, 0.0, 0.3, 0.7],  # argmax 3, key 3: hit
            [0.25, 0.25, 0.5, 0.0],  # argmax 2, key 0: miss
        ]
    )
    keys = np.array([1, 2, 3, 0])
    assert sentence_attention_hit_rate(attention, keys) == 0.5
    assert sentence_attention_hit_rate(attention, [1, 0, 3, 2]) == 1.0
    assert isinstance(sentence_attention_hit_rate(attention, keys), float)


@pytest.mark.parametrize(
    "attention, keys, error, message",
    [
        (np.zeros(4), [0], ValueError, r"`sentence_attention` must have shape \[N, S\]"),
        (
            np.zeros((2, 3)),
            [0, 1, 2],
            ValueError,
            r"`key_sentences` must have shape \[N\] with N = 2",
        ),
        (np.zeros((2, 3)), [[0, 1]], ValueError, r"`key_sentences` must have shape"),
        (np.zeros((2, 3)), [0, 3], ValueError, r"`key_sentences` must lie in \[0, 3\)"),
        (np.zeros((2, 3)), [0.0, 1.0], TypeError, r"`key_sentences` must be integers"),
    ],
)
def test_hit_rate_shape_errors(attention, keys, error, message):
    with pytest.raises(error, match=message):
        sentence_attention_hit_rate(attention, keys)

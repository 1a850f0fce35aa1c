"""Behaviour checks shared by the Bahdanau and Luong attention tests."""

import keras
import numpy as np
import pytest

from tests.harness import np_


def check_sequence_query_equals_step_loop(layer, query, value, mask=None):
    """The [B, S, Dq] call equals a Python loop of [B, Dq] calls."""
    context, weights = layer(query, value, value_mask=mask, return_attention_scores=True)
    for s in range(query.shape[1]):
        c, w = layer(query[:, s], value, value_mask=mask, return_attention_scores=True)
        np.testing.assert_allclose(np_(c), np_(context)[:, s], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np_(w), np_(weights)[:, s], rtol=1e-5, atol=1e-6)


def check_precomputed_keys_equal_fresh(layer, query, value):
    fresh = np_(layer(query, value))
    keys = layer.precompute_keys(value)
    np.testing.assert_allclose(np_(layer(query, value, processed_keys=keys)), fresh, atol=1e-6)


def check_masking(layer, query, value):
    """Masked memory gets zero weight, rows sum to 1, padded values change nothing."""
    mask = np.ones(value.shape[:2], bool)
    mask[0, -2:] = False
    mask[1, 1:] = False
    context, weights = layer(query, value, value_mask=mask, return_attention_scores=True)
    weights = np_(weights)
    expanded = mask[:, None, :] if weights.ndim == 3 else mask
    assert np.all(weights[np.broadcast_to(~expanded, weights.shape)] == 0)
    np.testing.assert_allclose(weights.sum(-1), 1.0, rtol=1e-6)
    changed = value.copy()
    changed[~mask] = 50.0
    np.testing.assert_allclose(
        np_(layer(query, changed, value_mask=mask)), np_(context), rtol=1e-5, atol=1e-6
    )
    # A fully masked memory gives zero context, not NaN.
    empty = layer(query, value, value_mask=np.zeros_like(mask))
    assert np.all(np_(empty) == 0)


def check_keras_mask_is_used(layer_factory):
    tokens = keras.Input((None,), dtype="int32")
    memory = keras.layers.Embedding(20, 8, mask_zero=True)(tokens)
    query = keras.Input((8,))
    context, weights = layer_factory()(query, memory, return_attention_scores=True)
    model = keras.Model([query, tokens], weights)
    w = np_(model([np.ones((1, 8), "float32"), np.array([[3, 4, 0, 0]])]))
    assert np.all(w[0, 2:] == 0)
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)


def check_bad_input(layer):
    name = type(layer).__name__
    with pytest.raises(
        ValueError, match=rf"{name}: `query` must have rank 2 or 3; received shape \(2,\)"
    ):
        layer(np.zeros((2,), "float32"), np.zeros((2, 5, 8), "float32"))
    with pytest.raises(ValueError, match=r"`value` must have rank 3; received shape \(2, 8\)"):
        layer(np.zeros((2, 8), "float32"), np.zeros((2, 8), "float32"))
    with pytest.raises(ValueError, match=r"batch sizes of `query` and `value` must match"):
        layer(np.zeros((2, 8), "float32"), np.zeros((3, 5, 8), "float32"))

import keras
import numpy as np
import pytest

from keras_adl.layers import AttentionRNNDecoder
from tests.harness import np_, run_layer_test

INPUTS = np.random.RandomState(0).rand(2, 4, 5).astype("float32")
MEMORY = np.random.RandomState(1).rand(2, 6, 7).astype("float32")
MASK = np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], bool)


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        AttentionRNNDecoder,
        {"units": 8},
        {"inputs": INPUTS, "memory": MEMORY},
        [(2, 4, 15), (2, 4, 6)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=6,
        full=True,
    )


def test_harness_lstm_luong():
    run_layer_test(
        AttentionRNNDecoder,
        {"units": 8, "cell": "lstm", "attention": "luong", "luong_score": "general"},
        {"inputs": INPUTS, "memory": MEMORY},
        [(2, 4, 15), (2, 4, 6)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=4,
    )


@pytest.mark.parametrize("cell", ["gru", "lstm"])
def test_sequence_call_equals_step_loop(cell):
    layer = AttentionRNNDecoder(8, cell=cell)
    outputs, weights, final = layer(
        INPUTS, MEMORY, memory_mask=MASK, return_attention_scores=True, return_state=True
    )
    states = layer.get_initial_state(2)
    keys = layer.precompute_keys(MEMORY)
    for i in range(4):
        out, w, states = layer.step(INPUTS[:, i], states, MEMORY, keys, MASK)
        np.testing.assert_allclose(np_(out), np_(outputs)[:, i], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np_(w), np_(weights)[:, i], rtol=1e-5, atol=1e-6)
    for a, b in zip(states, final):
        np.testing.assert_allclose(np_(a), np_(b), rtol=1e-5, atol=1e-6)


def test_attention_uses_the_previous_state_and_context_is_in_the_output():
    layer = AttentionRNNDecoder(8)
    outputs, weights = layer(INPUTS, MEMORY, return_attention_scores=True)
    # Step 0 attends with the zero initial state: weights do not depend on the step-0 input.
    changed = INPUTS.copy()
    changed[:, 0] += 3.0
    _, weights2 = layer(changed, MEMORY, return_attention_scores=True)
    np.testing.assert_allclose(np_(weights)[:, 0], np_(weights2)[:, 0], atol=1e-6)
    # The state is carried: changing step 0 changes the attention of step 2.
    assert not np.allclose(np_(weights)[:, 2], np_(weights2)[:, 2])
    # The last H features of each output are the context Σ α h.
    context = np.einsum("bst,bth->bsh", np_(weights), MEMORY)
    np.testing.assert_allclose(np_(outputs)[..., 8:], context, rtol=1e-5, atol=1e-6)


def test_memory_padding_changes_nothing_and_gets_zero_weight():
    layer = AttentionRNNDecoder(8)
    outputs, weights = layer(INPUTS, MEMORY, memory_mask=MASK, return_attention_scores=True)
    changed = MEMORY.copy()
    changed[~MASK] = 9.0
    outputs2 = layer(INPUTS, changed, memory_mask=MASK)
    np.testing.assert_allclose(np_(outputs), np_(outputs2), atol=1e-6)
    assert np.all(np_(weights)[0, :, 4:] == 0)


def test_keras_masks_are_read_and_propagated():
    source = keras.Input((None,), dtype="int32")
    target = keras.Input((None,), dtype="int32")
    memory = keras.layers.Embedding(20, 7, mask_zero=True)(source)
    embedded = keras.layers.Embedding(20, 5, mask_zero=True)(target)
    outputs, weights = AttentionRNNDecoder(8)(embedded, memory, return_attention_scores=True)
    assert outputs._keras_mask.shape[1] is None  # symbolic: the target's time steps
    model = keras.Model([source, target], weights)
    w = np_(model([np.array([[3, 4, 0]]), np.array([[1, 2]])]))
    assert np.all(w[0, :, 2] == 0)
    # Eager: the outputs carry the target's mask (not the memory's).
    targets = np.array([[1, 2, 0], [3, 0, 0]])
    eager, _ = AttentionRNNDecoder(8)(
        keras.layers.Embedding(20, 5, mask_zero=True)(targets),
        keras.layers.Embedding(20, 7, mask_zero=True)(np.array([[3, 4, 0, 0], [5, 6, 7, 0]])),
        return_attention_scores=True,
    )
    np.testing.assert_array_equal(np_(eager._keras_mask), targets != 0)


def test_bad_input():
    layer = AttentionRNNDecoder(8, cell="lstm")
    with pytest.raises(ValueError, match=r"batch sizes of `inputs` and `memory` must match"):
        layer(INPUTS, MEMORY[:1])
    with pytest.raises(ValueError, match=r"`initial_state` must be a list of 2 state\(s\)"):
        layer(INPUTS, MEMORY, initial_state=[np.zeros((2, 8), "float32")])
    with pytest.raises(ValueError, match="`cell` must be one of"):
        AttentionRNNDecoder(8, cell="rnn")
    with pytest.raises(ValueError, match="must be built"):
        AttentionRNNDecoder(8).precompute_keys(MEMORY)

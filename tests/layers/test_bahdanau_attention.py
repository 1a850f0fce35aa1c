import keras
import numpy as np
import pytest

from keras_adl.layers import BahdanauAttention
from tests.harness import np_, run_layer_test
from tests.layers import sequence_attention_checks as checks

QUERY = np.random.RandomState(0).rand(2, 3, 6).astype("float32")
VALUE = np.random.RandomState(1).rand(2, 5, 8).astype("float32")


def test_harness_sequence_query():
    run_layer_test(
        BahdanauAttention,
        {"units": 4},
        {"query": QUERY, "value": VALUE},
        [(2, 3, 8), (2, 3, 5)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=3,  # W_a, U_a, v_a
    )


def test_harness_sequence_query_normalized():
    run_layer_test(
        BahdanauAttention,
        {"units": 4, "normalize": True},
        {"query": QUERY, "value": VALUE},
        [(2, 3, 8), (2, 3, 5)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=5,  # W_a, U_a, v_a, g, b
    )


@pytest.mark.portable
def test_full_harness_single_step_with_separate_key():
    run_layer_test(
        BahdanauAttention,
        {"units": 4, "dropout": 0.2},
        {"query": QUERY[:, 0], "value": VALUE, "key": VALUE[..., :3] * 2},
        [(2, 8), (2, 5)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=3,
        full=True,
        no_gradient={1: ("input:value",)},  # the weights read the separate keys only
    )


def test_values_against_formula():
    layer = BahdanauAttention(4)
    context, weights = layer(QUERY, VALUE, return_attention_scores=True)
    wa, ua = np_(layer.query_dense.kernel), np_(layer.key_dense.kernel)
    v = np_(layer.attention_v)
    e = np.tanh((QUERY @ wa)[:, :, None] + (VALUE @ ua)[:, None]) @ v
    a = np.exp(e) / np.exp(e).sum(-1, keepdims=True)
    np.testing.assert_allclose(np_(weights), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np_(context), a @ VALUE, rtol=1e-5, atol=1e-6)


def test_normalized_score_uses_g_v_over_norm_and_bias():
    layer = BahdanauAttention(4, normalize=True)
    layer.build(QUERY.shape, VALUE.shape)
    layer.attention_b.assign(np.array([0.3, -0.2, 0.1, 0.5], "float32"))
    layer.attention_g.assign(2.0)
    _, weights = layer(QUERY, VALUE, return_attention_scores=True)
    wa, ua = np_(layer.query_dense.kernel), np_(layer.key_dense.kernel)
    v = np_(layer.attention_v)
    v = 2.0 * v / np.linalg.norm(v)
    e = np.tanh((QUERY @ wa)[:, :, None] + (VALUE @ ua)[:, None] + np_(layer.attention_b)) @ v
    a = np.exp(e) / np.exp(e).sum(-1, keepdims=True)
    np.testing.assert_allclose(np_(weights), a, rtol=1e-5, atol=1e-6)
    fresh = BahdanauAttention(16, normalize=True)
    fresh.build(QUERY.shape, VALUE.shape)
    assert float(np_(fresh.attention_g)) == pytest.approx(np.sqrt(1 / 16))


def test_sequence_query_equals_loop_of_steps():
    mask = np.array([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], bool)
    checks.check_sequence_query_equals_step_loop(BahdanauAttention(4), QUERY, VALUE, mask)


def test_precomputed_keys_equal_fresh():
    checks.check_precomputed_keys_equal_fresh(BahdanauAttention(4), QUERY, VALUE)
    checks.check_precomputed_keys_equal_fresh(BahdanauAttention(4), QUERY[:, 0], VALUE)


def test_masking():
    checks.check_masking(BahdanauAttention(4), QUERY, VALUE)
    checks.check_masking(BahdanauAttention(4), QUERY[:, 0], VALUE)
    checks.check_keras_mask_is_used(lambda: BahdanauAttention(4))


def test_query_mask_propagates():
    # The context of each query step carries that step's mask; the value's own mask (another
    # length) shapes the attention, not the output's mask.
    tokens = np.array([[3, 4, 0, 0], [5, 0, 0, 0]])
    query = keras.layers.Embedding(20, 6, mask_zero=True)(tokens)
    value = keras.layers.Embedding(20, 8, mask_zero=True)(np.array([[1, 2, 3], [4, 0, 0]]))
    context = BahdanauAttention(4)(query, value)
    np.testing.assert_array_equal(np_(context._keras_mask), tokens != 0)
    symbolic = keras.layers.Embedding(20, 6, mask_zero=True)(keras.Input((None,), dtype="int32"))
    assert BahdanauAttention(4)(symbolic, keras.Input((None, 8)))._keras_mask.shape[1] is None


def test_bad_input():
    checks.check_bad_input(BahdanauAttention(4))
    with pytest.raises(ValueError, match="units"):
        BahdanauAttention(0)
    with pytest.raises(ValueError, match="must be built"):
        BahdanauAttention(4).precompute_keys(VALUE)


def test_projections_start_from_different_weights():
    layer = BahdanauAttention(4)
    layer(VALUE[:, 0], VALUE)  # query and key of the same size: W_a and U_a have one shape
    assert not np.allclose(np_(layer.query_dense.kernel), np_(layer.key_dense.kernel))


def test_mask_and_processed_keys_of_the_wrong_length_raise():
    layer = BahdanauAttention(4)
    with pytest.raises(ValueError, match=r"time steps of `value_mask` and `value` must match"):
        layer(QUERY, VALUE, value_mask=np.ones((2, 4), bool))
    keys = layer.precompute_keys(VALUE[:, :3])
    with pytest.raises(ValueError, match=r"time steps of `processed_keys` and `value` must match"):
        layer(QUERY, VALUE, processed_keys=keys)

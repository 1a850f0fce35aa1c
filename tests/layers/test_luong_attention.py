import numpy as np
import pytest

from keras_adl.layers import LuongAttention
from tests.harness import np_, run_layer_test
from tests.layers import sequence_attention_checks as checks

QUERY = np.random.RandomState(0).rand(2, 3, 8).astype("float32")
VALUE = np.random.RandomState(1).rand(2, 5, 8).astype("float32")


@pytest.mark.portable
def test_full_harness_general():
    run_layer_test(
        LuongAttention,
        {"score": "general"},
        {"query": QUERY[..., :6], "value": VALUE},
        [(2, 3, 8), (2, 3, 5)],
        call_kwargs={"return_attention_scores": True},
        expected_num_trainable_weights=1,
        full=True,
    )


@pytest.mark.parametrize("score", ["dot", "scaled_dot"])
def test_harness_parameter_free(score):
    run_layer_test(
        LuongAttention,
        {"score": score, "dropout": 0.1},
        {"query": QUERY[:, 0], "value": VALUE},
        (2, 8),
        expected_num_trainable_weights=0,
    )


@pytest.mark.parametrize("score", ["dot", "general", "scaled_dot"])
def test_values_against_formula(score):
    layer = LuongAttention(score=score)
    context, weights = layer(QUERY, VALUE, return_attention_scores=True)
    keys = VALUE @ np_(layer.key_dense.kernel) if score == "general" else VALUE
    e = np.einsum("bsd,btd->bst", QUERY, keys)
    if score == "scaled_dot":
        e = e / np.sqrt(8)
    a = np.exp(e - e.max(-1, keepdims=True))
    a /= a.sum(-1, keepdims=True)
    np.testing.assert_allclose(np_(weights), a, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np_(context), a @ VALUE, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("score", ["dot", "general"])
def test_sequence_query_equals_loop_of_steps(score):
    mask = np.array([[1, 1, 1, 1, 0], [1, 1, 0, 0, 0]], bool)
    checks.check_sequence_query_equals_step_loop(LuongAttention(score), QUERY, VALUE, mask)


def test_precomputed_keys_equal_fresh():
    checks.check_precomputed_keys_equal_fresh(LuongAttention("general"), QUERY, VALUE)


def test_masking():
    checks.check_masking(LuongAttention("scaled_dot"), QUERY, VALUE)
    checks.check_keras_mask_is_used(lambda: LuongAttention("dot"))


def test_bad_input():
    checks.check_bad_input(LuongAttention("general"))
    with pytest.raises(ValueError, match="`score` must be one of"):
        LuongAttention("concat")
    with pytest.raises(ValueError, match=r"same last dimension.*query shape \(2, 6\)"):
        LuongAttention("dot")(np.zeros((2, 6), "float32"), VALUE)

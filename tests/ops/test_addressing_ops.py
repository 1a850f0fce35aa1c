"""Addressing ops against hand-checked cases, the papers' formulas and the DNC invariants."""

import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from keras_adl.ops import addressing as A
from tests.harness import np_, value_and_grads

pytestmark = pytest.mark.portable  # run on every backend by make test-backends


def t(x):
    return ops.convert_to_tensor(np.asarray(x, "float32"))


# --- NTM ------------------------------------------------------------------------------------


def test_shift_plus_one_moves_right_and_wraps():
    w = t([[[0.7, 0.0, 0.0, 0.3]]])
    right = t([[[0.0, 0.0, 1.0]]])
    np.testing.assert_allclose(np_(A.circular_shift(w, right)), [[[0.3, 0.7, 0.0, 0.0]]])
    left = t([[[1.0, 0.0, 0.0]]])
    np.testing.assert_allclose(np_(A.circular_shift(w, left)), [[[0.0, 0.0, 0.3, 0.7]]])


def test_shift_matches_the_papers_sum_formula():
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(7), size=(2, 3)).astype("float32")
    s = rng.dirichlet(np.ones(5), size=(2, 3)).astype("float32")
    got = np_(A.circular_shift(t(w), t(s)))
    n, radius = 7, 2
    want = np.zeros_like(w)
    for i in range(n):
        for j in range(n):
            d = (i - j) % n  # w̃(i) = Σ_j w(j) s(i − j mod N), s indexed by shift + R
            k = d + radius if d <= radius else d - n + radius
            if 0 <= k < 5:
                want[..., i] += w[..., j] * s[..., k]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_shift_needs_an_odd_number_of_shifts():
    with pytest.raises(ValueError, match="shift_weights.*odd"):
        A.circular_shift(t(np.ones((1, 1, 4))), t(np.ones((1, 1, 2))))


def test_sharpen_with_gamma_one_is_identity():
    w = t([[[0.1, 0.2, 0.7]], [[0.5, 0.5, 0.0]]])
    np.testing.assert_allclose(np_(A.sharpen(w, t([[1.0], [1.0]]))), np_(w), atol=1e-5)


def test_sharpen_formula_and_huge_gamma_stays_finite():
    w = np.array([[[0.2, 0.3, 0.5]]], "float32")
    got = np_(A.sharpen(t(w), t([[3.0]])))
    np.testing.assert_allclose(got, w**3 / (w**3).sum(-1, keepdims=True), rtol=1e-4)
    huge = np_(A.sharpen(t(np.array([[[0.0, 0.4, 0.6]]])), t([[1e4]])))
    assert np.all(np.isfinite(huge))
    np.testing.assert_allclose(huge, [[[0.0, 0.0, 1.0]]], atol=1e-6)


def test_content_addressing_picks_the_matching_row():
    rng = np.random.default_rng(1)
    memory = rng.normal(size=(2, 6, 5)).astype("float32")
    keys = np.stack([memory[0, [4, 1]], memory[1, [0, 5]]]) * 3.0  # scale does not matter
    w = np_(A.content_addressing(t(memory), t(keys), t(np.full((2, 2), 100.0))))
    np.testing.assert_array_equal(w.argmax(-1), [[4, 1], [0, 5]])
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)


def test_content_addressing_formula():
    rng = np.random.default_rng(2)
    memory = rng.normal(size=(1, 4, 3))
    key = rng.normal(size=(1, 1, 3))
    beta = 2.5
    cos = (memory[0] @ key[0, 0]) / (np.linalg.norm(memory[0], axis=1) * np.linalg.norm(key))
    want = np.exp(beta * cos) / np.exp(beta * cos).sum()
    got = np_(A.content_addressing(t(memory), t(key), t([[beta]])))
    np.testing.assert_allclose(got[0, 0], want, rtol=1e-4)


def test_zero_memory_and_zero_keys_give_uniform_finite_weights():
    w = np_(
        A.content_addressing(t(np.zeros((2, 5, 3))), t(np.zeros((2, 2, 3))), t(np.ones((2, 2))))
    )
    np.testing.assert_allclose(w, 0.2, rtol=1e-6)
    _, grads = value_and_grads(
        lambda keys, memory: ops.sum(
            A.content_addressing(memory, keys, t([[1.0]])) * t([[[1.0, 2.0, 3.0, 4.0]]])
        ),
        np.zeros((1, 1, 3), "float32"),
        np.zeros((1, 4, 3), "float32"),
    )
    for g in grads:
        assert np.all(np.isfinite(np_(g)))


def test_content_addressing_epsilon_is_under_the_square_roots_only():
    """K = k·M_i / (sqrt(‖k‖² + ε) sqrt(‖M_i‖² + ε)): with ‖k‖² = ‖M_0‖² = ε the cosine is 1/2
    (DeepMind's extra ``+ ε`` on the product would give 1/3, plain norms 1)."""
    eps = A.EPSILON
    small = np.sqrt(eps)
    memory = t([[[small, 0.0], [0.0, 0.0]]])  # slot 1 empty: cosine 0
    w = np_(A.content_addressing(memory, t([[[small, 0.0]]]), t([[1.0]])))
    cosine = np.log(w[0, 0, 0] / w[0, 0, 1])  # β = 1
    np.testing.assert_allclose(cosine, eps / (np.sqrt(eps + eps) ** 2), rtol=1e-3)  # = 1/2


def test_huge_strengths_stay_finite():
    rng = np.random.default_rng(3)
    w = np_(
        A.content_addressing(
            t(rng.normal(size=(1, 4, 3))), t(rng.normal(size=(1, 1, 3))), t([[1e6]])
        )
    )
    assert np.all(np.isfinite(w))
    np.testing.assert_allclose(w.sum(-1), 1.0, rtol=1e-6)


def test_content_addressing_rejects_mismatched_widths():
    with pytest.raises(ValueError, match="width W.*`memory`.*`keys`"):
        A.content_addressing(t(np.ones((1, 4, 3))), t(np.ones((1, 1, 5))), t([[1.0]]))


def test_interpolate_formula():
    c, p = t([[[0.2, 0.8]]]), t([[[1.0, 0.0]]])
    np.testing.assert_allclose(np_(A.interpolate(c, p, t([[0.25]]))), [[[0.8, 0.2]]], rtol=1e-6)


def test_erase_and_write_formula_with_two_heads():
    rng = np.random.default_rng(4)
    memory = rng.normal(size=(2, 5, 3))
    w = rng.dirichlet(np.ones(5), size=(2, 2))
    e = rng.uniform(size=(2, 2, 3))
    a = rng.normal(size=(2, 2, 3))
    want = memory.copy()
    for b in range(2):
        keep = np.ones((5, 3))
        for h in range(2):
            keep *= 1 - np.outer(w[b, h], e[b, h])
        want[b] = memory[b] * keep + sum(np.outer(w[b, h], a[b, h]) for h in range(2))
    got = np_(A.erase_and_write(t(memory), t(w), t(e), t(a)))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_read_memory_formula():
    rng = np.random.default_rng(5)
    memory, w = rng.normal(size=(2, 5, 3)), rng.dirichlet(np.ones(5), size=(2, 4))
    np.testing.assert_allclose(
        np_(A.read_memory(t(memory), t(w))), np.einsum("bhn,bnw->bhw", w, memory), rtol=1e-5
    )


# --- DNC ------------------------------------------------------------------------------------


def test_allocation_goes_to_the_least_used_slot():
    usage = np.array([[0.9, 0.3, 0.05, 0.7], [0.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 0.2]])
    a = np_(A.allocation_weights(t(usage)))
    np.testing.assert_array_equal(a.argmax(-1), [2, 0, 3])
    assert np.all(a >= 0) and np.all(a.sum(-1) <= 1 + 1e-6)


def test_allocation_formula_against_a_sort():
    rng = np.random.default_rng(6)
    usage = rng.uniform(size=(3, 6))
    got = np_(A.allocation_weights(t(usage)))
    u = 1e-6 + (1 - 1e-6) * usage
    want = np.zeros_like(u)
    for b in range(3):
        order = np.argsort(u[b], kind="stable")
        prod = 1.0
        for j in order:
            want[b, j] = (1 - u[b, j]) * prod
            prod *= u[b, j]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)


def test_allocation_with_zero_usage_goes_to_one_slot():
    a = np_(A.allocation_weights(t(np.zeros((2, 8)))))
    np.testing.assert_allclose(a.max(-1), 1.0, atol=1e-5)
    assert np.sum(a > 1e-3) == 2  # one slot per example
    assert np.all(np.isfinite(a))


def test_allocation_gradient_is_finite_with_full_and_empty_slots():
    _, (g,) = value_and_grads(
        lambda usage: ops.sum(A.allocation_weights(usage) * t([[1.0, 2.0, 3.0, 4.0]])),
        np.array([[0.0, 1.0, 1.0, 0.5]], "float32"),
    )
    g = np_(g)
    assert np.all(np.isfinite(g)) and np.any(g != 0)


def test_usage_formula():
    rng = np.random.default_rng(7)
    u, ww = rng.uniform(size=(2, 5)), rng.dirichlet(np.ones(5), size=2)
    f, wr = rng.uniform(size=(2, 3)), rng.dirichlet(np.ones(5), size=(2, 3))
    psi = np.prod(1 - f[:, :, None] * wr, axis=1)
    want = (u + ww - u * ww) * psi
    np.testing.assert_allclose(np_(A.update_usage(t(u), t(ww), t(f), t(wr))), want, rtol=1e-5)
    # Several write heads act as their union.
    two = rng.dirichlet(np.ones(5), size=(2, 2))
    union = 1 - np.prod(1 - two, axis=1)
    np.testing.assert_allclose(
        np_(A.update_usage(t(u), t(two), t(f), t(wr))), (u + union - u * union) * psi, rtol=1e-5
    )


def test_usage_is_differentiable_in_the_write_weights():
    """Pinned choice (unlike DeepMind's stop_gradient, see `update_usage`):
    ∂u_t[i] / ∂w^w[i] = (1 − u_{t−1}[i]) ψ[i], and ∂u_t[i] / ∂w^w[j] = 0 for j ≠ i."""
    rng = np.random.default_rng(11)
    u = rng.uniform(size=(2, 5)).astype("float32")
    f, wr = rng.uniform(size=(2, 3)), rng.dirichlet(np.ones(5), size=(2, 3))
    psi = np.prod(1 - f[:, :, None] * wr, axis=1)
    write = rng.dirichlet(np.ones(5), size=2).astype("float32")
    rows = []  # row i of each example's Jacobian: d Σ_b u_t[b, i] / d w^w (examples independent)
    for i in range(5):
        _, (grad,) = value_and_grads(
            lambda w, i=i: ops.sum(A.update_usage(t(u), w, t(f), t(wr))[:, i]), write
        )
        rows.append(np_(grad))
    jacobian = np.stack(rows, axis=1)  # [B, N, N]
    want = np.stack([np.diag(d) for d in (1 - u) * psi])
    np.testing.assert_allclose(jacobian, want, rtol=1e-5, atol=1e-7)
    assert np.all(np.abs(np.diagonal(jacobian, axis1=1, axis2=2)) > 1e-3)


def test_precedence_sums_to_at_most_one():
    rng = np.random.default_rng(8)
    p = np.zeros((4, 6), "float32")
    for _ in range(20):
        w = rng.dirichlet(np.ones(6), size=4) * rng.uniform(size=(4, 1))
        p = np_(A.update_precedence(t(p), t(w)))
        assert np.all(p >= -1e-7) and np.all(p.sum(-1) <= 1 + 1e-5)


def test_link_invariants_over_random_writes():
    rng = np.random.default_rng(9)
    n = 6
    link, p = np.zeros((4, n, n), "float32"), np.zeros((4, n), "float32")
    for _ in range(25):
        w = (rng.dirichlet(np.ones(n) * 0.3, size=4) * rng.uniform(size=(4, 1))).astype("float32")
        link = np_(A.update_temporal_link(t(link), t(p), t(w)))
        p = np_(A.update_precedence(t(p), t(w)))
        assert np.all(link >= -1e-6) and np.all(link <= 1 + 1e-6)
        np.testing.assert_array_equal(np.diagonal(link, axis1=1, axis2=2), 0.0)
        assert np.all(link.sum(-1) <= 1 + 1e-5) and np.all(link.sum(-2) <= 1 + 1e-5)


def test_link_formula():
    rng = np.random.default_rng(10)
    link, p, w = (
        rng.uniform(size=(1, 4, 4)) / 4,
        rng.dirichlet(np.ones(4), 1),
        rng.dirichlet(np.ones(4), 1),
    )
    want = (1 - w[:, :, None] - w[:, None, :]) * link + w[:, :, None] * p[:, None, :]
    want[:, np.arange(4), np.arange(4)] = 0
    np.testing.assert_allclose(np_(A.update_temporal_link(t(link), t(p), t(w))), want, rtol=1e-5)


def test_link_records_write_order_and_directional_reads_follow_it():
    n = 4
    link, p = t(np.zeros((1, n, n))), t(np.zeros((1, n)))
    for slot in [2, 0, 3]:  # write slots 2, then 0, then 3
        w = t(np.eye(n)[[slot]])
        link = A.update_temporal_link(link, p, w)
        p = A.update_precedence(p, w)
    reading_0 = t(np.eye(n)[[[0]]])  # [1, 1, N]
    np.testing.assert_allclose(
        np_(A.directional_read_weights(link, reading_0, True)), [[np.eye(n)[3]]]
    )  # after 0 came 3
    np.testing.assert_allclose(
        np_(A.directional_read_weights(link, reading_0, False)), [[np.eye(n)[2]]]
    )  # before 0 came 2
    per_head = ops.stack([link, link], axis=1)  # [B, Hw, N, N]
    assert tuple(A.directional_read_weights(per_head, reading_0, True).shape) == (1, 1, 2, n)


def _writes(rng, shape, temperature):
    logits = rng.normal(size=shape) / temperature
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w = w / w.sum(-1, keepdims=True) * rng.uniform(0.5, 1.0, size=shape[:-1] + (1,))
    return w.astype("float32")


@pytest.mark.parametrize("heads", [None, 2])
def test_sparse_link_equals_the_dense_link_when_it_keeps_every_entry(heads):
    rng = np.random.default_rng(11)
    b, n = 3, 6
    shape = (b, n) if heads is None else (b, heads, n)
    link, p = np.zeros(shape + (n,), "float32"), np.zeros(shape, "float32")
    values, indices = A.initial_sparse_link(b, n, n, heads)
    for _ in range(12):
        w = _writes(rng, shape, 1.0)
        link = np_(A.update_temporal_link(t(link), t(p), t(w)))
        values, indices = A.update_sparse_temporal_link(values, indices, t(p), t(w))
        p = np_(A.update_precedence(t(p), t(w)))
        np.testing.assert_allclose(np_(A.sparse_link_to_dense(values, indices, n)), link, atol=1e-6)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_sparse_link_never_exceeds_the_dense_one_and_reads_match_its_entries(k):
    """Small K drops entries but adds none: 0 ≤ sparse ≤ dense entrywise; rows keep K distinct
    columns, the diagonal stays 0; the sparse reads equal the dense reads of the kept entries."""
    rng = np.random.default_rng(k)
    b, n, r = 3, 9, 2
    link, p = np.zeros((b, n, n), "float32"), np.zeros((b, n), "float32")
    values, indices = A.initial_sparse_link(b, n, k)
    for _ in range(15):
        w = _writes(rng, (b, n), 0.3)
        link = np_(A.update_temporal_link(t(link), t(p), t(w)))
        values, indices = A.update_sparse_temporal_link(values, indices, t(p), t(w))
        p = np_(A.update_precedence(t(p), t(w)))
        dense = np_(A.sparse_link_to_dense(values, indices, n))
        assert np.all(dense >= -1e-6) and np.all(dense <= link + 1e-5)
        np.testing.assert_array_equal(np.diagonal(dense, axis1=1, axis2=2), 0.0)
        cols = np_(indices)
        assert all(len(set(row)) == k for row in cols.reshape(-1, k).tolist())
        reads = rng.dirichlet(np.ones(n), size=(b, r)).astype("float32")
        for forward in (True, False):
            np.testing.assert_allclose(
                np_(A.sparse_directional_read_weights(values, indices, t(reads), forward)),
                np_(A.directional_read_weights(t(dense), t(reads), forward)),
                atol=1e-6,
            )
    if k < 4:  # K < N does drop entries (soft writes spread the precedence)
        assert np.abs(dense - link).max() > 1e-3


def test_sparse_link_with_one_entry_per_row_is_exact_for_one_hot_writes():
    """Writing one slot at a time (the copy task's pattern), each row has one entry: K = 1 loses
    nothing, and the reads follow the write order."""
    n = 6
    link, p = t(np.zeros((1, n, n))), t(np.zeros((1, n)))
    values, indices = A.initial_sparse_link(1, n, 1)
    for slot in [4, 1, 5, 0]:
        w = t(np.eye(n)[[slot]])
        link = A.update_temporal_link(link, p, w)
        values, indices = A.update_sparse_temporal_link(values, indices, p, w)
        p = A.update_precedence(p, w)
    np.testing.assert_allclose(np_(A.sparse_link_to_dense(values, indices, n)), np_(link))
    reading_1 = t(np.eye(n)[[[1]]])
    np.testing.assert_allclose(
        np_(A.sparse_directional_read_weights(values, indices, reading_1, True)), [[np.eye(n)[5]]]
    )
    np.testing.assert_allclose(
        np_(A.sparse_directional_read_weights(values, indices, reading_1, False)), [[np.eye(n)[4]]]
    )


def test_sparse_link_gradients_match_the_dense_link_at_k_equal_n():
    rng = np.random.default_rng(5)
    b, n = 2, 5
    p0 = t(rng.dirichlet(np.ones(n), b) * 0.8)
    link0 = np.zeros((b, n, n), "float32")
    reads = t(rng.dirichlet(np.ones(n), (b, 1)))
    target = t(rng.normal(size=(b, 1, n)))

    def dense_loss(w):
        link = A.update_temporal_link(t(link0), p0, w)
        f = A.directional_read_weights(link, reads, True)
        g = A.directional_read_weights(link, reads, False)
        return ops.sum((f + 2 * g) * target)

    def sparse_loss(w):
        values, indices = A.initial_sparse_link(b, n, n)
        values, indices = A.update_sparse_temporal_link(values, indices, p0, w)
        f = A.sparse_directional_read_weights(values, indices, reads, True)
        g = A.sparse_directional_read_weights(values, indices, reads, False)
        return ops.sum((f + 2 * g) * target)

    w = (rng.dirichlet(np.ones(n), b) * 0.9).astype("float32")
    dense_value, (dense_grad,) = value_and_grads(dense_loss, w)
    sparse_value, (sparse_grad,) = value_and_grads(sparse_loss, w)
    np.testing.assert_allclose(np_(sparse_value), np_(dense_value), rtol=1e-5)
    np.testing.assert_allclose(np_(sparse_grad), np_(dense_grad), atol=1e-5)
    assert np.abs(np_(dense_grad)).max() > 1e-3


def test_sparse_link_shape_errors_name_the_argument():
    values, indices = A.initial_sparse_link(1, 4, 2)
    with pytest.raises(ValueError, match="`k` must be in"):
        A.initial_sparse_link(1, 4, 5)
    with pytest.raises(ValueError, match="number of slots N"):
        A.update_sparse_temporal_link(values, indices, t(np.zeros((1, 5))), t(np.zeros((1, 5))))
    with pytest.raises(ValueError, match="entries per row K"):
        A.sparse_directional_read_weights(values, indices[..., :1], t(np.zeros((1, 1, 4))), True)


def test_freed_slot_is_reused():
    """Write to a slot, free it through a read, write again: the same slot is allocated."""
    n = 5
    usage = t(np.zeros((1, n)))
    no_read = t(np.zeros((1, 1, n)))
    # First write goes by allocation to the least-used slot.
    usage = A.update_usage(usage, t(np.zeros((1, n))), t([[0.0]]), no_read)
    first = A.allocation_weights(usage)
    slot = int(np_(ops.argmax(first, -1))[0])
    # Fill every other slot as used, then read `slot` with free gate 1.
    filled = t(np.where(np.arange(n) == slot, 0.0, 1.0)[None])
    usage = A.update_usage(filled, first, t([[0.0]]), no_read)
    assert float(np_(usage)[0, slot]) > 0.99
    read_slot = t(np.eye(n)[[[slot]]])
    usage = A.update_usage(usage, t(np.zeros((1, n))), t([[1.0]]), read_slot)
    assert float(np_(usage)[0, slot]) < 1e-5
    second = A.allocation_weights(usage)
    assert int(np_(ops.argmax(second, -1))[0]) == slot


@pytest.mark.tf_only
def test_ops_compile_under_xla_with_dynamic_batch():
    @tf.function(jit_compile=True, input_signature=[tf.TensorSpec((None, 6), tf.float32)])
    def alloc_grad(usage):
        with tf.GradientTape() as tape:
            tape.watch(usage)
            loss = tf.reduce_sum(A.allocation_weights(usage) ** 2)
        return tape.gradient(loss, usage)

    g = np_(alloc_grad(tf.random.uniform((3, 6))))
    assert g.shape == (3, 6) and np.all(np.isfinite(g))


def test_low_level_shape_errors_name_the_argument():
    with pytest.raises(ValueError, match="`memory` must have rank 3"):
        A.read_memory(t(np.ones((4, 3))), t(np.ones((1, 1, 4))))
    with pytest.raises(ValueError, match="number of slots N"):
        A.erase_and_write(
            t(np.ones((1, 4, 3))),
            t(np.ones((1, 1, 5))),
            t(np.ones((1, 1, 3))),
            t(np.ones((1, 1, 3))),
        )
    with pytest.raises(ValueError, match="`usage` must have rank 2"):
        A.allocation_weights(t(np.ones((4,))))


def test_oneplus_is_one_plus_softplus_and_at_least_one():
    x = np.array([-30.0, -1.0, 0.0, 2.0, 30.0], "float32")
    got = np_(A.oneplus(x))
    np.testing.assert_allclose(got, 1.0 + np.log1p(np.exp(x)), rtol=1e-6)
    assert np.all(got >= 1.0)
    _, (grad,) = value_and_grads(lambda x: ops.sum(A.oneplus(x)), x)
    np.testing.assert_allclose(np_(grad), 1.0 / (1.0 + np.exp(-x)), rtol=1e-5, atol=1e-7)

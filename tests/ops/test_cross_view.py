import keras
import numpy as np
import pytest
from keras import ops

from keras_adl.ops import cross_view_kl, restricted_views
from tests.harness import np_, value_and_grads

pytestmark = pytest.mark.portable  # run on every backend by make test-backends

RNG = np.random.default_rng(0)
FORWARD = RNG.normal(size=(3, 5, 4)).astype("float32")
BACKWARD = RNG.normal(size=(3, 5, 4)).astype("float32")
MASK = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], bool)
PRIMARY_LOGITS = RNG.normal(size=(3, 5, 6)).astype("float32")
AUX = [RNG.normal(size=(3, 5, 6)).astype("float32") for _ in range(3)]


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


PRIMARY = _softmax(PRIMARY_LOGITS)


def _kl_reference(p, aux, mask=None):
    """Σ_k KL(p ‖ softmax(aux_k)) averaged over unmasked tokens, in float64."""
    p = p.astype("float64")
    total = sum((p * (np.log(p) - np.log(_softmax(a.astype("float64"))))).sum(-1) for a in aux)
    if mask is None:
        return total.mean()
    return (total * mask).sum() / max(mask.sum(), 1)


def test_views_without_mask_are_the_shifts():
    views = {k: np_(v) for k, v in restricted_views(FORWARD, BACKWARD).items()}
    np.testing.assert_array_equal(views["forward"], FORWARD)
    np.testing.assert_array_equal(views["backward"], BACKWARD)
    np.testing.assert_array_equal(views["future"][:, 1:], FORWARD[:, :-1])  # h→_{t-1}
    np.testing.assert_array_equal(views["future"][:, 0], 0.0)
    np.testing.assert_array_equal(views["past"][:, :-1], BACKWARD[:, 1:])  # h←_{t+1}
    np.testing.assert_array_equal(views["past"][:, -1], 0.0)


def test_views_with_padding_by_hand():
    views = {k: np_(v) for k, v in restricted_views(FORWARD, BACKWARD, mask=MASK).items()}
    for b, row in enumerate(MASK):
        n = int(row.sum())  # right padding: tokens 0 … n-1 are real
        for t in range(5):
            fwd = FORWARD[b, t] if t < n else 0.0
            bwd = BACKWARD[b, t] if t < n else 0.0
            fut = FORWARD[b, t - 1] if 0 < t < n else 0.0
            past = BACKWARD[b, t + 1] if t + 1 < n else 0.0  # 0 at the last real token
            np.testing.assert_array_equal(views["forward"][b, t], np.broadcast_to(fwd, (4,)))
            np.testing.assert_array_equal(views["backward"][b, t], np.broadcast_to(bwd, (4,)))
            np.testing.assert_array_equal(views["future"][b, t], np.broadcast_to(fut, (4,)))
            np.testing.assert_array_equal(views["past"][b, t], np.broadcast_to(past, (4,)))


def test_padding_states_change_no_view():
    noise = 1e3 * RNG.normal(size=FORWARD.shape).astype("float32")
    fwd = np.where(MASK[..., None], FORWARD, noise)
    bwd = np.where(MASK[..., None], BACKWARD, -noise)
    clean = restricted_views(FORWARD, BACKWARD, mask=MASK)
    noisy = restricted_views(fwd, bwd, mask=MASK)
    for name in clean:
        np.testing.assert_array_equal(np_(noisy[name]), np_(clean[name]))


def test_views_keep_the_dtype():
    views = restricted_views(FORWARD.astype("float16"), BACKWARD.astype("float16"), MASK)
    assert all(keras.backend.standardize_dtype(v.dtype) == "float16" for v in views.values())


def test_kl_against_numpy():
    got = float(np_(cross_view_kl(PRIMARY, AUX)))
    np.testing.assert_allclose(got, _kl_reference(PRIMARY, AUX), rtol=1e-5)
    got = float(np_(cross_view_kl(PRIMARY, AUX, mask=MASK)))
    np.testing.assert_allclose(got, _kl_reference(PRIMARY, AUX, MASK), rtol=1e-5)
    named = cross_view_kl(PRIMARY, {"future": AUX[0], "past": AUX[1]}, mask=MASK)
    np.testing.assert_allclose(np_(named), _kl_reference(PRIMARY, AUX[:2], MASK), rtol=1e-5)
    single = cross_view_kl(PRIMARY, AUX[0], mask=MASK)
    np.testing.assert_allclose(np_(single), _kl_reference(PRIMARY, AUX[:1], MASK), rtol=1e-5)


def test_kl_is_zero_when_the_auxiliaries_agree_and_masked_tokens_count_for_nothing():
    same = cross_view_kl(PRIMARY, [PRIMARY_LOGITS, PRIMARY_LOGITS + 3.0], mask=MASK)
    assert abs(float(np_(same))) < 1e-5
    noisy = [np.where(MASK[..., None], a, 1e4 * RNG.normal(size=a.shape)) for a in AUX]
    np.testing.assert_allclose(
        np_(cross_view_kl(PRIMARY, [a.astype("float32") for a in noisy], mask=MASK)),
        np_(cross_view_kl(PRIMARY, AUX, mask=MASK)),
        rtol=1e-6,
    )


def test_all_masked_batch_gives_zero_not_nan():
    got = np_(cross_view_kl(PRIMARY, AUX, mask=np.zeros_like(MASK)))
    assert got == 0.0 and got.dtype == np.float32
    _, grads = value_and_grads(
        lambda a: cross_view_kl(PRIMARY, [a], mask=np.zeros_like(MASK)), AUX[0]
    )
    assert np.all(np.isfinite(np_(grads[0])))


def test_one_hot_primary_is_finite():
    one_hot = np.eye(6, dtype="float32")[RNG.integers(0, 6, size=(3, 5))]
    got = float(np_(cross_view_kl(one_hot, AUX, mask=MASK)))
    ref = sum(-(one_hot * np.log(_softmax(a.astype("float64")))).sum(-1) for a in AUX)
    np.testing.assert_allclose(got, (ref * MASK).sum() / MASK.sum(), rtol=1e-4)


def test_stop_gradient_on_the_primary():
    def loss(primary, aux):
        return cross_view_kl(primary, [aux], mask=MASK)

    value, (d_primary, d_aux) = value_and_grads(loss, PRIMARY, AUX[0])
    assert d_primary is None or not np.any(np_(d_primary))  # the primary is held fixed
    d_aux = np_(d_aux)
    assert np.all(np.isfinite(d_aux)) and np.any(d_aux[MASK])
    assert not np.any(d_aux[~MASK])  # padding tokens get no gradient
    # d/dz KL(p ‖ softmax(z)) = (softmax(z) − p) / |M|
    expected = (_softmax(AUX[0]) - PRIMARY) * MASK[..., None] / MASK.sum()
    np.testing.assert_allclose(d_aux, expected, rtol=1e-4, atol=1e-6)


def test_float16_inputs_compute_in_float32():
    got = cross_view_kl(PRIMARY.astype("float16"), [a.astype("float16") for a in AUX], MASK)
    assert keras.backend.standardize_dtype(got.dtype) == "float32"
    ref = _kl_reference(
        PRIMARY.astype("float16").astype("float32"), [a.astype("float16") for a in AUX], MASK
    )
    np.testing.assert_allclose(float(np_(got)), ref, rtol=1e-3)


def test_bad_arguments():
    with pytest.raises(ValueError, match="`forward` must have rank 3"):
        restricted_views(FORWARD[0], BACKWARD)
    with pytest.raises(ValueError, match="The state sizes of `forward` and `backward`"):
        restricted_views(FORWARD, BACKWARD[..., :3])
    with pytest.raises(ValueError, match="The time dimensions of `mask`"):
        restricted_views(FORWARD, BACKWARD, mask=MASK[:, :4])
    with pytest.raises(ValueError, match="The number of classes"):
        cross_view_kl(PRIMARY, [AUX[0][..., :5]])
    with pytest.raises(ValueError, match="at least one tensor"):
        cross_view_kl(PRIMARY, [])
    assert ops.shape(restricted_views(FORWARD, BACKWARD)["past"]) == (3, 5, 4)

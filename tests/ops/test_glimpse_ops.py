import numpy as np
import pytest
import tensorflow as tf
from keras import ops

from keras_adl.ops import area_weights, extract_glimpses, glimpse_widths
from tests.harness import float32_matmul_tolerance, np_, value_and_grads

pytestmark = pytest.mark.portable  # run on every backend by make test-backends


def _arange_image(height=8, width=8, channels=1, batch=1):
    return np.arange(batch * height * width * channels, dtype="float32").reshape(
        batch, height, width, channels
    )


def _glimpse(images, locations, patch_size, num_scales=1, scale_factor=2.0):
    return np_(
        extract_glimpses(
            images, np.asarray(locations, "float32"), patch_size, num_scales, scale_factor
        )
    )


def _reference(image, location, patch_size, width, fine=8):  # exact on a 1/32 grid of l
    """Area averaging by brute force: each pixel split into fine×fine sub-pixels."""
    height, wide, channels = image.shape
    big = np.kron(image, np.ones((fine, fine, 1), "float32"))
    padded = np.zeros((3 * height * fine, 3 * wide * fine, channels), "float32")
    padded[height * fine : 2 * height * fine, wide * fine : 2 * wide * fine] = big
    cy, cx = (location[0] + 1) * height / 2, (location[1] + 1) * wide / 2
    top = int(round((cy - width / 2) * fine)) + height * fine
    left = int(round((cx - width / 2) * fine)) + wide * fine
    size = int(round(width * fine))
    patch = padded[top : top + size, left : left + size]
    cell = size // patch_size
    return patch.reshape(patch_size, cell, patch_size, cell, channels).mean(axis=(1, 3))


def test_centre_glimpse_is_the_centre_slice():
    image = _arange_image(8, 8, 2)
    out = _glimpse(image, [[0.0, 0.0]], 4)
    assert out.shape == (1, 1, 4, 4, 2)
    np.testing.assert_array_equal(out[0, 0], image[0, 2:6, 2:6])


@pytest.mark.parametrize(
    "location, inside, image_part",
    [
        ((-1.0, -1.0), (slice(2, 4), slice(2, 4)), (slice(0, 2), slice(0, 2))),  # top-left
        ((-1.0, 1.0), (slice(2, 4), slice(0, 2)), (slice(0, 2), slice(6, 8))),  # top-right
        ((1.0, -1.0), (slice(0, 2), slice(2, 4)), (slice(6, 8), slice(0, 2))),  # bottom-left
        ((1.0, 1.0), (slice(0, 2), slice(0, 2)), (slice(6, 8), slice(6, 8))),  # bottom-right
    ],
)
def test_corners_are_zero_outside_and_the_corner_inside(location, inside, image_part):
    """Locations are (y, x): (-1, 1) is the top-right corner, not the bottom-left."""
    image = _arange_image() + 1.0  # no zero pixel in the image
    out = _glimpse(image, [location], 4)[0, 0, :, :, 0]
    np.testing.assert_array_equal(out[inside], image[0][image_part][..., 0])
    outside = np.ones((4, 4), bool)
    outside[inside] = False
    assert np.all(out[outside] == 0.0)


@pytest.mark.tf_only  # the reference is TensorFlow's own op
def test_convention_matches_tf_image_extract_glimpse_at_pixel_locations():
    image = _arange_image(8, 10)
    for location in [(0.0, 0.0), (-1.0, 1.0), (0.5, -0.2), (-0.25, 0.6)]:
        theirs = tf.image.extract_glimpse(
            image, [4, 4], [location], centered=True, normalized=True, noise="zero"
        ).numpy()
        np.testing.assert_array_equal(_glimpse(image, [location], 4)[:, 0], theirs)


def test_scales_average_wider_patches_to_the_patch_size():
    constant = np.full((1, 16, 16, 1), 0.7, "float32")
    out = _glimpse(constant, [[0.0, 0.0]], 4, num_scales=3)  # widths 4, 8, 16: all inside
    np.testing.assert_allclose(out, 0.7, atol=float32_matmul_tolerance(1e-6))
    image = _arange_image(8, 8)
    coarse = _glimpse(image, [[0.0, 0.0]], 2, num_scales=3)[0, 2, :, :, 0]  # the whole image
    np.testing.assert_allclose(
        coarse,
        image[0, :, :, 0].reshape(2, 4, 2, 4).mean(axis=(1, 3)),
        rtol=float32_matmul_tolerance(1e-7),
    )


@pytest.mark.parametrize(
    "location, scale_factor",
    [((0.3125, -0.5625), 2.0), ((-0.90625, 0.8125), 1.5), ((0.125, 1.0), 3.0)],
)
def test_area_averaging_matches_a_brute_force_reference(location, scale_factor):
    rng = np.random.default_rng(0)
    image = rng.random((1, 8, 8, 2)).astype("float32")
    out = _glimpse(image, [location], 2, num_scales=2, scale_factor=scale_factor)[0]
    for s, width in enumerate(glimpse_widths(2, 2, scale_factor)):
        np.testing.assert_allclose(
            out[s],
            _reference(image[0], location, 2, width),
            atol=float32_matmul_tolerance(1e-5),
        )


def test_batch_entries_use_their_own_locations():
    images = _arange_image(8, 8, 1, batch=3)
    locations = np.array([[0.0, 0.0], [-0.5, 0.5], [0.9, -0.3]], "float32")
    together = _glimpse(images, locations, 4, num_scales=2)
    for b in range(3):
        alone = _glimpse(images[b : b + 1], locations[b : b + 1], 4, num_scales=2)
        np.testing.assert_allclose(together[b], alone[0], atol=1e-5)
    assert not np.allclose(together[0], together[1])


def test_edges_give_finite_values_and_gradients():
    images = np.random.default_rng(1).random((4, 8, 8, 1)).astype("float32")
    locations = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [1.5, -2.0]], "float32")
    out = extract_glimpses(images, locations, 4, num_scales=2)
    assert np.all(np.isfinite(np_(out)))
    _, (image_grad, location_grad) = value_and_grads(
        lambda x, l: ops.sum(extract_glimpses(x, l, 4, num_scales=2)), images, locations
    )
    image_grad = np_(image_grad)
    assert np.all(np.isfinite(image_grad)) and np.any(image_grad != 0)
    assert np.all(np.isfinite(np_(location_grad)))


def test_gradient_to_the_image_is_the_area_weights():
    """ρ is linear in the image: d Σρ / dx is the summed area weight of each pixel."""
    _, (grad,) = value_and_grads(
        lambda x: ops.sum(extract_glimpses(x, ops.zeros((1, 2)), 2)),
        np.zeros((1, 6, 6, 1), "float32"),
    )
    grad = np_(grad)[0, :, :, 0]
    expected = np.zeros((6, 6), "float32")
    expected[2:4, 2:4] = 1.0
    np.testing.assert_allclose(grad, expected, atol=1e-6)


@pytest.mark.tf_only
def test_compiles_with_xla_and_dynamic_image_size():
    images = np.random.default_rng(2).random((3, 12, 10, 2)).astype("float32")
    locations = np.random.default_rng(3).uniform(-1, 1, (3, 2)).astype("float32")
    eager = _glimpse(images, locations, 4, num_scales=2)
    compiled = tf.function(lambda x, l: extract_glimpses(x, l, 4, 2), jit_compile=True)
    np.testing.assert_allclose(np_(compiled(images, locations)), eager, atol=1e-5)
    dynamic = tf.function(
        lambda x, l: extract_glimpses(x, l, 4, 2),
        input_signature=[tf.TensorSpec([None, None, None, 2]), tf.TensorSpec([None, 2])],
    )
    np.testing.assert_allclose(np_(dynamic(images, locations)), eager, atol=1e-5)


def test_integer_images_are_averaged_in_float():
    image = _arange_image(4, 4).astype("uint8")
    out = _glimpse(image, [[0.0, 0.0]], 2, num_scales=2)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out[0, 1, :, :, 0], [[2.5, 4.5], [10.5, 12.5]])


def test_area_weights_rows_sum_to_one_inside_the_image():
    weights = np_(area_weights(np.array([5.3, 0.0], "float32"), [2.0, 4.0], 4, 12))
    np.testing.assert_allclose(weights[0].sum(-1), 1.0, atol=1e-6)  # fully inside
    np.testing.assert_allclose(weights[1, 0].sum(-1), [0.0, 0.0, 1.0, 1.0], atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(images=np.zeros((8, 8, 1))), "`images` must have rank 4"),
        (dict(locations=np.zeros((1, 3))), "`locations` must have shape"),
        (dict(locations=np.zeros((2, 2))), "The batch sizes"),
        (dict(patch_size=0), "`patch_size` must be a positive integer"),
        (dict(num_scales=1.5), "`num_scales` must be a positive integer"),
        (dict(scale_factor=0.5), "`scale_factor` must be a number >= 1"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    args = dict(
        images=np.zeros((1, 8, 8, 1), "float32"),
        locations=np.zeros((1, 2), "float32"),
        patch_size=4,
        num_scales=1,
        scale_factor=2.0,
    )
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        extract_glimpses(**args)

import numpy as np
import pytest

from keras_adl.layers import GlimpseNetwork
from keras_adl.ops import extract_glimpses
from tests.harness import np_, run_layer_test


def _data(batch=3, size=16, channels=1):
    rng = np.random.default_rng(0)
    return {
        "images": rng.random((batch, size, size, channels)).astype("float32"),
        "locations": rng.uniform(-1, 1, (batch, 2)).astype("float32"),
    }


@pytest.mark.portable
def test_full_harness():
    run_layer_test(
        GlimpseNetwork,
        {"patch_size": 4, "num_scales": 2, "glimpse_units": 8, "location_units": 6, "units": 10},
        _data(),
        (3, 10),
        expected_num_trainable_weights=7,
        full=True,
    )


def test_values_match_the_paper_formula():
    """g = ReLU(W3 ReLU(W1 ρ + b1) + b3 + W4 ReLU(W2 l + b2))."""
    data = _data()
    layer = GlimpseNetwork(4, 2, glimpse_units=8, location_units=6, units=10)
    out = np_(layer(**data))
    rho = np_(extract_glimpses(data["images"], data["locations"], 4, 2)).reshape(3, -1)
    relu = lambda x: np.maximum(x, 0.0)  # noqa: E731
    w1, b1 = layer.what.get_weights()
    w2, b2 = layer.where.get_weights()
    w3, b3 = layer.what_out.get_weights()
    (w4,) = layer.where_out.get_weights()
    expected = relu(relu(rho @ w1 + b1) @ w3 + b3 + relu(data["locations"] @ w2 + b2) @ w4)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_multiply_matches_the_dram_formula_and_round_trips():
    """g = ReLU(W3 ReLU(W1 ρ + b1) + b3) ⊙ ReLU(W4 ReLU(W2 l + b2) + b4) (Ba et al. 2015)."""
    data = _data()
    layer = GlimpseNetwork(4, 2, glimpse_units=8, location_units=6, units=10, combine="multiply")
    out = np_(layer(**data))
    rho = np_(extract_glimpses(data["images"], data["locations"], 4, 2)).reshape(3, -1)
    relu = lambda x: np.maximum(x, 0.0)  # noqa: E731
    w1, b1 = layer.what.get_weights()
    w2, b2 = layer.where.get_weights()
    w3, b3 = layer.what_out.get_weights()
    w4, b4 = layer.where_out.get_weights()
    expected = relu(relu(rho @ w1 + b1) @ w3 + b3) * relu(
        relu(data["locations"] @ w2 + b2) @ w4 + b4
    )
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    config = layer.get_config()
    assert config["combine"] == "multiply"
    assert GlimpseNetwork.from_config(config).get_config() == config


@pytest.mark.portable
def test_harness_with_convolutions():
    run_layer_test(
        GlimpseNetwork,
        {
            "patch_size": 6,
            "num_scales": 2,
            "glimpse_units": 8,
            "location_units": 6,
            "units": 10,
            "combine": "multiply",
            "conv_filters": (4, 5),
        },
        _data(),
        (3, 10),
        expected_num_trainable_weights=12,  # 8 linear + 2 × (kernel, bias)
    )


def _conv3x3_valid(x, kernel, bias):
    """``[B, H, W, Cin]`` ⊛ ``[3, 3, Cin, Cout]`` (valid) + bias, then ReLU, in NumPy."""
    h, w = x.shape[1] - 2, x.shape[2] - 2
    out = sum(x[:, i : i + h, j : j + w, :] @ kernel[i, j] for i in range(3) for j in range(3))
    return np.maximum(out + bias, 0.0)


def test_convolutions_match_the_formula_and_round_trip():
    """The "what" path with ``conv_filters``: the scales stacked as channels, 3×3 valid
    convolutions with ReLU, flattened, then h_g = ReLU(W1 · + b1)."""
    data = _data(channels=2)
    layer = GlimpseNetwork(6, 2, glimpse_units=8, location_units=6, units=10, conv_filters=(4, 3))
    out = np_(layer(**data))
    rho = np_(extract_glimpses(data["images"], data["locations"], 6, 2))  # [B, k, g, g, C]
    x = rho.transpose(0, 2, 3, 1, 4).reshape(3, 6, 6, 4)  # scale-major channels
    for conv in layer.convs:
        x = _conv3x3_valid(x, *conv.get_weights())
    assert x.shape == (3, 2, 2, 3)
    relu = lambda v: np.maximum(v, 0.0)  # noqa: E731
    w1, b1 = layer.what.get_weights()
    w2, b2 = layer.where.get_weights()
    w3, b3 = layer.what_out.get_weights()
    (w4,) = layer.where_out.get_weights()
    expected = relu(
        relu(x.reshape(3, -1) @ w1 + b1) @ w3 + b3 + relu(data["locations"] @ w2 + b2) @ w4
    )
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    config = layer.get_config()
    assert config["conv_filters"] == [4, 3]
    clone = GlimpseNetwork.from_config(config)
    assert clone.get_config() == config
    clone(**data)
    clone.set_weights(layer.get_weights())
    np.testing.assert_allclose(np_(clone(**data)), out, rtol=1e-6)


def test_location_changes_the_output():
    data = _data()
    layer = GlimpseNetwork(4, units=10)
    moved = dict(data, locations=-data["locations"])
    assert not np.allclose(np_(layer(**data)), np_(layer(**moved)))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"units": 0}, "`units`"),
        ({"glimpse_units": -1}, "`glimpse_units`"),
        ({"num_scales": 0}, "`num_scales`"),
        ({"combine": "concat"}, r"`combine` must be one of \['add', 'multiply'\]"),
        ({"conv_filters": (8, 0)}, "`conv_filters` must be positive integers"),
        ({"conv_filters": (8, 8)}, r"2 3×3 valid convolutions need `patch_size` > 4; received"),
    ],
)
def test_bad_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GlimpseNetwork(4, **kwargs)


def test_conv_filters_must_be_a_sequence():
    with pytest.raises(TypeError, match="`conv_filters` must be a sequence.*received 8"):
        GlimpseNetwork(8, conv_filters=8)


def test_bad_input_rank():
    with pytest.raises(ValueError, match="`images` must have rank 4"):
        GlimpseNetwork(4)(np.zeros((2, 16, 16), "float32"), np.zeros((2, 2), "float32"))

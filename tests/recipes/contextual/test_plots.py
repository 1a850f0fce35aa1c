"""`plot_scalar_mix`: the learned scalar-mix weights of the ELMo features."""

import pytest

from keras_adl.recipes.contextual.plots import plot_scalar_mix

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_plot_scalar_mix_draws_one_bar_group_per_layer(tmp_path):
    path = tmp_path / "scalar_mix.png"
    weights = {"fortunes": [0.2, 0.5, 0.3], "needle": [0.6, 0.3, 0.1]}
    assert plot_scalar_mix(weights, str(path), gammas={"fortunes": 1.3}) == str(path)
    assert path.read_bytes().startswith(PNG_SIGNATURE)


def test_plot_scalar_mix_refuses_no_weights_and_unequal_lengths(tmp_path):
    with pytest.raises(ValueError, match="at least one model"):
        plot_scalar_mix({}, str(tmp_path / "a.png"))
    with pytest.raises(ValueError, match=r"one length; received \[2, 3\]"):
        plot_scalar_mix({"a": [0.5, 0.5], "b": [0.2, 0.3, 0.5]}, str(tmp_path / "b.png"))

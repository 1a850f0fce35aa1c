"""`plot_attention_heads`: the pretraining family's picture of every attention head."""

import numpy as np
import pytest

from keras_adl.recipes.pretraining.plots import plot_attention_heads
from tests.pictures import one_closed_figure, png_size


def test_plot_attention_heads_draws_one_map_per_layer_and_head(tmp_path, saved):
    path = tmp_path / "attention.png"
    rng = np.random.default_rng(0)
    weights = rng.random((2, 3, 7, 7))
    tokens = ["<s>", "Été", "ça", "Привет", "東京", "##s", "</s>"]
    plot_attention_heads(weights, tokens[:5], path, title="heads")
    assert png_size(path)[0] > png_size(path)[1]  # 3 heads across, 2 layers down
    axes = one_closed_figure(saved).axes
    assert [ax.get_title() for ax in axes][:4] == [
        "layer 1, head 1",
        "layer 1, head 2",
        "layer 1, head 3",
        "layer 2, head 1",
    ]
    np.testing.assert_allclose(axes[5].images[0].get_array(), weights[1, 2, :5, :5])
    assert [t.get_text() for t in axes[0].get_xticklabels()] == tokens[:5]
    with pytest.raises(ValueError, match=r"must be \[layers, heads, T, T\]"):
        plot_attention_heads(weights[0], tokens, path)
    with pytest.raises(ValueError, match="fewer than the 8 tokens"):
        plot_attention_heads(weights, tokens + ["x"], path)

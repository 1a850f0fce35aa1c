"""`plot_attention_heads`: the pretraining family's picture of every attention head."""

import pathlib
import struct

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

from keras_adl.recipes.pretraining.plots import plot_attention_heads

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def saved(monkeypatch):
    """The figures the plotting functions save, captured as they are saved."""
    figures = []
    original = Figure.savefig

    def savefig(self, *args, **kwargs):
        figures.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return figures


def _png_size(path):
    """(width, height) in pixels from the PNG header."""
    data = pathlib.Path(path).read_bytes()
    assert data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def _one_closed_figure(saved):
    assert len(saved) == 1
    assert plt.get_fignums() == []  # closed after saving: no figure leaks across calls
    return saved[0]


def test_plot_attention_heads_draws_one_map_per_layer_and_head(tmp_path, saved):
    path = tmp_path / "attention.png"
    rng = np.random.default_rng(0)
    weights = rng.random((2, 3, 7, 7))
    tokens = ["<s>", "Été", "ça", "Привет", "東京", "##s", "</s>"]
    plot_attention_heads(weights, tokens[:5], path, title="heads")
    assert _png_size(path)[0] > _png_size(path)[1]  # 3 heads across, 2 layers down
    axes = _one_closed_figure(saved).axes
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

"""`plot_attention`: the sequences family's attention heatmap, checked directly (matplotlib
Agg): the PNG's size, the weights, labels and title drawn, and the figure closed."""

import pathlib
import struct

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

from keras_adl.recipes.sequences.plots import plot_attention

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


def _image_data(ax, index=0):
    return np.asarray(ax.get_images()[index].get_array())


def test_plot_attention_draws_the_weights_under_token_labels(tmp_path, saved):
    # [4, 6] weights of a padded batch entry: 3 output steps over 5 source tokens are drawn.
    weights = np.random.default_rng(0).dirichlet(np.ones(6), size=4).astype("float32")
    path = str(tmp_path / "attention.png")
    source = ["3", " ", "m", "a", "\n"]
    assert plot_attention(weights, source, ["1", "9", "9"], path, title="3 may → 1998") == path
    figure = _one_closed_figure(saved)
    ax, colour_bar = figure.axes
    np.testing.assert_array_equal(_image_data(ax), weights[:3, :5])
    assert colour_bar.get_ylabel() == "attention weight"
    # Column labels are the tokens' repr, so that blanks and newlines are visible; written
    # vertically so that long ones do not overlap.
    assert [t.get_text() for t in ax.get_xticklabels()] == ["3", " ", "m", "a", "\\n"]
    assert {t.get_rotation() for t in ax.get_xticklabels()} == {90.0}
    assert [t.get_text() for t in ax.get_yticklabels()] == ["1", "9", "9"]
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == (
        "3 may → 1998",
        "source",
        "output",
    )
    assert _png_size(path) == (450, 300)  # the minimum size: 4.5 × 3 inches at 100 dpi


def test_plot_attention_widens_with_the_source_and_has_no_title_by_default(tmp_path, saved):
    path = str(tmp_path / "long.png")
    plot_attention(np.full((2, 20), 0.05), [f"t{i}" for i in range(20)], ["a", "b"], path)
    # 0.32 inch per source token, 0.09 per character of the longest output label, 2.2 more.
    assert _png_size(path) == (869, 300)
    assert _one_closed_figure(saved).axes[0].get_title() == ""


def test_plot_attention_refuses_an_unknown_format():
    with pytest.raises(ValueError, match="Format 'xyz' is not supported"):
        plot_attention(np.ones((2, 3)), list("abc"), list("xy"), "attention.xyz")
    plt.close("all")  # a call that fails leaves its figure open

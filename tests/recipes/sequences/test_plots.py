"""`plot_attention`: the sequences family's attention heatmap, checked directly (matplotlib
Agg): the PNG's size, the weights, labels and title drawn, and the figure closed."""

import numpy as np
import pytest

from keras_adl.recipes.sequences.plots import plot_attention
from tests.pictures import image_data, one_closed_figure, plt, png_size


def test_plot_attention_draws_the_weights_under_token_labels(tmp_path, saved):
    # [4, 6] weights of a padded batch entry: 3 output steps over 5 source tokens are drawn.
    weights = np.random.default_rng(0).dirichlet(np.ones(6), size=4).astype("float32")
    path = str(tmp_path / "attention.png")
    source = ["3", " ", "m", "a", "\n"]
    assert plot_attention(weights, source, ["1", "9", "9"], path, title="3 may → 1998") == path
    figure = one_closed_figure(saved)
    ax, colour_bar = figure.axes
    np.testing.assert_array_equal(image_data(ax), weights[:3, :5])
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
    assert png_size(path) == (450, 300)  # the minimum size: 4.5 × 3 inches at 100 dpi


def test_plot_attention_widens_with_the_source_and_has_no_title_by_default(tmp_path, saved):
    path = str(tmp_path / "long.png")
    plot_attention(np.full((2, 20), 0.05), [f"t{i}" for i in range(20)], ["a", "b"], path)
    # 0.32 inch per source token, 0.09 per character of the longest output label, 2.2 more.
    assert png_size(path) == (869, 300)
    assert one_closed_figure(saved).axes[0].get_title() == ""


def test_plot_attention_refuses_an_unknown_format():
    with pytest.raises(ValueError, match="Format 'xyz' is not supported"):
        plot_attention(np.ones((2, 3)), list("abc"), list("xy"), "attention.xyz")
    plt.close("all")  # a call that fails leaves its figure open

"""The vision family's pictures, checked directly: each writes a PNG of the size its layout asks
for, draws the given image, glimpses or attention, labels and title, and closes its figure
(matplotlib Agg)."""

import numpy as np
import pytest
from matplotlib.patches import Rectangle

from keras_adl.recipes.vision.plots import plot_caption_attention, plot_glimpse_path
from tests.pictures import image_data, one_closed_figure, plt, png_size


def test_plot_glimpse_path_draws_each_glimpse_at_its_location(tmp_path, saved):
    image = np.random.default_rng(1).random((32, 32, 1)).astype("float32")
    locations = np.array([[0.0, 0.0], [-0.5, 0.5], [0.75, -1.0]], "float32")  # (y, x)
    path = str(tmp_path / "glimpses.png")
    assert plot_glimpse_path(image, locations, 8, 2, path, title="label 7") == path
    ax = one_closed_figure(saved).axes[0]
    np.testing.assert_array_equal(image_data(ax), image[..., 0])
    squares = [p for p in ax.patches if isinstance(p, Rectangle)]
    assert len(squares) == 3 * 2  # num_scales squares per glimpse
    centres_y = (locations[:, 0] + 1) * 16 - 0.5  # pixel-centre coordinates of imshow
    centres_x = (locations[:, 1] + 1) * 16 - 0.5
    for t in range(3):
        for s, side in enumerate((8, 16)):  # patch_size · scale_factor**s
            square = squares[2 * t + s]
            assert (square.get_width(), square.get_height()) == (side, side)
            assert square.get_x() + side / 2 == pytest.approx(centres_x[t])
            assert square.get_y() + side / 2 == pytest.approx(centres_y[t])
    line = ax.get_lines()[0]  # the path joins the centres in order
    np.testing.assert_allclose(line.get_xdata(), centres_x)
    np.testing.assert_allclose(line.get_ydata(), centres_y)
    assert [t.get_text() for t in ax.texts] == ["1", "2", "3"]
    assert ax.get_title() == "label 7"
    assert png_size(path) == (400, 400)


def test_plot_caption_attention_draws_one_panel_per_token(tmp_path, saved):
    image = np.random.default_rng(2).random((16, 48)).astype("float32")
    attention = np.random.default_rng(3).dirichlet(np.ones(12), size=5).astype("float32")
    path = str(tmp_path / "caption.png")
    tokens = ["3", "1", "</s>"]  # 3 of the 5 attention rows are drawn
    assert plot_caption_attention(image, attention, tokens, (2, 6), path, title="3 1") == path
    axes = one_closed_figure(saved).axes
    assert len(axes) == 1 + len(tokens)
    assert [ax.get_title() for ax in axes] == ["3 1", "3", "1", "</s>"]
    np.testing.assert_array_equal(image_data(axes[0]), image)
    for ax, weights in zip(axes[1:], attention):
        np.testing.assert_array_equal(image_data(ax, 0), image)
        np.testing.assert_array_equal(image_data(ax, 1), weights.reshape(2, 6))  # row-major
    width, height = png_size(path)
    assert width == 650 and abs(height - 560) <= 1  # (2 · 3 + 0.5) × (1.3 · 4 + 0.4) inches


def test_plot_caption_attention_titles_the_input_when_no_title(tmp_path, saved):
    plot_caption_attention(
        np.zeros((8, 8, 3)), np.full((1, 4), 0.25), ["a"], (2, 2), str(tmp_path / "rgb.png")
    )
    axes = one_closed_figure(saved).axes
    assert axes[0].get_title() == "input"
    assert image_data(axes[0]).shape == (8, 8, 3)  # colour images are drawn in colour


def test_plot_caption_attention_bad_grid_raises():
    with pytest.raises(ValueError, match="cannot reshape array of size 12 into shape \\(3,5\\)"):
        plot_caption_attention(
            np.zeros((16, 48)), np.ones((2, 12)), ["a", "b"], (3, 5), "unused.png"
        )
    plt.close("all")  # a call that fails leaves its figure open

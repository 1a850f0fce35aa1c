"""`keras_adl.plotting`'s figures, checked directly: each writes a PNG of the size its layout
asks for, draws the given weights, labels and title, and closes its figure (matplotlib Agg).

`plot_document_attention` is the documents family's: tests/recipes/documents/test_plots.py;
`plot_memory_addressing` the memory family's: tests/recipes/memory/test_plots.py;
`plot_attention` the sequences family's: tests/recipes/sequences/test_plots.py;
`plot_attention_heads` the pretraining family's: tests/recipes/pretraining/test_plots.py;
`plot_glimpse_path` and `plot_caption_attention` the vision family's:
tests/recipes/vision/test_plots.py.
"""

import numpy as np
import pytest

from keras_adl import plotting
from tests.pictures import one_closed_figure, png_size


def test_plot_training_curves_draws_one_panel_per_quantity(tmp_path, saved):
    path = tmp_path / "training.png"
    steps = [10, 20, 30]
    series = {"loss": [3.0, 2.0, 1.5], "mlm_accuracy": [0.1, 0.2, 0.35]}
    plotting.plot_training_curves(steps, series, path, title="masked LM")
    assert png_size(path)[0] > png_size(path)[1]
    axes = one_closed_figure(saved).axes
    assert [ax.get_title() for ax in axes] == ["loss", "mlm_accuracy"]
    np.testing.assert_allclose(axes[1].lines[0].get_ydata(), series["mlm_accuracy"])
    np.testing.assert_allclose(axes[0].lines[0].get_xdata(), steps)
    with pytest.raises(ValueError, match="series 'loss' has 2 values for 3 steps"):
        plotting.plot_training_curves(steps, {"loss": [1.0, 2.0]}, path)
    with pytest.raises(ValueError, match="must hold 1 to 4 quantities"):
        plotting.plot_training_curves(steps, {}, path)

"""The tagging family's pictures."""

from keras_adl.recipes.tagging.plots import plot_accuracy_against_labelled, plot_view_accuracies
from tests.pictures import one_closed_figure, png_size, saved  # noqa: F401  (fixture)


def test_view_accuracies_draw_a_bar_per_module(tmp_path, saved):  # noqa: F811
    path = tmp_path / "views.png"
    plot_view_accuracies({"primary": 0.97, "future": 0.9, "past": 0.88}, str(path), title="t")
    ax = one_closed_figure(saved).axes[0]
    heights = [round(p.get_height(), 6) for p in ax.patches]
    assert heights == [97.0, 90.0, 88.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["primary", "future", "past"]
    assert png_size(path)[0] > 200


def test_accuracy_against_labelled_draws_mean_and_standard_error(tmp_path, saved):  # noqa: F811
    results = {"CVT": {50: [0.9, 0.94], 200: [0.97]}, "supervised": {50: [0.8, 0.86]}}
    path = tmp_path / "curve.png"
    plot_accuracy_against_labelled(results, str(path))
    ax = one_closed_figure(saved).axes[0]
    lines = {c.get_label(): c.lines[0] for c in ax.containers}  # errorbar: the data line first
    assert list(lines["CVT"].get_xdata()) == [50, 200]
    assert [round(y, 6) for y in lines["CVT"].get_ydata()] == [92.0, 97.0]
    assert ax.get_xscale() == "log" and png_size(path)[0] > 200

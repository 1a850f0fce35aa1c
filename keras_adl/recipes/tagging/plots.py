"""The tagging family's pictures: the modules' held-out accuracies, and accuracy against the
number of labelled sequences with and without cross-view training."""

import numpy as np

from keras_adl.plotting import pyplot, save_figure


def plot_view_accuracies(accuracies, path, title=None):
    """A bar per prediction module (``{"primary": a, "forward": b, …}``): its held-out token
    accuracy, as a PNG; returns its path."""
    plt = pyplot()
    names = list(accuracies)
    values = [100.0 * accuracies[name] for name in names]
    fig, ax = plt.subplots(figsize=(1.2 * len(names) + 2, 3.2))
    bars = ax.bar(names, values, color=["tab:red"] + ["tab:blue"] * (len(names) - 1))
    for bar, value in zip(bars, values):
        ax.annotate(
            f"{value:.1f}",
            (bar.get_x() + bar.get_width() / 2, value),
            ha="center",
            va="bottom",
            fontsize=8,
        )
    ax.set_ylim(max(0.0, min(values) - 10.0), 100.0)
    ax.set_ylabel("held-out token accuracy (%)")
    ax.set_title(title or "prediction modules")
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path


def plot_accuracy_against_labelled(results, path, title=None):
    """Held-out token accuracy against the number of labelled sequences, one line per method,
    mean ± standard error over seeds, as a PNG (returns its path).

    Args:
        results: ``{method: {labelled: [accuracy per seed]}}``, e.g. ``{"CVT": {50: [...]},
            "supervised": {50: [...]}}``.
        path: the PNG's path.
        title: the figure's title.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for method, by_size in results.items():
        sizes = sorted(by_size)
        runs = [100.0 * np.asarray(by_size[n], "float64") for n in sizes]
        means = [r.mean() for r in runs]
        errors = [r.std(ddof=1) / np.sqrt(len(r)) if len(r) > 1 else 0.0 for r in runs]
        ax.errorbar(sizes, means, yerr=errors, marker="o", capsize=3, label=method)
    ax.set_xscale("log")
    ax.set_xlabel("labelled sequences")
    ax.set_ylabel("held-out token accuracy (%)")
    ax.set_title(title or "accuracy against labelled data")
    ax.grid(alpha=0.3)
    ax.legend()
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path

"""Pictures of attention (matplotlib, imported lazily with the Agg backend), and what every
family's pictures share: `pyplot`, `save_figure`, `show_image`.

matplotlib is optional (``pip install 'keras-adl[plots]'``): without it, each picture function
raises `keras_adl.extras.MissingExtra` (a ``ModuleNotFoundError``) naming that extra.
"""

import warnings

import numpy as np

from keras_adl.extras import require

__all__ = ["plot_training_curves", "pyplot", "save_figure", "show_image"]


# The subject of the error a picture function raises without matplotlib.
PICTURES = "drawing pictures"


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed).

    Returns:
        The ``matplotlib.pyplot`` module.

    Raises:
        MissingExtra: matplotlib is not installed (``keras-adl[plots]``).
    """
    matplotlib = require("matplotlib", "plots", PICTURES)
    matplotlib.use("Agg")
    return require("matplotlib.pyplot", "plots", PICTURES)


def save_figure(fig, path, dpi):
    """``fig.tight_layout()`` and ``fig.savefig(path)``, quietly about missing glyphs: text in a
    script no installed font covers (CJK without a CJK font) is drawn as boxes, and
    matplotlib's warning about each glyph is no news to the caller."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
        fig.tight_layout()
        fig.savefig(path, dpi=dpi)


def show_image(ax, image):
    """Draws ``image`` ([H, W] or [H, W, C] in [0, 1]) on ``ax``, grey when it has one channel."""
    image = np.asarray(image, "float32")
    if image.ndim == 3 and image.shape[-1] == 1:
        image = image[..., 0]
    ax.imshow(
        image, cmap="gray" if image.ndim == 2 else None, vmin=0.0, vmax=max(1.0, float(image.max()))
    )


def plot_training_curves(steps, series, path, title=None):
    """Saves one panel per quantity (the loss, an accuracy, a perplexity…) against the
    training step, as a PNG.

    Args:
        steps: ``[N]`` step numbers.
        series: ``{name: [N] values}``, one panel each (at most 4).
        path: PNG file to write.
        title: optional title.

    Returns:
        ``path``.

    Raises:
        ValueError: no series, or a series whose length differs from ``steps``.
    """
    if not series or len(series) > 4:
        raise ValueError(
            f"plot_training_curves: `series` must hold 1 to 4 quantities; received {len(series)}."
        )
    for name, values in series.items():
        if len(values) != len(steps):
            raise ValueError(
                f"plot_training_curves: series {name!r} has {len(values)} values for "
                f"{len(steps)} steps."
            )
    plt = pyplot()
    fig, axes = plt.subplots(1, len(series), figsize=(4.5 * len(series), 3.4), squeeze=False)
    for ax, (name, values) in zip(axes[0], series.items()):
        ax.plot(steps, values, lw=1.2)
        ax.set_xlabel("step")
        ax.set_title(name)
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path

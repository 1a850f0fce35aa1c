"""Pictures of attention (matplotlib, imported lazily with the Agg backend), and what every
family's pictures share: `pyplot`, `save_figure`, `show_image`.

matplotlib is optional (``pip install 'keras-adl[plots]'``): without it, each picture function
raises `keras_adl._extras.MissingExtra` (a ``ModuleNotFoundError``) naming that extra.
"""

import warnings

import numpy as np

from keras_adl.extras import require

# The subject of the error a picture function raises without matplotlib.
PICTURES = "drawing pictures"


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed).

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


def plot_glimpse_path(image, locations, patch_size, num_scales, path, scale_factor=2.0, title=None):
    """Saves the Recurrent Attention Model's glimpse path over one image.

    Each glimpse is drawn as its ``num_scales`` squares (the smallest solid, the wider ones
    dashed), numbered in order and joined by a line, with the locations' convention of
    `keras_adl.ops.extract_glimpses` (``(y, x)`` in ``[-1, 1]``, ``(-1, -1)`` top-left).

    Args:
        image: ``[H, W]`` or ``[H, W, C]``.
        locations: ``[n, 2]`` glimpse centres ``(y, x)``.
        patch_size, num_scales, scale_factor: of the glimpse sensor.
        path: PNG file to write.
        title: optional title.

    Returns:
        ``path``.
    """
    plt = pyplot()
    from matplotlib.patches import Rectangle

    image = np.asarray(image)
    height, width = image.shape[:2]
    locations = np.asarray(locations, "float32")
    rows = (locations[:, 0] + 1.0) * height / 2.0 - 0.5  # pixel-centre coordinates of imshow
    cols = (locations[:, 1] + 1.0) * width / 2.0 - 0.5
    fig, ax = plt.subplots(figsize=(4, 4))
    show_image(ax, image)
    colours = plt.cm.autumn(np.linspace(0.0, 1.0, len(locations)))
    ax.plot(cols, rows, "-", color="cyan", linewidth=1)
    for t, (row, col, colour) in enumerate(zip(rows, cols, colours)):
        for s in range(num_scales):
            side = patch_size * scale_factor**s
            ax.add_patch(
                Rectangle(
                    (col - side / 2, row - side / 2),
                    side,
                    side,
                    fill=False,
                    edgecolor=colour,
                    linewidth=1.5 if s == 0 else 0.8,
                    linestyle="-" if s == 0 else "--",
                )
            )
        ax.text(
            col,
            row,
            str(t + 1),
            color=colour,
            ha="center",
            va="center",
            fontsize=9,
            fontweight="bold",
        )
    ax.set_xlim(-0.5, width - 0.5)
    ax.set_ylim(height - 0.5, -0.5)
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title)
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path


def plot_caption_attention(image, attention, tokens, grid_shape, path, title=None):
    """Saves Show-Attend-Tell's picture: the image, then one panel per output token with its
    attention over the annotation grid, upsampled onto the image.

    Args:
        image: ``[H, W]`` or ``[H, W, C]``.
        attention: ``[S, L]`` attention weights of one caption (``L = h·w`` regions, row-major).
        tokens: the ``S`` output tokens (strings) to label the panels; panels beyond
            ``len(tokens)`` are not drawn.
        grid_shape: ``(h, w)`` of the annotation grid.
        path: PNG file to write.
        title: optional title.

    Returns:
        ``path``.
    """
    plt = pyplot()
    image = np.asarray(image, "float32")
    height, width = image.shape[:2]
    grid_h, grid_w = grid_shape
    attention = np.asarray(attention, "float32")[: len(tokens)]
    panels = len(tokens) + 1
    aspect = width / max(height, 1)
    fig, axes = plt.subplots(panels, 1, figsize=(min(2.0 * aspect, 10) + 0.5, 1.3 * panels + 0.4))
    axes = np.atleast_1d(axes)
    show_image(axes[0], image)
    axes[0].set_title(title or "input", fontsize=9)
    for ax, weights, token in zip(axes[1:], attention, tokens):
        show_image(ax, image)
        heat = weights.reshape(grid_h, grid_w)
        ax.imshow(
            heat,
            cmap="jet",
            alpha=0.5,
            extent=(-0.5, width - 0.5, height - 0.5, -0.5),
            interpolation="nearest",
            vmin=0.0,
            vmax=max(float(heat.max()), 1e-6),
        )
        ax.set_title(f"{token!s}", fontsize=9)
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path


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



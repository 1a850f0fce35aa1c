"""The vision family's pictures: the RAM's (and DRAM's) glimpse path over an image, and Show,
Attend and Tell's attention per output token."""

import numpy as np

from keras_adl.plotting import pyplot, save_figure, show_image


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

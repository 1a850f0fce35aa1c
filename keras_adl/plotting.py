"""Pictures of attention (matplotlib, imported lazily with the Agg backend)."""

import numpy as np


def _pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_attention(weights, source_tokens, target_tokens, path, title=None):
    """Saves an attention heatmap: rows are output steps, columns source positions.

    Args:
        weights: ``[S, T]`` attention weights of one example.
        source_tokens: ``T`` labels for the columns (padding can be trimmed by the caller).
        target_tokens: ``S`` labels for the rows.
        path: PNG file to write.
        title: optional title.

    Returns:
        ``path``.
    """
    plt = _pyplot()

    weights = np.asarray(weights)[: len(target_tokens), : len(source_tokens)]
    width = max(4.0, 0.32 * len(source_tokens) + 1.5)
    height = max(3.0, 0.32 * len(target_tokens) + 1.2)
    fig, ax = plt.subplots(figsize=(width, height))
    ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=max(float(weights.max()), 1e-6))
    ax.set_xticks(range(len(source_tokens)), [repr(t)[1:-1] for t in source_tokens])
    ax.set_yticks(range(len(target_tokens)), list(target_tokens))
    ax.set_xlabel("source")
    ax.set_ylabel("output")
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def plot_memory_addressing(write_weights, read_weights, path, title=None):
    """Saves the NTM paper's picture: write and read weightings over time for one sequence.

    Each panel is memory slots (rows) × time steps (columns), the first head of each kind; a
    copy model that learned the task writes along a diagonal, then reads the same diagonal.
    Slots that no head touched are trimmed from the bottom.

    Args:
        write_weights: ``[T, Hw, N]`` or ``[T, N]`` write weights of one sequence.
        read_weights: ``[T, R, N]`` or ``[T, N]`` read weights of the same sequence.
        path: PNG file to write.
        title: optional title.

    Returns:
        ``path``.
    """
    plt = _pyplot()
    import matplotlib.ticker

    panels = []
    for weights in (write_weights, read_weights):
        weights = np.asarray(weights, "float32")
        if weights.ndim == 3:
            weights = weights[:, 0]
        panels.append(weights.T)  # [N, T]
    used = np.flatnonzero(np.maximum(panels[0], panels[1]).max(axis=1) > 0.05)
    rows = int(used.max()) + 2 if used.size else panels[0].shape[0]
    rows = min(max(rows, 4), panels[0].shape[0])
    steps = panels[0].shape[1]
    fig, axes = plt.subplots(1, 2, figsize=(max(6.0, 0.18 * steps * 2 + 2), 0.12 * rows + 2.2))
    for ax, weights, name in zip(axes, panels, ("write weights", "read weights")):
        ax.imshow(weights[:rows], cmap="gray_r", vmin=0.0, vmax=1.0, aspect="auto",
                  interpolation="nearest")
        ax.set_title(name)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_xlabel("time step")
        ax.set_ylabel("memory slot")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def _show_image(ax, image):
    image = np.asarray(image, "float32")
    if image.ndim == 3 and image.shape[-1] == 1:
        image = image[..., 0]
    ax.imshow(image, cmap="gray" if image.ndim == 2 else None, vmin=0.0,
              vmax=max(1.0, float(image.max())))


def plot_glimpse_path(image, locations, patch_size, num_scales, path, scale_factor=2.0,
                      title=None):
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
    plt = _pyplot()
    from matplotlib.patches import Rectangle

    image = np.asarray(image)
    height, width = image.shape[:2]
    locations = np.asarray(locations, "float32")
    rows = (locations[:, 0] + 1.0) * height / 2.0 - 0.5  # pixel-centre coordinates of imshow
    cols = (locations[:, 1] + 1.0) * width / 2.0 - 0.5
    fig, ax = plt.subplots(figsize=(4, 4))
    _show_image(ax, image)
    colours = plt.cm.autumn(np.linspace(0.0, 1.0, len(locations)))
    ax.plot(cols, rows, "-", color="cyan", linewidth=1)
    for t, (row, col, colour) in enumerate(zip(rows, cols, colours)):
        for s in range(num_scales):
            side = patch_size * scale_factor**s
            ax.add_patch(Rectangle((col - side / 2, row - side / 2), side, side, fill=False,
                                   edgecolor=colour, linewidth=1.5 if s == 0 else 0.8,
                                   linestyle="-" if s == 0 else "--"))
        ax.text(col, row, str(t + 1), color=colour, ha="center", va="center", fontsize=9,
                fontweight="bold")
    ax.set_xlim(-0.5, width - 0.5)
    ax.set_ylim(height - 0.5, -0.5)
    ax.set_xticks([])
    ax.set_yticks([])
    if title:
        ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
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
    plt = _pyplot()
    image = np.asarray(image, "float32")
    height, width = image.shape[:2]
    grid_h, grid_w = grid_shape
    attention = np.asarray(attention, "float32")[: len(tokens)]
    panels = len(tokens) + 1
    aspect = width / max(height, 1)
    fig, axes = plt.subplots(panels, 1, figsize=(min(2.0 * aspect, 10) + 0.5, 1.3 * panels + 0.4))
    axes = np.atleast_1d(axes)
    _show_image(axes[0], image)
    axes[0].set_title(title or "input", fontsize=9)
    for ax, weights, token in zip(axes[1:], attention, tokens):
        _show_image(ax, image)
        heat = weights.reshape(grid_h, grid_w)
        ax.imshow(heat, cmap="jet", alpha=0.5, extent=(-0.5, width - 0.5, height - 0.5, -0.5),
                  interpolation="nearest", vmin=0.0, vmax=max(float(heat.max()), 1e-6))
        ax.set_title(f"{token!s}", fontsize=9)
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path

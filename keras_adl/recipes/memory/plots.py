"""The memory family's picture: where the heads write and read over time."""

import numpy as np

from keras_adl.plotting import pyplot, save_figure


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
    plt = pyplot()

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
        ax.imshow(
            weights[:rows],
            cmap="gray_r",
            vmin=0.0,
            vmax=1.0,
            aspect="auto",
            interpolation="nearest",
        )
        ax.set_title(name)
        ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
        ax.set_xlabel("time step")
        ax.set_ylabel("memory slot")
    if title:
        fig.suptitle(title)
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path

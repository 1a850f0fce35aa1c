"""Pictures of attention (matplotlib, imported lazily with the Agg backend)."""

import numpy as np


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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
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

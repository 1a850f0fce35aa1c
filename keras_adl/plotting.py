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

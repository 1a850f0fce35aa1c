"""The sequences family's picture: an attention heatmap of output steps over source tokens."""

import numpy as np

from keras_adl.extras import require
from keras_adl.plotting import PICTURES, pyplot, save_figure


def plot_attention(weights, source_tokens, target_tokens, path, title=None):
    """Saves an attention heatmap: rows are output steps, columns source positions.

    Args:
        weights: ``[S, T]`` attention weights of one example.
        source_tokens: ``T`` labels for the columns (padding can be trimmed by the caller).
            Labels in a script no installed font covers (Chinese or Japanese without a CJK
            font such as Debian's ``fonts-noto-cjk``) are drawn as boxes.
        target_tokens: ``S`` labels for the rows.
        path: PNG file to write.
        title: optional title.

    Returns:
        ``path``.
    """
    plt = pyplot()

    weights = np.asarray(weights)[: len(target_tokens), : len(source_tokens)]
    source_labels = [repr(str(t))[1:-1] for t in source_tokens]
    target_labels = [str(t) for t in target_tokens]
    # Room for the longest labels (source labels are written vertically) and the colour bar.
    label_width = 0.09 * max([len(t) for t in target_labels] + [1])
    label_height = 0.09 * max([len(t) for t in source_labels] + [1])
    width = max(4.5, 0.32 * len(source_labels) + label_width + 2.2)
    height = max(3.0, 0.32 * len(target_labels) + label_height + 1.2)
    fig, ax = plt.subplots(figsize=(width, height))
    image = ax.imshow(weights, cmap="viridis", vmin=0.0, vmax=max(float(weights.max()), 1e-6))
    ax.set_xticks(range(len(source_labels)), source_labels, rotation=90, fontsize=9)
    ax.set_yticks(range(len(target_labels)), target_labels, fontsize=9)
    ax.set_xlabel("source")
    ax.set_ylabel("output")
    # The colour bar, as tall as the map (mpl_toolkits comes with matplotlib, the plots extra).
    axes_grid1 = require("mpl_toolkits.axes_grid1", "plots", PICTURES)
    bar = axes_grid1.make_axes_locatable(ax).append_axes("right", size=0.15, pad=0.1)
    fig.colorbar(image, cax=bar, label="attention weight")
    if title:
        ax.set_title(title)
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path

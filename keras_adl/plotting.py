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
    from mpl_toolkits.axes_grid1 import make_axes_locatable

    bar = make_axes_locatable(ax).append_axes("right", size=0.15, pad=0.1)  # as tall as the map
    fig.colorbar(image, cax=bar, label="attention weight")
    if title:
        ax.set_title(title)
    save_figure(fig, path, dpi=100)
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
    plt = pyplot()
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
        ax.imshow(
            weights[:rows],
            cmap="gray_r",
            vmin=0.0,
            vmax=1.0,
            aspect="auto",
            interpolation="nearest",
        )
        ax.set_title(name)
        ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
        ax.set_xlabel("time step")
        ax.set_ylabel("memory slot")
    if title:
        fig.suptitle(title)
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path


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


def plot_embeddings(embeddings, words, path, neighbors=5, perplexity=None, seed=0, title=None):
    """Saves a t-SNE map (scikit-learn) of chosen words and their nearest neighbours: each
    chosen word and its neighbours share a colour, every point is labelled.

    Args:
        embeddings: a `keras_adl.embeddings.Embeddings`.
        words: the words to show (unknown ones are skipped).
        path: PNG file to write.
        neighbors: nearest neighbours drawn around each word.
        perplexity: t-SNE's (default: a third of the points, at most 30).
        seed: t-SNE's random state.
        title: optional title.

    Returns:
        ``path``.

    Raises:
        ValueError: fewer than 2 of ``words`` are known.
        MissingExtra: matplotlib (``keras-adl[plots]``) or scikit-learn (``keras-adl[data]``)
            is not installed.
    """
    plt = pyplot()
    TSNE = require("sklearn.manifold", "data", "the t-SNE map (plot_embeddings)").TSNE

    chosen = [w for w in words if w in embeddings]
    if len(chosen) < 2:
        raise ValueError(
            f"plot_embeddings: at least 2 of `words` must be in the vocabulary; received "
            f"{len(chosen)} known of {len(words)}."
        )
    labels, groups = [], []
    for group, word in enumerate(chosen):
        for label in [word] + [w for w, _ in embeddings.most_similar(word, neighbors)]:
            if label not in labels:
                labels.append(label)
                groups.append(group)
    vectors = np.stack([embeddings.vector(w) for w in labels])
    perplexity = perplexity or max(2.0, min(30.0, len(labels) / 3))
    points = TSNE(2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(vectors)
    fig, ax = plt.subplots(figsize=(9, 7))
    colours = plt.get_cmap("tab10")
    for (x, y), label, group in zip(points, labels, groups):
        bold = label in chosen
        ax.scatter(x, y, color=colours(group % 10), s=40 if bold else 15)
        ax.annotate(
            label,
            (x, y),
            fontsize=10 if bold else 8,
            fontweight="bold" if bold else "normal",
            xytext=(3, 3),
            textcoords="offset points",
        )
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_title(title or f"t-SNE of {len(chosen)} words and their {neighbors} nearest neighbours")
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


def plot_attention_heads(weights, tokens, path, title=None):
    """Saves every head's self-attention for one text as a heatmap grid: one row per layer,
    one column per head; in each map the rows are the attending positions (queries) and the
    columns the attended ones (keys).

    Args:
        weights: ``[layers, heads, T, T]`` weights of one example (e.g. from
            `keras_adl.models.bert.attention_weights`); trimmed to ``len(tokens)``.
        tokens: the ``T`` labels (pieces) of the positions; those in a script no installed
            font covers are drawn as boxes.
        path: PNG file to write.
        title: optional title.

    Returns:
        ``path``.

    Raises:
        ValueError: ``weights`` is not 4-D or has fewer positions than ``tokens``.
    """
    weights = np.asarray(weights, dtype="float32")
    if weights.ndim != 4:
        raise ValueError(
            f"plot_attention_heads: `weights` must be [layers, heads, T, T]; received shape "
            f"{weights.shape}."
        )
    n = len(tokens)
    if weights.shape[2] < n or weights.shape[3] < n:
        raise ValueError(
            f"plot_attention_heads: `weights` covers {weights.shape[2:]} positions, fewer than "
            f"the {n} tokens."
        )
    weights = weights[:, :, :n, :n]
    layers, heads = weights.shape[:2]
    labels = [repr(str(t))[1:-1] for t in tokens]
    side = max(2.6, 0.16 * n + 1.2)
    plt = pyplot()
    fig, axes = plt.subplots(
        layers, heads, figsize=(side * heads + 0.8, side * layers + 0.4), squeeze=False
    )
    font = max(4, min(8, int(260 / max(n, 1))))
    for i in range(layers):
        for j in range(heads):
            ax = axes[i][j]
            ax.imshow(weights[i, j], cmap="viridis", vmin=0.0, vmax=1.0)
            ax.set_xticks(range(n), labels, rotation=90, fontsize=font)
            ax.set_yticks(range(n), labels, fontsize=font)
            ax.set_title(f"layer {i + 1}, head {j + 1}", fontsize=9)
    if title:
        fig.suptitle(title)
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path


def plot_scalar_mix(weights, path, gammas=None, layer_names=None, title=None):
    """Saves the learned scalar-mix weights of one or more downstream models as grouped bars:
    one group per biLM layer, one bar per model (ELMo's ``softmax(s)``).

    Args:
        weights: ``{model or task name: [L] weights}`` (each a simplex).
        path: PNG file to write.
        gammas: optional ``{name: γ}``, shown in the legend.
        layer_names: the ``L`` layer labels (default ``layer 0`` (tokens), ``layer 1``, …).
        title: optional title.

    Returns:
        ``path``.

    Raises:
        ValueError: no weights, or weight vectors of different lengths.
    """
    if not weights:
        raise ValueError("plot_scalar_mix: `weights` must name at least one model.")
    lengths = {len(np.ravel(w)) for w in weights.values()}
    if len(lengths) != 1:
        raise ValueError(
            f"plot_scalar_mix: every weight vector must have one length; received {sorted(lengths)}."
        )
    count = lengths.pop()
    layer_names = layer_names or ["layer 0\n(tokens)"] + [f"layer {j}" for j in range(1, count)]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(1.6 + 1.4 * count, 3.4))
    width = 0.8 / len(weights)
    for i, (name, values) in enumerate(weights.items()):
        label = name if not gammas or name not in gammas else f"{name} (γ = {gammas[name]:.2f})"
        ax.bar(np.arange(count) + i * width - 0.4 + width / 2, np.ravel(values), width, label=label)
    ax.axhline(1.0 / count, color="grey", lw=0.8, ls="--")
    ax.set_xticks(np.arange(count))
    ax.set_xticklabels(layer_names)
    ax.set_ylabel("softmax(s)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(title or "ELMo scalar-mix weights (dashed: uniform)")
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path

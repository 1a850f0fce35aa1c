"""Pictures of attention (matplotlib, imported lazily with the Agg backend).

matplotlib is optional (``pip install 'keras-adl[plots]'``): without it, each picture function
raises `keras_adl._extras.MissingExtra` (a ``ModuleNotFoundError``) naming that extra.
"""

import warnings

import numpy as np

from keras_adl.extras import require

# The subject of the error a picture function raises without matplotlib.
PICTURES = "drawing pictures"


def _pyplot():
    """``matplotlib.pyplot`` on the Agg backend (no display needed).

    Raises:
        MissingExtra: matplotlib is not installed (``keras-adl[plots]``).
    """
    matplotlib = require("matplotlib", "plots", PICTURES)
    matplotlib.use("Agg")
    return require("matplotlib.pyplot", "plots", PICTURES)


def _save(fig, path, dpi):
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
    plt = _pyplot()

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
    _save(fig, path, dpi=100)
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
    _save(fig, path, dpi=100)
    plt.close(fig)
    return path


def _show_image(ax, image):
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
    _save(fig, path, dpi=100)
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
    _save(fig, path, dpi=100)
    plt.close(fig)
    return path


_WORD_RGB = (31, 119, 255)  # blue: word weight
_SENTENCE_RGB = (220, 30, 30)  # red: sentence weight
_DOCUMENT_EXTENSIONS = (".html", ".png")


def _word_text(word):
    if isinstance(word, (bytes, bytearray)):
        return bytes(word).decode("utf-8")
    return str(word)


def _document_weights(words, word_attention, sentence_attention, scale_words_by_sentence):
    """Validates the inputs of `plot_document_attention`; returns the sentences to draw as
    ``(sentence weight, sentence intensity, [(word, word weight, word intensity), ...])``."""
    where = "plot_document_attention: "
    if isinstance(words, (str, bytes)) or not isinstance(words, (list, tuple)):
        words = np.asarray(words, dtype=object)
        if words.ndim != 2:
            raise ValueError(
                f"{where}words must be a [S][W] nested sequence of strings, got an "
                f"array of shape {words.shape}."
            )
    rows = []
    for row in words:
        if isinstance(row, (str, bytes)):
            raise ValueError(
                f"{where}words must be a [S][W] nested sequence of strings, got a "
                f"sequence of strings (one sentence?): {words!r:.80}"
            )
        rows.append([_word_text(word) for word in row])
    lengths = sorted({len(row) for row in rows})
    if len(lengths) > 1:
        raise ValueError(
            f'{where}words must be rectangular [S][W] (pad with ""), got '
            f"{len(rows)} sentences of lengths {[len(row) for row in rows]}."
        )
    words_shape = (len(rows), lengths[0] if lengths else 0)
    word_attention = np.asarray(word_attention, "float64")
    sentence_attention = np.asarray(sentence_attention, "float64")
    if word_attention.shape != words_shape or sentence_attention.shape != words_shape[:1]:
        raise ValueError(
            f"{where}expected word_attention of shape [S, W] = {words_shape} and "
            f"sentence_attention of shape [S] = {words_shape[:1]} to match words "
            f"[S][W] = {words_shape}; got word_attention {word_attention.shape} and "
            f"sentence_attention {sentence_attention.shape}."
        )
    for name, weights in (
        ("word_attention", word_attention),
        ("sentence_attention", sentence_attention),
    ):
        if not np.all(np.isfinite(weights)):
            raise ValueError(f"{where}{name} contains NaN or infinite weights.")
    real = np.array([[word != "" for word in row] for row in rows], bool).reshape(words_shape)
    drawn = real.any(axis=1)
    word_strength = np.clip(word_attention, 0.0, None)
    sentence_strength = np.clip(sentence_attention, 0.0, None)
    if scale_words_by_sentence:  # HAN's visualisation: sqrt(p_s) · p_w
        word_strength = np.sqrt(sentence_strength)[:, None] * word_strength
    word_strength = np.where(real, word_strength, 0.0)
    sentence_strength = np.where(drawn, sentence_strength, 0.0)
    word_strength = word_strength / max(float(word_strength.max(initial=0.0)), 1e-12)
    sentence_strength = sentence_strength / max(float(sentence_strength.max(initial=0.0)), 1e-12)
    sentences = []
    for s in np.flatnonzero(drawn):
        sentence_words = [
            (rows[s][w], float(word_attention[s, w]), float(word_strength[s, w]))
            for w in np.flatnonzero(real[s])
        ]
        sentences.append(
            (float(sentence_attention[s]), float(sentence_strength[s]), sentence_words)
        )
    return sentences


def _text_colour(intensity):
    return "white" if intensity > 0.6 else "black"


def _document_html(sentences, title):
    import html

    def rgba(rgb, alpha):
        return f"rgba({rgb[0]}, {rgb[1]}, {rgb[2]}, {alpha:.3f})"

    heading = html.escape(title) if title else "Document attention"
    lines = [
        "<!DOCTYPE html>",
        '<html><head><meta charset="utf-8">',
        f"<title>{heading}</title>",
        "<style>",
        "body { font-family: sans-serif; line-height: 1.9; margin: 1.5em; }",
        ".sentence { margin: 0.2em 0; }",
        ".sw { display: inline-block; min-width: 3.2em; text-align: center; margin-right: 0.6em;"
        " border: 1px solid #c33; border-radius: 3px; font-size: 0.85em; }",
        ".w { padding: 0.1em 0.15em; border-radius: 3px; }",
        "</style></head><body>",
    ]
    if title:
        lines.append(f"<h2>{heading}</h2>")
    for sentence_weight, sentence_intensity, words in sentences:
        spans = " ".join(
            f'<span class="w" style="background-color: {rgba(_WORD_RGB, intensity)}; '
            f'color: {_text_colour(intensity)}" '
            f'title="{html.escape(f"word weight {weight:.4f}", quote=True)}">'
            f"{html.escape(word, quote=True)}</span>"
            for word, weight, intensity in words
        )
        lines.append(
            f'<div class="sentence"><span class="sw" style="background-color: '
            f"{rgba(_SENTENCE_RGB, sentence_intensity)}; color: "
            f'{_text_colour(sentence_intensity)}" '
            f'title="sentence weight {sentence_weight:.4f}">{sentence_weight:.2f}</span>'
            f"{spans}</div>"
        )
    lines.append("</body></html>")
    return "\n".join(lines) + "\n"


def _document_png(sentences, title, path):
    import unicodedata

    plt = _pyplot()
    fontsize = 10
    char_width = 0.6 * fontsize / 72  # inches per character of the monospace font
    pad = 0.25 * fontsize / 72  # the words' bbox pad, each side
    row_height = 0.3
    words_left = 0.85  # inches: the sentence-weight box sits left of this

    def width(word):  # East Asian wide characters take two cells
        cells = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in word)
        return cells * char_width + 2 * pad

    longest = max((width(word) for _, _, words in sentences for word, _, _ in words), default=0.0)
    fig_width = max(10.0, words_left + longest + 0.3)
    right = fig_width - 0.2
    placed = []  # (row, x, word, intensity) and a row per sentence
    row = 0
    sentence_rows = []
    for sentence_weight, sentence_intensity, words in sentences:
        sentence_rows.append((row, sentence_weight, sentence_intensity))
        x = words_left
        for word, _, intensity in words:
            if x > words_left and x + width(word) > right:
                row, x = row + 1, words_left
            placed.append((row, x, word, intensity))
            x += width(word) + char_width
        row += 1
    top = 0.55 if title else 0.2
    fig_height = top + row_height * max(row, 1) + 0.2
    fig = plt.figure(figsize=(fig_width, fig_height))
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, fig_width)
    ax.set_ylim(fig_height, 0)
    ax.axis("off")
    text = dict(fontsize=fontsize, family="monospace", va="center", parse_math=False)
    if title:
        ax.text(fig_width / 2, 0.3, title, ha="center", fontsize=12, va="center", parse_math=False)
    for r, weight, intensity in sentence_rows:
        ax.text(
            0.15,
            top + (r + 0.5) * row_height,
            f"{weight:.2f}",
            ha="left",
            color=_text_colour(intensity),
            **text,
            bbox=dict(
                boxstyle="square,pad=0.3",
                edgecolor=np.array(_SENTENCE_RGB) / 255,
                facecolor=(*(np.array(_SENTENCE_RGB) / 255), intensity),
            ),
        )
    for r, x, word, intensity in placed:
        ax.text(
            x + pad,
            top + (r + 0.5) * row_height,
            word,
            ha="left",
            color=_text_colour(intensity),
            **text,
            bbox=dict(
                boxstyle="round,pad=0.25",
                linewidth=0,
                facecolor=(*(np.array(_WORD_RGB) / 255), intensity),
            ),
        )
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_document_attention(
    words, word_attention, sentence_attention, path, title=None, scale_words_by_sentence=True
):
    """Saves the Hierarchical Attention Network's picture of one document (Yang et al. 2016).

    One line per sentence: at the left a red box whose intensity shows the sentence weight
    (printed with 2 decimals), then the words on a blue background whose intensity shows
    the word weight. With ``scale_words_by_sentence`` a word's intensity is
    ``sqrt(sentence weight) * word weight``, as in the paper's figure, so that words of
    unimportant sentences fade; otherwise it is the raw word weight. Word intensities are
    normalised so that the strongest word of the document is fully coloured, and sentence
    intensities so that the strongest sentence is. Padding (``""`` words, sentences of
    padding only) is not drawn.

    Args:
        words: ``[S][W]`` words of one document, str or UTF-8 bytes, ``""`` (or ``b""``) for
            padding: nested lists or a numpy array, e.g. ``tokenizer.tokens(...)[0].numpy()``.
        word_attention: ``[S, W]`` word weights (each sentence's weights over its words).
        sentence_attention: ``[S]`` sentence weights.
        path: file to write: ``.html`` for a self-contained HTML page (inline CSS, each word
            a ``<span>`` whose ``title`` shows its weight on hover), or ``.png`` for a
            matplotlib picture of the same (long sentences wrap onto several rows).
        title: optional heading, e.g. ``"predicted: sports (0.93)"``.
        scale_words_by_sentence: scale word intensities by ``sqrt(sentence weight)``.

    Returns:
        ``path``.

    Raises:
        ValueError: if ``path`` ends with neither ``.html`` nor ``.png``, if the shapes of
            ``words``, ``word_attention`` and ``sentence_attention`` disagree, or if a
            weight is NaN (or infinite).

    Example:

    >>> import os, tempfile
    >>> words = [["the", "food", "was", "great"], ["service", "slow", "", ""], ["", "", "", ""]]
    >>> word_attention = [[0.1, 0.6, 0.1, 0.2], [0.3, 0.7, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]]
    >>> path = os.path.join(tempfile.mkdtemp(), "review.html")
    >>> path = plot_document_attention(words, word_attention, [0.8, 0.2, 0.0], path,
    ...                                title="predicted: positive (0.91)")
    >>> with open(path, encoding="utf-8") as f:
    ...     page = f.read()
    >>> "food" in page, page.count('class="w"'), "0.80" in page
    (True, 6, True)
    """
    import os

    extension = os.path.splitext(os.fspath(path))[1].lower()
    if extension not in _DOCUMENT_EXTENSIONS:
        raise ValueError(
            f"plot_document_attention: path {os.fspath(path)!r} must end with one "
            f"of {', '.join(_DOCUMENT_EXTENSIONS)}."
        )
    sentences = _document_weights(
        words, word_attention, sentence_attention, scale_words_by_sentence
    )
    if extension == ".html":
        with open(path, "w", encoding="utf-8") as f:
            f.write(_document_html(sentences, title))
    else:
        _document_png(sentences, title, path)
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
    plt = _pyplot()
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
    _save(fig, path, dpi=100)
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
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(series), figsize=(4.5 * len(series), 3.4), squeeze=False)
    for ax, (name, values) in zip(axes[0], series.items()):
        ax.plot(steps, values, lw=1.2)
        ax.set_xlabel("step")
        ax.set_title(name)
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    _save(fig, path, dpi=110)
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
    plt = _pyplot()
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
    _save(fig, path, dpi=100)
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
    plt = _pyplot()
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
    _save(fig, path, dpi=110)
    plt.close(fig)
    return path

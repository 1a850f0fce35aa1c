"""The documents family's picture: a document with its word and sentence attention."""

import html
import os
import unicodedata

import numpy as np

from keras_adl.plotting import pyplot

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
    plt = pyplot()
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

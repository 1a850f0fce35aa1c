"""The embeddings family's pictures: a t-SNE map of chosen words and their neighbours, the
words it shows, and the TSV files of TensorBoard's embedding projector."""

import os

import numpy as np

from keras_adl.extras import require
from keras_adl.plotting import pyplot, save_figure

# Words of the t-SNE picture when the corpus knows most of them (`picture_words`).
PICTURE_WORDS = ("king", "water", "red", "horse", "france", "music", "run", "tree")
# Otherwise the picture's words come from this many content words after the stop words.
PICTURE_BAND = 300


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


def picture_words(embeddings, count=None):
    """The words of the t-SNE picture: `PICTURE_WORDS` where the corpus knows at least half of
    them, else ``count`` content words of the corpus's own. Those come from a frequency band —
    after the most frequent 1% of the vocabulary (at least 10 words: the stop words, whose
    neighbours say nothing), the next `PICTURE_BAND` words made of letters — chosen one by one
    as the word least similar to those already chosen, so that each brings its own group of
    neighbours.

    Args:
        embeddings: an `Embeddings` whose words are most frequent first.
        count: how many words (default: as many as `PICTURE_WORDS`).

    Returns:
        A list of at most ``count`` words.
    """
    count = count or len(PICTURE_WORDS)
    known = [w for w in PICTURE_WORDS if w in embeddings]
    if 2 * len(known) >= len(PICTURE_WORDS):
        return known
    words = embeddings.words
    skip = max(10, len(words) // 100)
    band = [w for w in words[skip:] if w.isalpha()][:PICTURE_BAND] or list(words[:PICTURE_BAND])
    vectors = np.stack([embeddings.vector(w) for w in band])
    chosen = [0]
    closest = vectors @ vectors[0]  # each word's highest similarity to a chosen word
    while len(chosen) < min(count, len(band)):
        closest[chosen] = np.inf
        pick = int(np.argmin(closest))
        chosen.append(pick)
        closest = np.maximum(closest, vectors @ vectors[pick])
    return [band[i] for i in chosen]


def write_projector_files(embeddings, out):
    """``vectors.tsv`` and ``metadata.tsv`` for TensorBoard's embedding projector."""
    with open(os.path.join(out, "vectors.tsv"), "w", encoding="utf-8") as f:
        for row in embeddings.vectors:
            f.write("\t".join(f"{x:.5f}" for x in row) + "\n")
    with open(os.path.join(out, "metadata.tsv"), "w", encoding="utf-8") as f:
        f.writelines(word + "\n" for word in embeddings.words)

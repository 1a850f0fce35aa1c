"""The embeddings family's pictures: the words of the t-SNE map and `plot_embeddings`."""

import numpy as np
import pytest

from keras_adl.embeddings import Embeddings
from keras_adl.recipes.embeddings.plots import PICTURE_WORDS, picture_words, plot_embeddings
from tests.pictures import one_closed_figure, png_size


def test_the_picture_shows_content_words_from_distinct_groups():
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(10, 16))
    # 1,000 words, most frequent first; the first 20 are "stop words" near every group.
    words = [f"stop{i}" for i in range(20)] + [f"мир{chr(0x4E00 + i)}" for i in range(980)]
    vectors = np.concatenate(
        [
            rng.normal(size=(20, 16)) * 0.01 + centres.mean(0),
            centres[np.arange(980) % 10] + 0.05 * rng.normal(size=(980, 16)),
        ]
    )
    embeddings = Embeddings(words, vectors)
    chosen = picture_words(embeddings)
    assert len(chosen) == len(PICTURE_WORDS)
    assert not any(w.startswith("stop") for w in chosen)
    groups = {words.index(w) % 10 for w in chosen}  # index - 20 ≡ index (mod 10)
    assert len(groups) == len(chosen)  # each brings its own group of neighbours
    english = Embeddings(list(PICTURE_WORDS[:5]) + ["the", "a"], rng.normal(size=(7, 16)))
    assert picture_words(english) == list(PICTURE_WORDS[:5])


def test_plot_embeddings_labels_the_words_and_their_neighbours(tmp_path, saved):
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(3, 8))
    words, vectors = [], []
    for group, centre in enumerate(centres):  # three clusters of five words
        for member in range(5):
            words.append(f"g{group}w{member}")
            vectors.append(centre + 0.05 * rng.normal(size=8))
    embeddings = Embeddings(words, vectors)
    path = str(tmp_path / "embeddings.png")
    plot_embeddings(embeddings, ["g0w0", "g2w0", "unknown"], path, neighbors=4)
    ax = one_closed_figure(saved).axes[0]
    labels = {t.get_text() for t in ax.texts}
    assert labels == {f"g0w{i}" for i in range(5)} | {f"g2w{i}" for i in range(5)}
    assert png_size(path) == (900, 700)
    with pytest.raises(ValueError, match="at least 2 of `words` must be in the vocabulary"):
        plot_embeddings(embeddings, ["g0w0", "nope"], path)

"""The embeddings family's figures: word analogies and the WordSim-353 and SimLex-999
correlations (the files gensim's wheel ships), the nearest neighbours of a few words, and the
run's pictures."""

import os

from keras_adl.conventions import NUM_SPECIAL_TOKENS
from keras_adl.embeddings import (
    Embeddings,
    evaluate_analogies,
    evaluate_word_pairs,
    gensim_test_file,
)
from keras_adl.models.word2vec import word_vectors
from keras_adl.recipes._pictures import draw
from keras_adl.recipes.embeddings.plots import (
    picture_words,
    plot_embeddings,
    write_projector_files,
)

STANDARD_FILES = {
    "analogy": "questions-words.txt",
    "wordsim353": "wordsim353.tsv",
    "simlex999": "simlex999.txt",
}


def word_embeddings(model, vocabulary):
    """The `Embeddings` of a trained model (special ids left out)."""
    return Embeddings(vocabulary.words, word_vectors(model)[NUM_SPECIAL_TOKENS:])


def evaluate(model, vocabulary, out):
    """The standard figures (when gensim's files are installed), the nearest neighbours of the
    picture's first three words, the t-SNE picture ``embeddings.png`` and the projector's TSV
    files in ``out``."""
    embeddings = word_embeddings(model, vocabulary)
    metrics = standard_figures(embeddings)
    chosen = picture_words(embeddings)
    for word in chosen[:3]:
        neighbours = ", ".join(w for w, _ in embeddings.most_similar(word, 5))
        print(f"  {word}: {neighbours}")
    draw(plot_embeddings, embeddings, chosen, os.path.join(out, "embeddings.png"))
    write_projector_files(embeddings, out)
    return metrics


def standard_figures(embeddings):
    """Analogy accuracy (with the count of questions asked and of unknown ones) and the
    WordSim-353 and SimLex-999 Spearman correlations, from the files in the installed gensim;
    an empty dict (and a note) without gensim."""
    try:
        paths = {name: gensim_test_file(file) for name, file in STANDARD_FILES.items()}
    except (ImportError, FileNotFoundError) as error:
        print(f"  (no analogy or similarity figures: {error})")
        return {}
    analogies = evaluate_analogies(embeddings, paths["analogy"])
    figures = {
        "analogy_accuracy": analogies["accuracy"],
        "analogy_asked": analogies["asked"],
        "analogy_unknown": analogies["unknown"],
    }
    for name in ("wordsim353", "simlex999"):
        pairs = evaluate_word_pairs(embeddings, paths[name])
        spearman = pairs["spearman"]
        figures[f"{name}_spearman"] = spearman if spearman == spearman else None  # NaN: no pair
        figures[f"{name}_pairs"] = pairs["pairs"]
    return figures


def wordsim353_spearman(embeddings):
    """The WordSim-353 Spearman correlation (gensim's file; NaN when no pair is known)."""
    return evaluate_word_pairs(embeddings, gensim_test_file(STANDARD_FILES["wordsim353"]))[
        "spearman"
    ]

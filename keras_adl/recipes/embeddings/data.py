"""The embeddings family's data: the corpus and its vocabulary, the skip-gram (or CBOW) batches
drawn from it, and the steps of an epoch."""

import json
import os

from keras_adl.data.skipgrams import WordVocabulary, keep_probabilities, skipgram_dataset
from keras_adl.data.text_corpora import load_corpus, tokenize_documents
from keras_adl.recipes.embeddings.spec import STEPS_PER_EXECUTION, VOCABULARY_FILE
from keras_adl.training.rundir import RecipeError, read_run_file


def corpus(data, samples, min_count):
    """``(tokenized documents, WordVocabulary)`` of the corpus ``data`` (``--data``; ``None``:
    the installed GCIDE), its first ``samples`` documents, keeping the words seen at least
    ``min_count`` times.

    Raises:
        RecipeError: the corpus cannot be read, or fewer than 2 words are frequent enough.
    """
    try:
        documents = load_corpus(data)[:samples]
    except (OSError, ValueError) as error:
        raise RecipeError(str(error)) from None
    tokenized = tokenize_documents(documents)
    try:
        vocabulary = WordVocabulary.build(tokenized, min_count=min_count)
    except ValueError:
        raise RecipeError(
            f"fewer than 2 words are seen {min_count} times in {data or 'the corpus'}; "
            "lower --min-count or give more text"
        ) from None
    return tokenized, vocabulary


def steps_per_epoch(vocabulary, settings, batch_size, cbow=False):
    """Batches of about one pass over the corpus: the expected words kept by subsampling
    times the expected contexts per centre (``W + 1`` for skip-gram with the dynamic
    window, one example per centre for CBOW), rounded to whole compiled calls of
    `STEPS_PER_EXECUTION` steps when an epoch holds more."""
    kept = float(
        (vocabulary.counts * keep_probabilities(vocabulary.counts, settings["subsample"])).sum()
    )
    examples = kept if cbow else kept * (settings["window"] + 1)
    steps = max(1, int(examples // batch_size))
    if steps > STEPS_PER_EXECUTION:  # whole compiled calls (the fit runs no more)
        steps = round(steps / STEPS_PER_EXECUTION) * STEPS_PER_EXECUTION
    return steps


def dataset(tokenized, vocabulary, settings, batch_size, cbow=False, seed=0):
    """The endless `skipgram_dataset` of the corpus with the settings' ``window``,
    ``negatives`` and ``subsample`` (CBOW batches with ``cbow``)."""
    return skipgram_dataset(
        tokenized,
        vocabulary,
        batch_size,
        window=settings["window"],
        negatives=settings["negatives"],
        t=settings["subsample"],
        seed=seed,
        cbow=cbow,
    )


def write_vocabulary(vocabulary, path):
    """Writes the `WordVocabulary` as `VOCABULARY_FILE` to the run directory ``path`` (the
    contextual family reads it there too)."""
    with open(os.path.join(path, VOCABULARY_FILE), "w") as f:
        json.dump(vocabulary.to_config(), f)


def read_vocabulary(path):
    """The `WordVocabulary` of the run directory ``path``."""
    return WordVocabulary.from_config(read_run_file(path, VOCABULARY_FILE))

"""The embeddings family's data: the corpus and its vocabulary, the skip-gram (or CBOW) batches
drawn from it, and the steps of an epoch."""

import json
import os

from keras_adl.data.skipgrams import WordVocabulary, keep_probabilities, skipgram_stream
from keras_adl.data.text_streams import TextStream, count_words, temporary_file
from keras_adl.recipes.embeddings.spec import STEPS_PER_EXECUTION, VOCABULARY_FILE
from keras_adl.training.rundir import RecipeError, read_run_file


def corpus(data, samples, min_count, encode=True):
    """``(source, vocabulary, counted)`` of the corpus ``data`` (``--data``; ``None``: the
    installed GCIDE), its first ``samples`` documents, streamed from disk.

    ``source`` is what training reads on every pass: with ``encode``, the corpus as the
    counting pass numbered its words (`keras_adl.data.text_streams.EncodedCorpus`, a
    temporary file of 4 bytes per word, deleted when the process ends), else the `TextStream`
    itself (tokenized again on every pass). ``vocabulary`` is the `WordVocabulary` of the
    words seen at least ``min_count`` times; ``counted`` the counting pass's
    `keras_adl.data.text_streams.WordCounts` (one pass, in memory bounded by the distinct
    words).

    Raises:
        RecipeError: the corpus cannot be read, or fewer than 2 words are frequent enough, or
            no document holds two words.
    """
    encode_to = temporary_file("keras-adl-corpus-") if encode else None
    try:
        stream = TextStream(data, documents=samples)
        counted = count_words(stream, encode_to=encode_to)
    except (OSError, ValueError) as error:
        raise RecipeError(str(error)) from None
    try:
        vocabulary = WordVocabulary.from_counts(counted.counts, min_count)
    except ValueError:
        raise RecipeError(
            f"fewer than 2 words are seen {min_count} times in {data or 'the corpus'}; "
            "lower --min-count or give more text"
        ) from None
    if counted.longest < 2:
        raise RecipeError(
            f"no document of {data or 'the corpus'} holds two words, so word2vec has no window "
            "to learn from; give documents of several words"
        )
    return counted.encoded or stream, vocabulary, counted


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


def dataset(stream, vocabulary, settings, batch_size, cbow=False, seed=0):
    """The endless `skipgram_stream` of the corpus ``stream`` (`corpus`'s source) with the
    settings' ``window``,
    ``negatives`` and ``subsample`` (CBOW batches with ``cbow``)."""
    return skipgram_stream(
        stream,
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

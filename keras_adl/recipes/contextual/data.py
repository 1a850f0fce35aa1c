"""The contextual family's data: the biLM's corpus and windows, CoVe's translation pairs, and
the fortunes with the classifier's in-graph feature encoding."""

import collections

import tensorflow as tf

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.data.bilm import bilm_dataset, window_batches
from keras_adl.data.text_pairs import split_pairs
from keras_adl.recipes._development import development_rows
from keras_adl.recipes.contextual.spec import (
    DEVELOPMENT_PAIRS,
    DOCUMENT_WORDS,
    FEATURES,
    SPLIT_SEED,
)
from keras_adl.recipes.documents import data as documents_data
from keras_adl.recipes.sequences.data import load_pairs
from keras_adl.text.characters import character_ids, padded_words
from keras_adl.text.vocabulary import lookup_table

# -- pretrain_bilm -----------------------------------------------------------------------------


def bilm_datasets(corpus, batch_size, max_characters):
    """``(train, validation)`` of a `StreamedWindows` corpus: its training windows read
    from disk, shuffled, endlessly (a fixed number of steps makes an epoch), and its held-out
    windows once, cached."""
    train = window_batches(corpus.windows(), corpus.vocabulary, batch_size, max_characters)
    validation = bilm_dataset(
        corpus.held,
        corpus.vocabulary,
        batch_size,
        corpus.max_words,
        max_characters,
        shuffle=False,
        drop_remainder=False,
    ).cache()
    return train, validation


# -- cove --------------------------------------------------------------------------------------

Pairs = collections.namedtuple("Pairs", "sources targets held_out development")
Pairs.__doc__ = """CoVe's translation pairs: the training ``sources`` and ``targets``, the
held-out pairs ``(sources, targets)`` and the development pairs carved from the training ones
(``None`` when too few)."""


def translation_pairs(data, validation_split, samples):
    """`Pairs` of ``--data`` (`load_pairs`): a seeded ``validation_split`` held out, the first
    ``samples`` training pairs kept, and a seeded share of those set aside as the development
    pairs (at most `DEVELOPMENT_PAIRS`), whose loss picks the best epoch."""
    sources, targets = load_pairs(data)
    (sources, targets), held_out = split_pairs(sources, targets, validation_split, seed=SPLIT_SEED)
    sources, targets = sources[:samples], targets[:samples]
    rows = development_rows(len(sources), DEVELOPMENT_PAIRS)
    if rows is None:
        return Pairs(sources, targets, held_out, None)
    development = [sources[i] for i in rows[1]], [targets[i] for i in rows[1]]
    sources, targets = [sources[i] for i in rows[0]], [targets[i] for i in rows[0]]
    return Pairs(sources, targets, held_out, development)


# -- fortunes_features -------------------------------------------------------------------------


def fortunes(data, samples):
    """``(documents, development)``: the fortune topics (the documents family's split,
    `keras_adl.recipes.documents.data.Documents`) without the development split, and that
    split, ``(docs, labels)`` (``None`` when the training fortunes are too few)."""
    documents = documents_data.fortune_topics(data, samples)
    train_docs, train_labels, development = documents_data.development_split(
        documents.train_docs, documents.train_labels
    )
    return documents._replace(train_docs=train_docs, train_labels=train_labels), development


def input_shapes(features, sources):
    """The classifier's inputs, ``{name: shape without the batch}``: ``words`` ``[T]`` and,
    for ELMo, ``characters`` ``[T, C]``."""
    shapes = {"words": (DOCUMENT_WORDS,)}
    if FEATURES[features].elmo_mix:
        shapes["characters"] = (DOCUMENT_WORDS, sources["max_characters"])
    return shapes


def make_feature_encoder(shapes, words):
    """A function from ``[B]`` raw strings to a classifier's input dict: ``words`` (ids of
    ``words`` in `plain_words` order, ``<unk>`` outside) and, when ``shapes`` (the inputs'
    shapes without the batch, `input_shapes`) holds them, ``characters``. Returns ``encode``;
    its lookup table is ``encode.table``."""
    table = lookup_table(words, NUM_SPECIAL_TOKENS, UNK)
    length = shapes["words"][0]

    def encode(texts):
        tokens = padded_words(texts, length)
        ids = tf.where(tokens == "", tf.constant(PAD, tf.int64), table.lookup(tokens))
        feed = {"words": tf.cast(ids, tf.int32)}
        if "characters" in shapes:
            feed["characters"] = character_ids(tokens, shapes["characters"][1])
        return feed

    encode.table = table
    return encode


def classifier_dataset(shapes, words, texts, labels, batch_size, shuffle, seed=0):
    """``tf.data`` batches of the classifier's input dict (`input_shapes`: words, and
    characters for ELMo) from raw texts, with their labels."""
    encode = make_feature_encoder(shapes, words)
    dataset = tf.data.Dataset.from_tensor_slices((list(texts), list(labels)))
    if shuffle:
        dataset = dataset.shuffle(len(texts), seed=seed)
    return (
        dataset.batch(batch_size, drop_remainder=shuffle)
        .map(lambda t, y: (encode(t), y), num_parallel_calls=tf.data.AUTOTUNE)
        .prefetch(tf.data.AUTOTUNE)
    )

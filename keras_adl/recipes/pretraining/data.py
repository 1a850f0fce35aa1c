"""The pretraining family's data: the corpus and its splits, the WordPiece vocabulary, masked-LM
batches, causal-LM windows and the fortunes as a classifier reads them, window by window."""

import json
import os
import re

import numpy as np
import tensorflow as tf

from keras_adl.data.fortunes import read_other_fortunes
from keras_adl.data.pretraining import (
    lm_windows,
    masked_lm_batches,
    pack_for_lm,
    pack_inputs,
    pretraining_vocabulary,
    sentence_pairs,
    stream_sentence_pairs,
    text_windows,
)
from keras_adl.data.text_corpora import LAYOUT_RULE, load_corpus
from keras_adl.recipes._development import DEVELOPMENT_SEED, development_rows
from keras_adl.recipes.documents import data as documents_data
from keras_adl.recipes.pretraining.spec import (
    DEVELOPMENT_BATCHES,
    DEVELOPMENT_DOCUMENTS,
    FORTUNE_SHARE,
    HELD_OUT_FRACTION,
    INIT_TASKS,
    MAX_PREDICTIONS,
    OLD_TOKENIZER_FILE,
    SEGMENTS,
    SPLIT_SEED,
    TOKENIZER_FILE,
)
from keras_adl.text.wordpiece import (
    SurfaceWordPieceTokenizer,
    WordPieceTokenizer,
    learn_wordpiece,
    wordpiece_from_config,
)
from keras_adl.training.rundir import RecipeError, read_run_file

_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|\n")
# Sentence pairs of a streamed corpus shuffled at a time (they come a group of documents at a
# time: `stream_sentence_pairs`).
SHUFFLE_PAIRS = 10_000


def sentences_of(document):
    """A document's sentences: split after ``. ! ? ;`` followed by white space, and at line
    ends (a file without blank lines gives its lines as sentences: `line_blocks`)."""
    return [s for s in _SENTENCE_END.split(document.strip()) if s]


# -- the corpus ------------------------------------------------------------------------------


def corpus(data, samples, blocks=False):
    """``(train, held_out)`` document strings: ``data`` (`load_corpus`; with ``blocks`` a file
    without blank lines gives blocks of consecutive lines, one sentence each), or by default
    the installed GCIDE and fortunes (`default_corpus`)."""
    if data is None:
        return default_corpus(samples)
    try:
        documents = [d for d in load_corpus(data, blocks=blocks) if d.strip()]
    except ValueError as error:
        raise RecipeError(str(error)) from None
    if len(documents) < 4:
        raise RecipeError(
            f"{data}: the corpus holds {len(documents)} documents; need at least 4 ({LAYOUT_RULE})"
        )
    order = np.random.default_rng(SPLIT_SEED).permutation(len(documents))
    held = max(1, int(len(documents) * HELD_OUT_FRACTION))
    held_out = [documents[i] for i in order[:held]]
    train = [documents[i] for i in order[held:]][:samples]
    return train, held_out


def held_out_split(documents):
    """``(train, held_out)``: `HELD_OUT_FRACTION` of the documents held out (seed
    `SPLIT_SEED`)."""
    order = np.random.default_rng(SPLIT_SEED).permutation(len(documents))
    held = int(len(documents) * HELD_OUT_FRACTION)
    return [documents[i] for i in order[held:]], [documents[i] for i in order[:held]]


def default_corpus(samples=None):
    """The default pretraining corpus: the installed GCIDE definitions and Debian's fortunes.

    The fortunes are the training fortunes of the documents family's topic split and every
    other fortune file (`read_other_fortunes`), never one of the split's held-out fortunes,
    so fine-tuning on the topics is measured on text pretraining never saw. Each source is
    split into training and held-out documents (`HELD_OUT_FRACTION`); in the training part
    the fortunes are repeated to make up about `FORTUNE_SHARE` of the documents. Without
    fortunes installed, GCIDE alone.

    Returns:
        ``(train, held_out)`` lists of strings; ``train`` shuffled and cut to ``samples``.
    """
    try:
        train_topics, _, test_topics, *_ = documents_data.fortune_topics(None, 10**9)
        fortunes = list(train_topics) + read_other_fortunes(exclude=test_topics)
    except (OSError, ValueError):
        fortunes = []  # fortunes not installed: GCIDE alone
    definitions, held_definitions = held_out_split([d for d in load_corpus(None) if d.strip()])
    fortunes, held_fortunes = held_out_split(list(dict.fromkeys(f for f in fortunes if f.strip())))
    repeat = 0
    if fortunes:
        share = FORTUNE_SHARE / (1.0 - FORTUNE_SHARE)
        repeat = max(1, round(share * len(definitions) / len(fortunes)))
    train = definitions + fortunes * repeat
    order = np.random.default_rng(SPLIT_SEED).permutation(len(train))
    train = [train[i] for i in order][:samples]
    held_out = held_definitions + held_fortunes
    if len(train) < 2 or not held_out:
        raise RecipeError(f"the default corpus holds {len(train)} training documents")
    return train, held_out


def development_split(documents):
    """``(train, development)``: the training documents without the development split, and
    that split, a seeded tenth of the distinct documents (at most `DEVELOPMENT_DOCUMENTS`;
    every copy of a repeated one leaves training), or ``(documents, None)`` below
    ``MIN_FOR_DEVELOPMENT`` distinct documents."""
    distinct = list(dict.fromkeys(documents))
    rows = development_rows(len(distinct), DEVELOPMENT_DOCUMENTS)
    if rows is None:
        return documents, None
    development = [distinct[i] for i in rows[1]]
    held = set(development)
    return [d for d in documents if d not in held], development


# -- the vocabulary --------------------------------------------------------------------------


def learn_tokenizer(texts, vocab_size, surface=True):
    """A tokenizer whose vocabulary (``[MASK]`` first) is learned on ``texts`` (repeats
    dropped; at most 200,000 of them): a `SurfaceWordPieceTokenizer`, text kept as written
    (case, spacing; what generation writes back), or with ``surface=False`` a
    `WordPieceTokenizer` of normalised text (NFKC, case folded: earlier versions' runs)."""
    pieces = learn_wordpiece(list(dict.fromkeys(texts))[:200_000], vocab_size, surface=surface)
    tokenizer = SurfaceWordPieceTokenizer if surface else WordPieceTokenizer
    return tokenizer(pretraining_vocabulary(pieces))


def save_tokenizer(tokenizer, directory):
    """Writes the tokenizer (its vocabulary and settings) to `TOKENIZER_FILE` in ``directory``."""
    with open(os.path.join(directory, TOKENIZER_FILE), "w") as f:
        json.dump(tokenizer.get_config(), f)


def load_tokenizer(run_dir):
    """The tokenizer (`wordpiece_from_config`) saved in a run or export directory (under `TOKENIZER_FILE`,
    or `OLD_TOKENIZER_FILE` by earlier versions)."""
    config = read_run_file(run_dir, TOKENIZER_FILE, OLD_TOKENIZER_FILE)
    return wordpiece_from_config(config)


def token_lists(tokenizer, documents, batch_size=1024):
    """The piece ids of each document (a list of lists)."""
    ids = []
    for start in range(0, len(documents), batch_size):
        chunk = tf.constant(documents[start : start + batch_size])
        ids.extend(tokenizer.tokenize(chunk).to_list())
    return ids


# -- masked LM -------------------------------------------------------------------------------


def mlm_dataset(tokenizer, documents, batch_size, sequence_length, seed, segments=SEGMENTS):
    """Masked-LM batches (`masked_lm_batches`): of whole documents (``segments=
    "documents"``, each packed alone, cut to the sequence length) or of the documents'
    sentence pairs with their next-sentence labels (``"pairs"``).

    ``documents`` is a list of strings, or a corpus streamed from disk: an endless
    ``tf.data.Dataset`` of document strings, shuffled
    (`keras_adl.recipes.pretraining.streaming.StreamedCorpus.shuffled_documents`), whose
    sentence pairs are drawn among groups of documents (`stream_sentence_pairs`)."""
    streamed = isinstance(documents, tf.data.Dataset)
    if segments == "documents":
        texts = documents
        if not streamed:
            texts = tf.data.Dataset.from_tensor_slices(list(documents))
            texts = texts.shuffle(len(documents), seed=seed, reshuffle_each_iteration=True)
            texts = texts.repeat()
        batches = texts.batch(batch_size, drop_remainder=True).map(
            lambda t: pack_inputs(tokenizer.tokenize(t), sequence_length),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        return masked_lm_batches(
            batches, tokenizer.size, seed=seed, max_predictions=MAX_PREDICTIONS
        ).prefetch(tf.data.AUTOTUNE)
    if segments != "pairs":
        raise ValueError(
            f"mlm_dataset: `segments` must be 'documents' or 'pairs'; received {segments!r}."
        )
    if streamed:
        pairs = stream_sentence_pairs(documents, seed).shuffle(
            SHUFFLE_PAIRS, seed=seed, reshuffle_each_iteration=True
        )
    else:
        pairs = sentence_pairs([sentences_of(d) for d in documents], seed)

    def pack(first, second, is_next):
        packed = pack_inputs(tokenizer.tokenize(first), sequence_length, tokenizer.tokenize(second))
        packed["is_next"] = is_next
        return packed

    batches = pairs.batch(batch_size, drop_remainder=True).map(
        pack, num_parallel_calls=tf.data.AUTOTUNE
    )
    return masked_lm_batches(
        batches, tokenizer.size, seed=seed, max_predictions=MAX_PREDICTIONS
    ).prefetch(tf.data.AUTOTUNE)


def mlm_examples(documents, segments=SEGMENTS):
    """The masked-LM examples of one pass over ``documents``: the documents, or their
    sentence pairs (a sentence and its successor)."""
    if segments == "pairs":
        return sum(max(len(sentences_of(d)) - 1, 0) for d in documents)
    return len(documents)


def mlm_development(
    tokenizer, development, batch_size, length, segments=SEGMENTS, batches=DEVELOPMENT_BATCHES
):
    """The development documents as Keras' ``validation_data`` of the masked LM: ``batches``
    batches of ``length`` pieces, drawn once; ``None`` for ``"pairs"`` without a sentence
    pair."""
    if segments == "pairs" and not mlm_examples(development, segments):
        return None
    data = mlm_dataset(tokenizer, development, batch_size, length, DEVELOPMENT_SEED, segments)
    return data.take(batches).cache()


# -- causal LM -------------------------------------------------------------------------------


def lm_windows_of(tokenizer, documents, sequence_length, what="the corpus"):
    """``(inputs, targets)`` causal-LM windows of the documents (`lm_windows`).

    Raises:
        RecipeError: too little text for one window (naming ``what`` and the fix).
    """
    try:
        return lm_windows(token_lists(tokenizer, documents), sequence_length)
    except ValueError as error:
        raise RecipeError(
            f"{what} is too short for the causal LM: {str(error).removeprefix('lm_windows: ')}"
            f" Give more text (its held-out part is {HELD_OUT_FRACTION:.0%} of the documents)."
        ) from None


def lm_dataset(inputs, targets, batch_size):
    """Endless shuffled batches of causal-LM windows."""
    return (
        tf.data.Dataset.from_tensor_slices((inputs, targets))
        .shuffle(len(inputs), seed=0, reshuffle_each_iteration=True)
        .repeat()
        .batch(batch_size, drop_remainder=True)
        .prefetch(2)
    )


def lm_development(tokenizer, development, batch_size, length, batches=DEVELOPMENT_BATCHES):
    """The development documents as Keras' ``validation_data`` of the causal LM: at most
    ``batches`` batches of windows; ``None`` when they hold too few words for one window."""
    try:
        inputs, targets = lm_windows_of(tokenizer, development, length)
    except RecipeError:
        return None
    most = batches * batch_size
    return tf.data.Dataset.from_tensor_slices((inputs[:most], targets[:most])).batch(batch_size)


# -- fine-tuning -----------------------------------------------------------------------------


def fortunes(data, samples):
    """``(documents, development)``: the documents family's fortunes split
    (`keras_adl.recipes.documents.data.Documents`), its training fortunes without the
    development split, and that split, ``(docs, labels)`` or ``None``."""
    documents = documents_data.fortune_topics(data, samples)
    train_docs, train_labels, development = documents_data.development_split(
        documents.train_docs, documents.train_labels
    )
    return documents._replace(train_docs=train_docs, train_labels=train_labels), development


def check_classifier(model_name, sequence_length):
    """Raises ``ValueError`` (``TypeError``) for a model the family cannot fine-tune or a
    sequence length too short for one piece between its separators."""
    if model_name not in INIT_TASKS:
        raise ValueError(
            f"`model_name` must be one of {', '.join(map(repr, INIT_TASKS))}; "
            f"received {model_name!r}."
        )
    if isinstance(sequence_length, bool) or not isinstance(sequence_length, int):
        raise TypeError(
            f"`sequence_length` must be an int; received {type(sequence_length).__name__}."
        )
    if sequence_length < 3:  # [CLS] or [SEP], one piece, [SEP]
        raise ValueError(f"`sequence_length` must be at least 3; received {sequence_length}.")


def check_labels(texts, labels):
    """Raises ``ValueError`` unless there is one label per text."""
    if len(labels) != len(texts):
        raise ValueError(
            f"`labels` must hold one label per text: {len(texts)} texts; received "
            f"{len(labels)} labels."
        )


def _bert_windows(windows, sequence_length):
    """``[CLS] window [SEP]`` (`pack_inputs`): ``({"token_ids", "segment_ids"}, None)``."""
    packed = pack_inputs(windows, sequence_length)
    return {k: packed[k] for k in ("token_ids", "segment_ids")}, None


# How each model reads a window: its inputs, and (GPT) the next-token targets of the auxiliary
# LM loss (``[SEP] window [SEP]``, `pack_for_lm`).
WINDOW_PACKING = {"bert": _bert_windows, "gpt": pack_for_lm}


def classifier_windows(model_name, tokenizer, texts, sequence_length, max_windows=1):
    """Texts as a fine-tuned classifier reads them: each text of ``texts`` (a string tensor
    or a list) cut into up to ``max_windows`` windows of ``sequence_length - 2`` pieces
    (`text_windows`), each packed as one example: ``{"token_ids", "segment_ids"}`` (``[CLS]
    window [SEP]``, `pack_inputs`; ``bert``) or ``token_ids`` (``[SEP] window [SEP]``,
    `pack_for_lm`; ``gpt``). Eager or inside a ``tf.function`` (serving).

    Returns:
        ``(inputs, next_ids, owner)``: the packed windows ``[W, L]``; for ``gpt`` their
        next-token targets ``[W, L]`` (the auxiliary LM loss; ``None`` for ``bert``); and
        ``owner [W]``, the text each window comes from.
    """
    check_classifier(model_name, sequence_length)
    texts = tf.convert_to_tensor(texts, tf.string)
    windows, owner = text_windows(tokenizer.tokenize(texts), sequence_length - 2, max_windows)
    inputs, next_ids = WINDOW_PACKING[model_name](windows, sequence_length)
    return inputs, next_ids, owner


def text_classes(
    tokenizer,
    texts,
    labels,
    batch_size,
    sequence_length,
    shuffle,
    model_name="bert",
    lm_targets=False,
    max_windows=1,
):
    """Batches of texts for a classifier, each text as up to ``max_windows`` windows
    (`classifier_windows`) with its label: ``({"token_ids", "segment_ids"}, label)``
    (``bert``) or ``(token_ids, {"classes": label})`` (``gpt``; with ``lm_targets`` also
    ``"lm"``, the next-token targets of the auxiliary loss). With ``shuffle`` the windows are
    shuffled (seed 0, anew each epoch) and the last partial batch dropped. The dataset's
    cardinality is its number of batches: the steps of one epoch."""
    check_labels(texts, labels)
    inputs, next_ids, owner = classifier_windows(
        model_name, tokenizer, list(texts), sequence_length, max_windows
    )
    labels = tf.gather(np.asarray(labels), owner)
    targets = labels
    if next_ids is not None:  # a GPT classifier's outputs are named
        targets = {"classes": labels}
        if lm_targets:
            targets["lm"] = next_ids
    dataset = tf.data.Dataset.from_tensor_slices((inputs, targets))
    if shuffle:
        count = int(tf.shape(owner)[0])
        dataset = dataset.shuffle(count, seed=0, reshuffle_each_iteration=True)
    return dataset.batch(batch_size, drop_remainder=shuffle).prefetch(2)

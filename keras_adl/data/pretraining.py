"""Pretraining examples in ``tf.data``: packed BERT inputs, dynamic masked-LM masking,
next-sentence pairs and causal-LM windows — fixed shapes, no ragged tensor reaches a model.

Ids follow `keras_adl.conventions` and `keras_adl.text.wordpiece`: ``0`` padding, ``1``
(``<s>``) is BERT's ``[CLS]``, ``2`` (``</s>``) its ``[SEP]``, ``3`` ``<unk>``. A pretraining
vocabulary puts ``[MASK]`` first among the pieces (`pretraining_vocabulary`), so it is id ``4``
(`MASK`) and real pieces start at ``5`` (`FIRST_PIECE`). The ``[MASK]`` piece can never come out
of text: the tokenizer case-folds and splits ``[`` and ``]`` off before cutting pieces.

Masking (`mask_tokens`) is BERT's (Devlin et al. 2019, section 3.1 and appendix A.1), written
with ``tf.random`` stateless ops so a seed fixes it and every epoch draws anew:

- of each row's **real tokens** (never ``[CLS]``, ``[SEP]``, padding or ``[MASK]``),
  ``round(selection_rate * n)`` (at least one, at most ``max_predictions``) are selected
  uniformly without replacement — BERT's ``create_pretraining_data.py`` rule, so the selected
  fraction is 15% per row, not only on average;
- each selected token is replaced by ``[MASK]`` with probability ``mask_rate`` (0.8), by a
  random piece (uniform over the pieces, specials and ``[MASK]`` excluded) with probability
  ``random_rate`` (0.1), and kept otherwise;
- the model gets ``mask_positions`` / ``mask_ids`` / ``mask_weights`` ``[B, max_predictions]``:
  positions sorted, the original ids as targets, weight 1 on real slots and 0 on padded ones
  (position 0, id 0).

Whole-word masking (``word_starts``) selects words instead of pieces and masks every piece of
a chosen word (with one replacement decision per word).
"""

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from keras_adl.conventions import END, NUM_SPECIAL_TOKENS, PAD, START

__all__ = [
    "pretraining_vocabulary",
    "pack_inputs",
    "pack_for_lm",
    "mask_tokens",
    "sentence_pairs",
    "split_sentences",
    "stream_sentence_pairs",
    "lm_windows",
    "masked_lm_batches",
]


CLS = START
SEP = END
MASK = NUM_SPECIAL_TOKENS  # the first piece of a pretraining vocabulary
FIRST_PIECE = MASK + 1
MASK_PIECE = "[MASK]"


def pretraining_vocabulary(pieces):
    """``[MASK]`` followed by ``pieces`` (a `learn_wordpiece` result): the vocabulary of a
    `WordPieceTokenizer` for pretraining, in which ``[MASK]`` has id `MASK`.

    Args:
        pieces: a list of str (a ``[MASK]`` among them is dropped, so it is never listed twice).

    Returns:
        A list of str, ``[MASK]`` first.

    Example:

    >>> vocabulary = pretraining_vocabulary(["low", "##er", "[MASK]", "new", "##est"])
    >>> vocabulary
    ['[MASK]', 'low', '##er', 'new', '##est']
    >>> from keras_adl.text.wordpiece import WordPieceTokenizer
    >>> MASK, WordPieceTokenizer(vocabulary).id_to_piece(tf.constant([MASK])).numpy().tolist()
    (4, [b'[MASK]'])
    """
    pieces = [p for p in pieces if p != MASK_PIECE]
    return [MASK_PIECE] + pieces


def _check_length(name, value, minimum, *, where=""):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}`{name}` must be an int; received {type(value).__name__}.")
    if value < minimum:
        raise ValueError(f"{where}`{name}` must be at least {minimum}; received {value}.")


def _ragged(name, ids, *, where=""):
    if isinstance(ids, (list, tuple)):
        ids = tf.ragged.constant(ids, dtype=tf.int32, ragged_rank=1)
    if not isinstance(ids, tf.RaggedTensor):
        ids = tf.convert_to_tensor(ids)
        if ids.shape.rank != 2:
            raise ValueError(
                f"{where}`{name}` must be [batch, (tokens)] ids (ragged or dense with 0 "
                f"padding); received shape {ids.shape}."
            )
        ids = tf.RaggedTensor.from_tensor(ids, padding=PAD)
    return tf.cast(ids, tf.int32)


def pack_inputs(first, sequence_length, second=None):
    """``[CLS] first [SEP]`` or ``[CLS] first [SEP] second [SEP]``, padded to a fixed length.

    Long inputs are trimmed round-robin (tensorflow-text's ``RoundRobinTrimmer``: each
    segment keeps its first tokens, the longer segment loses the most).

    Args:
        first: ``[B, (n)]`` piece ids: ragged (a tokenizer's output), a list of lists, or
            dense with 0 padding.
        sequence_length: ``L``, the packed length (special tokens included).
        second: optional ``[B, (m)]`` second segments.

    Returns:
        ``{"token_ids": int32 [B, L], "segment_ids": int32 [B, L] (0 first, 1 second,
        0 padding), "padding_mask": bool [B, L]}``.

    Example:

    >>> packed = pack_inputs(tf.ragged.constant([[7, 8, 9], [5]]), 6, tf.ragged.constant([[6], [10, 11]]))
    >>> packed["token_ids"].numpy().tolist()
    [[1, 7, 8, 2, 6, 2], [1, 5, 2, 10, 11, 2]]
    >>> packed["segment_ids"].numpy().tolist()
    [[0, 0, 0, 0, 1, 1], [0, 0, 0, 1, 1, 1]]
    """
    where = "pack_inputs: "
    segments = [_ragged("first", first, where=where)]
    if second is not None:
        segments.append(_ragged("second", second, where=where))
    _check_length("sequence_length", sequence_length, len(segments) + 2, where=where)
    budget = sequence_length - 1 - len(segments)  # [CLS] and one [SEP] per segment
    trimmed = tf_text.RoundRobinTrimmer(max_seq_length=budget).trim(segments)
    ids, segment_ids = tf_text.combine_segments(
        trimmed, start_of_sequence_id=CLS, end_of_segment_id=SEP
    )
    token_ids, mask = tf_text.pad_model_inputs(ids, sequence_length, pad_value=PAD)
    segment_ids, _ = tf_text.pad_model_inputs(segment_ids, sequence_length, pad_value=0)
    return {
        "token_ids": tf.cast(token_ids, tf.int32),
        "segment_ids": tf.cast(segment_ids, tf.int32),
        "padding_mask": tf.cast(mask, tf.bool),
    }


def pack_for_lm(ids, sequence_length):
    """Texts as a causal LM reads them (GPT fine-tuning, `keras_adl.models.gpt.gpt_classifier`):
    ``[SEP] ids [SEP]``, long texts keeping their first pieces, padded to a fixed length; and
    the next-token targets of the auxiliary LM loss (the inputs shifted left, 0 after the
    closing ``[SEP]``).

    ``[SEP]`` is the ``</s>`` that `lm_windows` puts between documents and that `generate`
    starts from, so the text is framed as in pretraining.

    Args:
        ids: ``[B, (n)]`` piece ids: ragged (a tokenizer's output), a list of lists, or dense
            with 0 padding.
        sequence_length: ``L`` (the two separators included).

    Returns:
        ``(token_ids, next_ids)``, int32 ``[B, L]`` each.

    Example:

    >>> token_ids, next_ids = pack_for_lm(tf.ragged.constant([[7, 8, 9, 10], [5]]), 5)
    >>> token_ids.numpy().tolist(), next_ids.numpy().tolist()
    ([[2, 7, 8, 9, 2], [2, 5, 2, 0, 0]], [[7, 8, 9, 2, 0], [5, 2, 0, 0, 0]])
    """
    where = "pack_for_lm: "
    ids = _ragged("ids", ids, where=where)
    _check_length("sequence_length", sequence_length, 3, where=where)
    ids = ids[:, : sequence_length - 2]
    rows = ids.nrows()
    sep = tf.fill([rows, 1], tf.cast(SEP, ids.dtype))
    framed = tf.concat([sep, ids, sep], axis=1)
    token_ids = tf.cast(framed.to_tensor(PAD, shape=[None, sequence_length]), tf.int32)
    next_ids = tf.pad(token_ids[:, 1:], [[0, 0], [0, 1]])
    return token_ids, next_ids


def mask_tokens(
    token_ids,
    vocab_size,
    seed,
    max_predictions=20,
    selection_rate=0.15,
    mask_rate=0.8,
    random_rate=0.1,
    word_starts=None,
):
    """BERT's dynamic masking of packed ids (see the module docstring).

    Args:
        token_ids: int ``[B, L]`` packed ids (`pack_inputs`).
        vocab_size: ids in use (a pretraining `WordPieceTokenizer`'s ``size``); random
            replacements are drawn from ``[FIRST_PIECE, vocab_size)``.
        seed: a stateless seed, int ``[2]``.
        max_predictions: ``P``, the fixed number of prediction slots per row.
        selection_rate: the share of real tokens selected for prediction (BERT's 0.15).
        mask_rate: the probability that a selected token becomes ``[MASK]`` (BERT's 0.8).
        random_rate: the probability that it becomes a random piece (BERT's 0.1).
        word_starts: optional bool ``[B, L]``, true where a word starts (whole-word masking:
            pieces are selected and replaced a whole word at a time; the selection rate then
            applies to words).

    Returns:
        ``{"token_ids": [B, L] the masked input, "mask_positions": [B, P], "mask_ids": [B, P]
        the original ids, "mask_weights": float32 [B, P]}``.

    Example:

    >>> out = mask_tokens(tf.constant([[1, 7, 8, 9, 10, 2, 0, 0]]), 20, seed=[0, 3],
    ...                   max_predictions=3, selection_rate=0.5)
    >>> out["mask_weights"].numpy().tolist()  # round(0.5 * 4 real tokens) = 2 selected
    [[1.0, 1.0, 0.0]]
    """
    where = "mask_tokens: "
    token_ids = tf.cast(tf.convert_to_tensor(token_ids), tf.int32)
    if token_ids.shape.rank != 2:
        raise ValueError(f"{where}`token_ids` must be [batch, length]; received {token_ids.shape}.")
    _check_rates(selection_rate, mask_rate, random_rate, where=where)
    _check_max_predictions(max_predictions, where=where)
    if vocab_size <= FIRST_PIECE:
        raise ValueError(
            f"{where}`vocab_size` must exceed {FIRST_PIECE} (specials and [MASK]); received "
            f"{vocab_size}."
        )
    seeds = tf.random.experimental.stateless_split(tf.cast(seed, tf.int64), 4)
    shape = tf.shape(token_ids)
    eligible = (token_ids != PAD) & (token_ids != CLS) & (token_ids != SEP) & (token_ids != MASK)
    selected, choice = _select(eligible, word_starts, selection_rate, seeds)
    # Keep at most max_predictions selected pieces (the first ones, in position order).
    order = tf.cumsum(tf.cast(selected, tf.int32), axis=1)
    selected = selected & (order <= max_predictions)
    random_ids = tf.random.stateless_uniform(
        shape, seeds[2], minval=FIRST_PIECE, maxval=vocab_size, dtype=tf.int32
    )
    replaced = tf.where(
        choice < mask_rate, MASK, tf.where(choice < mask_rate + random_rate, random_ids, token_ids)
    )
    masked = tf.where(selected, replaced, token_ids)
    return {"token_ids": masked, **_prediction_slots(token_ids, selected, max_predictions)}


def _check_rates(selection_rate, mask_rate, random_rate, *, where=""):
    """Checks `mask_tokens`' three rates: each in [0, 1], ``mask_rate + random_rate <= 1``."""
    for name, rate in (
        ("selection_rate", selection_rate),
        ("mask_rate", mask_rate),
        ("random_rate", random_rate),
    ):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"{where}`{name}` must be in [0, 1]; received {rate}.")
    if mask_rate + random_rate > 1.0:
        raise ValueError(
            f"{where}`mask_rate + random_rate` must be at most 1; received "
            f"{mask_rate} + {random_rate}."
        )


def _check_max_predictions(max_predictions, *, where=""):
    """Checks that ``max_predictions`` is a positive int."""
    if isinstance(max_predictions, bool) or not isinstance(max_predictions, int):
        raise TypeError(f"{where}`max_predictions` must be an int; received {max_predictions!r}.")
    if max_predictions < 1:
        raise ValueError(f"{where}`max_predictions` must be positive; received {max_predictions}.")


def _select(eligible, word_starts, selection_rate, seeds):
    """``(selected, choice)`` ``[B, L]``: the pieces selected for prediction, and the uniform
    draw that decides each one's replacement (one per unit: a piece, or a whole word)."""
    shape = tf.shape(eligible)
    if word_starts is None:
        unit_starts = eligible
    else:
        unit_starts = tf.cast(word_starts, tf.bool) & eligible
    # Each unit (a piece, or a word in whole-word masking) gets its own uniform key; the
    # round(rate * n) smallest keys of a row are selected.
    unit_index = tf.cumsum(tf.cast(unit_starts, tf.int32), axis=1) - 1  # [B, L]
    unit_count = tf.reduce_sum(tf.cast(unit_starts, tf.int32), axis=1)  # [B]
    keys = tf.random.stateless_uniform(shape, seeds[0])
    keys = tf.where(unit_starts, keys, 2.0)
    rank = tf.argsort(tf.argsort(keys, axis=1, stable=True), axis=1, stable=True)  # [B, L]
    wanted = tf.cast(tf.round(tf.cast(unit_count, tf.float32) * selection_rate), tf.int32)
    wanted = tf.where(unit_count > 0, tf.maximum(wanted, 1), 0)
    unit_selected = unit_starts & (rank < wanted[:, None])
    # One replacement decision per unit, spread over its pieces.
    choice = tf.random.stateless_uniform(shape, seeds[1])
    if word_starts is None:
        return unit_selected, choice
    safe_index = tf.maximum(unit_index, 0)
    start_positions = _unit_start_positions(unit_starts, unit_index)
    unit_selected_at = tf.gather(unit_selected, start_positions, batch_dims=1)
    in_unit = eligible & (unit_index >= 0)
    selected = in_unit & tf.gather(unit_selected_at, safe_index, batch_dims=1)
    choice = tf.gather(tf.gather(choice, start_positions, batch_dims=1), safe_index, batch_dims=1)
    return selected, choice


def _prediction_slots(token_ids, selected, max_predictions):
    """``mask_positions``, ``mask_ids`` and ``mask_weights`` ``[B, max_predictions]``: the
    selected positions, sorted, padded to ``max_predictions``."""
    shape = tf.shape(token_ids)
    positions = tf.broadcast_to(tf.range(shape[1])[None, :], shape)
    sort_key = tf.where(selected, positions, shape[1] + positions)
    length = shape[1]
    slots = tf.minimum(max_predictions, length)
    picked = tf.math.top_k(-sort_key, k=slots, sorted=True).indices  # [B, slots]
    valid = tf.gather(selected, picked, batch_dims=1)
    mask_positions = tf.where(valid, picked, 0)
    mask_ids = tf.where(valid, tf.gather(token_ids, picked, batch_dims=1), 0)
    pad = [[0, 0], [0, max_predictions - slots]]
    return {
        "mask_positions": tf.pad(mask_positions, pad),
        "mask_ids": tf.pad(mask_ids, pad),
        "mask_weights": tf.pad(tf.cast(valid, tf.float32), pad),
    }


def _unit_start_positions(unit_starts, unit_index):
    """For whole-word masking: ``[B, L]`` the position of the start of unit ``j`` at slot
    ``j`` (0 past the row's units)."""
    length = tf.shape(unit_starts)[1]
    positions = tf.broadcast_to(tf.range(length)[None, :], tf.shape(unit_starts))
    key = tf.where(unit_starts, positions, length + positions)
    return tf.minimum(tf.sort(key, axis=1), length - 1)


def word_starts_of(token_ids, id_is_continuation):
    """Where words start in packed ids: a real piece that is not a ``##`` continuation.

    Args:
        token_ids: int ``[B, L]``.
        id_is_continuation: bool ``[V]``, true for continuation pieces (`continuation_table`).

    Returns:
        bool ``[B, L]``.
    """
    token_ids = tf.cast(token_ids, tf.int32)
    return ~tf.gather(tf.constant(id_is_continuation), token_ids)


def continuation_table(vocabulary):
    """bool ``[V]`` over the ids of a `WordPieceTokenizer` built on ``vocabulary``: true for
    ``##`` continuation pieces."""
    flags = [False] * NUM_SPECIAL_TOKENS + [p.startswith("##") for p in vocabulary]
    return np.asarray(flags)


def sentence_pairs(documents, seed):
    """Next-sentence prediction pairs (BERT's NSP), drawn in ``tf.data``.

    Every sentence that has a successor in its document is a first segment; with probability
    1/2 its second segment is that successor (label 1), otherwise a sentence drawn uniformly
    from the **other** documents (label 0; the draw skips the document's own sentences, so a
    "random" second sentence never comes from the same document). Each pass draws anew.

    Args:
        documents: lists of sentence strings (a document of one sentence only gives random
            second sentences to others).
        seed: the seed of every draw.

    Returns:
        An endless ``tf.data.Dataset`` of ``(first, second, is_next)`` (str, str, int32),
        shuffled.

    Raises:
        ValueError: fewer than two documents, or no document with two sentences.
    """
    sentences, document_of, firsts = [], [], []
    starts, ends = [], []
    for number, document in enumerate(documents):
        start = len(sentences)
        sentences.extend(document)
        document_of.extend([number] * len(document))
        firsts.extend(range(start, len(sentences) - 1))
        starts.append(start)
        ends.append(len(sentences))
    if len(starts) < 2 or not firsts:
        raise ValueError(
            "sentence_pairs: need at least two documents and one document of two sentences; "
            f"received {len(starts)} documents with {len(firsts)} sentence pairs."
        )
    table = tf.constant(sentences)
    document_of = tf.constant(document_of, tf.int32)
    starts, ends = tf.constant(starts, tf.int32), tf.constant(ends, tf.int32)
    total = len(sentences)

    def pair(step, first):
        seeds = tf.random.experimental.stateless_split(
            tf.stack([tf.constant(seed, tf.int64), step]), 2
        )
        document = document_of[first]
        own = ends[document] - starts[document]
        # Uniform over the sentences of the other documents: skip this document's interval.
        draw = tf.random.stateless_uniform([], seeds[0], 0, total - own, dtype=tf.int32)
        other = tf.where(draw >= starts[document], draw + own, draw)
        is_next = tf.random.stateless_uniform([], seeds[1]) < 0.5
        second = tf.where(is_next, first + 1, other)
        return table[first], table[second], tf.cast(is_next, tf.int32)

    firsts = tf.data.Dataset.from_tensor_slices(tf.constant(firsts, tf.int32))
    epochs = firsts.shuffle(len(sentences), seed=seed, reshuffle_each_iteration=True).repeat()
    steps = tf.data.Dataset.counter()
    return tf.data.Dataset.zip((steps, epochs)).map(pair, num_parallel_calls=tf.data.AUTOTUNE)


# Where `split_sentences` cuts: after ``. ! ? ;`` and white space, and at a line end (``\n``, or
# U+2028, which joins the lines of a streamed document: `keras_adl.data.text_streams`).
_SENTENCE_BREAK = "\n"


def split_sentences(texts):
    """Each text's sentences, in the graph: cut after ``. ! ? ;`` followed by white space and
    at line ends (a newline or U+2028), stripped, empty ones dropped.

    Args:
        texts: ``[N]`` strings.

    Returns:
        A ``[N, (sentences)]`` ragged string tensor.

    Example:

    >>> split_sentences(tf.constant(["Un été. Puis l'hiver ! Fin", ""])).to_list()
    [[b'Un \\xc3\\xa9t\\xc3\\xa9.', b"Puis l'hiver !", b'Fin'], []]
    """
    texts = tf.strings.regex_replace(texts, "\u2028", _SENTENCE_BREAK)
    texts = tf.strings.regex_replace(texts, r"([.!?;])\s+", "\\1" + _SENTENCE_BREAK)
    sentences = tf.strings.strip(tf.strings.split(texts, _SENTENCE_BREAK))
    return tf.ragged.boolean_mask(sentences, tf.strings.length(sentences) > 0)


def _group_pairs(step, texts, seed):
    """The next-sentence pairs of one group of documents (`stream_sentence_pairs`)."""
    sentences = split_sentences(texts)
    flat = sentences.flat_values
    owner = tf.cast(sentences.value_rowids(), tf.int32)
    starts = tf.cast(sentences.row_starts(), tf.int32)
    lengths = tf.cast(sentences.row_lengths(), tf.int32)
    total = tf.size(flat)
    position = tf.range(total)
    firsts = tf.boolean_mask(position, position < tf.gather(starts + lengths, owner) - 1)
    document = tf.gather(owner, firsts)
    own = tf.gather(lengths, document)
    seeds = tf.random.experimental.stateless_split(tf.stack([tf.cast(seed, tf.int64), step]), 2)
    count = tf.shape(firsts)
    # Uniform over the sentences of the other documents: skip this document's interval.
    others = tf.maximum(total - own, 1)
    draw = tf.random.stateless_uniform(count, seeds[0], 0, 1) * tf.cast(others, tf.float32)
    draw = tf.minimum(tf.cast(draw, tf.int32), others - 1)
    other = tf.where(draw >= tf.gather(starts, document), draw + own, draw)
    is_next = (tf.random.stateless_uniform(count, seeds[1]) < 0.5) | (total == own)
    second = tf.where(is_next, firsts + 1, other)
    return tf.gather(flat, firsts), tf.gather(flat, second), tf.cast(is_next, tf.int32)


def stream_sentence_pairs(texts, seed, group=64):
    """Next-sentence pairs (`sentence_pairs`' rule) of a stream of documents, drawn in
    ``tf.data`` without a list of the corpus: the documents come ``group`` at a time, and a
    "random" second sentence is drawn uniformly from the sentences of the **other** documents
    of the group (shuffle the documents first, so a group is a sample of the corpus).

    Args:
        texts: a ``tf.data.Dataset`` of document strings (`split_sentences` cuts them).
        seed: the seed of every draw.
        group: the documents a random second sentence is drawn among.

    Returns:
        A ``tf.data.Dataset`` of ``(first, second, is_next)`` (str, str, int32), in the
        order of the documents; a group whose sentences all belong to one document gives
        only true successors.
    """
    groups = texts.batch(group)
    return (
        tf.data.Dataset.zip((tf.data.Dataset.counter(), groups))
        .map(lambda step, t: _group_pairs(step, t, seed), num_parallel_calls=tf.data.AUTOTUNE)
        .unbatch()
    )


def text_windows(ids, width, max_windows):
    """Each text as up to ``max_windows`` consecutive, non-overlapping windows of ``width``
    pieces from its start, so a classifier that reads ``width`` pieces at a time can read
    more of a long text than its start. A last part shorter than ``width`` is left out, except that a text shorter
    than one window (an empty one too) is its own window: text ``b`` of ``n_b`` pieces gives
    ``min(max_windows, max(1, n_b // width))`` windows.

    Graph-safe (ragged ops only), so a serving function can split its texts.

    Args:
        ids: ``[B, (n)]`` piece ids: ragged (a tokenizer's output), a list of lists, or dense
            with 0 padding.
        width: pieces per window (a classifier's ``sequence_length - 2``: `pack_inputs`,
            `pack_for_lm`).
        max_windows: the most windows a text gives; 1 reads each text's first ``width``
            pieces only.

    Returns:
        ``(windows, owner)``: int32 ``[W, (<= width)]`` ragged windows, text by text and in
        order within a text, and int32 ``[W]`` ``owner``, the text each window comes from.

    Example:

    >>> windows, owner = text_windows(tf.ragged.constant([[5, 6, 7, 8, 9], [10]]), 2, 3)
    >>> windows.to_list(), owner.numpy().tolist()
    ([[5, 6], [7, 8], [10]], [0, 0, 1])
    """
    where = "text_windows: "
    _check_length("width", width, 1, where=where)
    _check_length("max_windows", max_windows, 1, where=where)
    ids = _ragged("ids", ids, where=where)
    lengths = tf.cast(ids.row_lengths(), tf.int32)
    counts = tf.minimum(max_windows, tf.maximum(1, lengths // width))
    owner = tf.repeat(tf.range(tf.shape(lengths)[0]), counts)
    index = tf.ragged.range(counts).flat_values  # each window's place in its text
    offsets = index * width
    starts = tf.gather(tf.cast(ids.row_starts(), tf.int32), owner) + offsets
    sizes = tf.minimum(width, tf.gather(lengths, owner) - offsets)
    windows = tf.gather(ids.flat_values, tf.ragged.range(starts, starts + sizes))
    return windows, owner


def lm_windows(token_lists, sequence_length, separator=SEP):
    """Causal-LM examples: the documents' ids joined (``separator`` after each) and cut into
    windows of ``sequence_length + 1``; each gives inputs ``w[:-1]`` and targets ``w[1:]``.

    Args:
        token_lists: lists (or arrays) of piece ids, one per document.
        sequence_length: ``L``.
        separator: the id ending each document (``[SEP]``/``</s>``), so the model learns
            where a text ends.

    Returns:
        ``(inputs, targets)``, int32 ``[N, L]`` each (the last, partial window is dropped).

    Example:

    >>> inputs, targets = lm_windows([[5, 6, 7], [8, 9]], 3)
    >>> inputs.tolist(), targets.tolist()
    ([[5, 6, 7], [2, 8, 9]], [[6, 7, 2], [8, 9, 2]])
    """
    _check_length("sequence_length", sequence_length, 1, where="lm_windows: ")
    stream = []
    for ids in token_lists:
        stream.extend(int(i) for i in ids)
        stream.append(separator)
    stream = np.asarray(stream, dtype="int32")
    count = (len(stream) - 1) // sequence_length
    if count < 1:
        raise ValueError(
            f"lm_windows: the documents hold {len(stream)} ids with separators, fewer than "
            f"one window of sequence_length + 1 = {sequence_length + 1}."
        )
    starts = np.arange(count) * sequence_length
    index = starts[:, None] + np.arange(sequence_length + 1)[None, :]
    windows = stream[index]
    return windows[:, :-1], windows[:, 1:]


def masked_lm_batches(dataset, vocab_size, seed=0, max_predictions=20, word_continuations=None):
    """Masks each batch of a dataset of packed inputs anew (dynamic masking, BERT-style).

    Args:
        dataset: batches of `pack_inputs` dicts, optionally with ``is_next`` (int ``[B]``).
        vocab_size: the tokenizer's size.
        seed: masking is a stateless function of ``(seed, batch number)``.
        max_predictions: ``P``.
        word_continuations: `continuation_table` of the vocabulary for whole-word masking
            (``None``: pieces are masked independently).

    Returns:
        A dataset of ``(inputs, targets, sample_weights)`` for a `bert_pretrainer` compiled
        by `compile_pretrainer`: inputs ``token_ids`` (masked), ``segment_ids``,
        ``mask_positions``; targets ``{"mlm": mask_ids}`` (and ``"nsp": is_next``); weights
        ``{"mlm": mask_weights}`` (and ``"nsp"``: ones).
    """

    def mask(number, batch):
        starts = None
        if word_continuations is not None:
            starts = word_starts_of(batch["token_ids"], word_continuations)
        out = mask_tokens(
            batch["token_ids"],
            vocab_size,
            tf.stack([tf.constant(seed, tf.int64), number]),
            max_predictions=max_predictions,
            word_starts=starts,
        )
        inputs = {
            "token_ids": out["token_ids"],
            "segment_ids": batch["segment_ids"],
            "mask_positions": out["mask_positions"],
        }
        targets = {"mlm": out["mask_ids"]}
        weights = {"mlm": out["mask_weights"]}
        if "is_next" in batch:
            targets["nsp"] = batch["is_next"]
            weights["nsp"] = tf.ones_like(batch["is_next"], tf.float32)
        return inputs, targets, weights

    numbered = tf.data.Dataset.zip((tf.data.Dataset.counter(), dataset))
    return numbered.map(mask, num_parallel_calls=tf.data.AUTOTUNE)

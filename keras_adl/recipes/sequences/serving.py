"""The sequences family's serving: raw strings in, decoded strings (or a sorting order) out,
the exports, and how ``keras-adl predict`` prints them."""

import re

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops of exported text models)

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.data.dates import SOURCE_LENGTH
from keras_adl.models.pointer import pointer_decode
from keras_adl.models.seq2seq import beam_search, greedy_decode
from keras_adl.recipes._recipe import Answers, raw_bytes
from keras_adl.recipes.sequences.retrieval import complete_matches, repaired_matches
from keras_adl.recipes.sequences.spec import SORT_LENGTH
from keras_adl.training.export import export_serving_fn
from keras_adl.training.rundir import RecipeError
from keras_adl.training.serving_inputs import cut_ids, is_blank, read_raw_text


def _code_point_table(vocab):
    """int32 ``[128]``: ASCII code point → id (``<unk>`` for characters not in ``vocab``)."""
    table = np.full(128, UNK, "int32")
    for char in vocab.chars:
        if ord(char) < 128:
            table[ord(char)] = vocab.encode([char], 1)[0, 0]
    return table


def make_seq2seq_serving_fn(
    model,
    source_vocab,
    target_vocab,
    max_length,
    beam_width=1,
    lowercase=True,
    decode=None,
    source_length=SOURCE_LENGTH,
):
    """A ``tf.function`` from raw strings ``[B]`` to decoded outputs, answering any input.

    Invalid UTF-8 is replaced (`keras_adl.training.serving_inputs`); an input with nothing to
    read (empty or blank) is answered with an empty ``output``, padding ``tokens``, zero
    ``attention`` and ``log_likelihood`` 0, without decoding; an input of more than
    ``source_length`` characters is decoded from its first ``source_length``.

    Args:
        model: a model from `attention_seq2seq` or `encoder_decoder`.
        source_vocab, target_vocab: `keras_adl.text.CharVocabulary` objects (character
            level; characters outside ASCII or the vocabulary map to ``<unk>``).
        max_length: number of target steps to decode.
        beam_width: 1 for greedy decoding, more for beam search.
        lowercase: lower-case the input first.
        decode: optional ``decode(model, ids, max_length) -> (tokens, attention, score)``,
            e.g. `keras_adl.models.transformer_greedy_decode`; by default greedy decoding
            (``beam_width=1``) or beam search.
        source_length: the most characters read of an input (the dates task's 32 by default).

    Returns:
        A ``tf.function`` with input signature ``[tf.TensorSpec([None], tf.string)]`` returning
        a dict with ``output`` (strings ``[B]``), ``tokens`` ``[B, max_length]``, ``attention``
        ``[B, max_length, T]`` (``1 <= T <= source_length``), ``log_likelihood`` ``[B]``, and
        the flags ``empty``, ``truncated`` and ``invalid_utf8`` (``bool [B]``).
    """
    table = tf.constant(_code_point_table(source_vocab))
    target_tokens = tf.constant([""] * NUM_SPECIAL_TOKENS + list(target_vocab.chars))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        text, invalid_utf8 = read_raw_text(inputs)
        empty = is_blank(text)
        text = tf.strings.lower(text) if lowercase else text
        code_points = tf.strings.unicode_decode(text, "UTF-8", errors="replace")
        ids = tf.gather(table, tf.minimum(code_points, 127))
        ids, truncated = cut_ids(tf.where(code_points > 127, UNK, ids), source_length)
        ids = tf.where(empty[:, None], PAD, ids)  # a blank input reads nothing
        if decode is not None:
            tokens, attention, score = decode(model, ids, max_length)
        elif beam_width > 1:
            tokens, attention, score = beam_search(model, ids, max_length, beam_width)
        else:
            tokens, attention, score = greedy_decode(model, ids, max_length)
        tokens = tf.where(empty[:, None], PAD, tf.convert_to_tensor(tokens))
        attention = tf.where(empty[:, None, None], 0.0, tf.convert_to_tensor(attention))
        score = tf.where(empty, 0.0, tf.convert_to_tensor(score))
        # Specials (<pad>, <s>, </s>, <unk>) render as ""; decoding emits padding after </s>.
        output = tf.strings.reduce_join(tf.gather(target_tokens, tokens), axis=-1)
        return {
            "output": output,
            "tokens": tokens,
            "attention": attention,
            "log_likelihood": score,
            "empty": empty,
            "truncated": truncated,
            "invalid_utf8": invalid_utf8,
        }

    return serve


def export_seq2seq(
    model, export_dir, source_vocab, target_vocab, max_length, beam_width=1, decode=None
):
    """Writes a SavedModel whose ``serving_default`` decodes raw strings.

    Args:
        model: a model from `attention_seq2seq`, `encoder_decoder` (or `transformer_seq2seq`
            with ``decode=transformer_greedy_decode``).
        export_dir: where to write; must not exist (nothing is left behind on failure).
        source_vocab, target_vocab, max_length, beam_width, decode: as in
            `make_seq2seq_serving_fn`.
    """
    serving_fn = make_seq2seq_serving_fn(
        model, source_vocab, target_vocab, max_length, beam_width, decode=decode
    )
    return export_serving_fn(model, export_dir, serving_fn)


# A number as the pointer export reads it: decimal, optionally signed, with an exponent.
NUMBER = r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?"


def make_pointer_serving_fn(model, max_count=10 * SORT_LENGTH):
    """A ``tf.function`` from raw strings of numbers to the pointer network's sorting order,
    answering any input.

    Each input string holds numbers separated by white space, commas or semicolons
    (``"0.3 0.1, 0.2"``); the inputs of one request may hold different counts (each row is
    decoded over its own numbers). An input holding anything that is not a finite number is
    answered as an empty one and flagged ``invalid``; one with more than ``max_count`` numbers
    is sorted over its first ``max_count`` and flagged ``truncated``.

    Args:
        model: a model from `pointer_network` (``input_dim=1``).
        max_count: the most numbers read of an input (10 times the task's 10 by default).

    Returns:
        A ``tf.function`` returning ``order`` int32 ``[B, N]`` (positions in output order; -1
        past a row's count), ``output`` (the numbers in that order, space-separated, 4
        decimals), ``count`` int32 ``[B]`` (numbers read), and the flags ``empty`` (no number
        read), ``invalid``, ``truncated`` and ``invalid_utf8`` (``bool [B]``).
    """

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        text, invalid_utf8 = read_raw_text(inputs)
        parts = tf.strings.split(tf.strings.regex_replace(text, r"[,;]", " "))
        numeric = tf.ragged.map_flat_values(tf.strings.regex_full_match, parts, NUMBER)
        safe = parts.with_flat_values(tf.where(numeric.flat_values, parts.flat_values, "0"))
        values = tf.ragged.map_flat_values(tf.strings.to_number, safe, out_type=tf.float32)
        finite = tf.ragged.map_flat_values(tf.math.is_finite, values)
        readable = tf.ragged.map_flat_values(tf.logical_and, numeric, finite)
        invalid = tf.logical_not(tf.reduce_all(readable, axis=1)) | invalid_utf8
        keep = tf.ragged.map_flat_values(
            tf.logical_and, readable, tf.gather(tf.logical_not(invalid), readable.value_rowids())
        )
        values = tf.ragged.boolean_mask(values, keep)
        truncated = values.row_lengths() > max_count
        values = values[:, :max_count]
        count = tf.cast(values.row_lengths(), tf.int32)
        dense = values.to_tensor()
        dense = tf.pad(dense, [[0, 0], [0, tf.maximum(1 - tf.shape(dense)[1], 0)]])  # >= 1 step
        mask = tf.sequence_mask(count, tf.shape(dense)[1])
        order, _ = pointer_decode(model, dense[..., None], mask)
        order = tf.convert_to_tensor(order)
        ordered = tf.gather(dense, tf.maximum(order, 0), batch_dims=1)
        numbers = tf.ragged.boolean_mask(tf.strings.as_string(ordered, precision=4), order >= 0)
        return {
            "order": order,
            "output": tf.strings.reduce_join(numbers, axis=-1, separator=" "),
            "count": count,
            "empty": tf.equal(count, 0),
            "invalid": invalid,
            "truncated": truncated,
            "invalid_utf8": invalid_utf8,
        }

    return serve


def make_text_pair_serving_fn(
    model,
    tokenizer,
    source_length,
    max_length,
    decode=None,
    memory=None,
    threshold=None,
    match_input=None,
):
    """A ``tf.function`` from raw strings to decoded strings for a model trained on text pairs
    tokenized by a `keras_adl.text.TextPairTokenizer` (tensorflow-text ops in the graph).

    Any input is answered as `make_seq2seq_serving_fn` answers it: invalid UTF-8 replaced, a
    blank input answered empty without decoding, an input of more than ``source_length``
    tokens translated from its first ``source_length``. With a translation ``memory``
    (`keras_adl.text.TranslationMemory`), an input equal to a stored source, or whose best
    fuzzy match scores at least ``threshold``, is answered with the match's translation: as
    stored for an exact match, and for a fuzzy one with the spans copy-through knows
    (placeholders, options…) made the input's (`CopyThrough.repair`), when it then holds
    every placeholder of the input (`retrieval.complete_matches`). A model trained with
    its memory's matches as input (``--memory input``) reads each input with its match
    through ``match_input`` (a `retrieval.MatchInput`).

    Returns:
        A ``tf.function`` returning ``output``, ``tokens``, ``attention`` and
        ``log_likelihood`` (the model's) as `make_seq2seq_serving_fn` does, ``source_tokens``
        ``[B]`` int32: each input's token count before the model's ``source_length`` cut it,
        the flags ``empty``, ``truncated`` and ``invalid_utf8`` (``bool [B]``), and with a
        memory ``memory_score`` float32 ``[B]`` (its best match's score, 0 for a blank input)
        and ``from_memory`` bool ``[B]`` (the output is the match's translation).
    """
    decode = decode or greedy_decode
    if memory is not None and threshold is None:
        raise ValueError("make_text_pair_serving_fn: a `memory` needs its `threshold`.")
    if match_input is not None and memory is None:
        raise ValueError("make_text_pair_serving_fn: a `match_input` needs its `memory`.")

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        text, invalid_utf8 = read_raw_text(inputs)
        empty = is_blank(text)
        if memory is not None:
            found = memory.lookup(text)
            # A fuzzy match's placeholders, options… become the input's (an exact one: as is).
            found["target"] = repaired_matches(tokenizer.copy, text, found)
        if match_input is not None:
            ids = match_input.ids(text, found, source_length)
        else:
            ids = tokenizer.encode_source(text, source_length)
        ids = tf.where(empty[:, None], PAD, ids)
        tokens, attention, score = decode(model, ids, max_length)
        tokens = tf.where(empty[:, None], PAD, tf.convert_to_tensor(tokens))
        counts = tf.cast(tokenizer.token_counts(text, "source"), tf.int32)
        outputs = {
            "output": tokenizer.decode_target(tokens, text),
            "tokens": tokens,
            "attention": tf.where(empty[:, None, None], 0.0, tf.convert_to_tensor(attention)),
            "log_likelihood": tf.where(empty, 0.0, tf.convert_to_tensor(score)),
            "source_tokens": counts,
            "empty": empty,
            "truncated": counts > source_length,
            "invalid_utf8": invalid_utf8,
        }
        if memory is not None:
            # A fuzzy match missing a placeholder of the input is not trusted.
            complete = complete_matches(text, found["target"])
            trusted = found["exact"] | ((found["score"] >= threshold) & complete)
            use = trusted & (found["index"] >= 0) & tf.logical_not(empty)
            outputs["output"] = tf.where(use, found["target"], outputs["output"])
            outputs["memory_score"] = tf.where(empty, 0.0, found["score"])
            outputs["from_memory"] = use
        return outputs

    return serve


def export_text_pairs(
    model, export_dir, tokenizer, max_length, decode, memory=None, threshold=None, match_input=None
):
    """Writes a SavedModel whose ``serving_default`` translates raw strings
    (`make_text_pair_serving_fn`, reading and writing ``max_length`` tokens, completed by the
    translation ``memory`` from ``threshold`` when given, its matches read by the model
    through ``match_input`` when given), the tokenizer's tables and the memory tracked with
    it."""
    serve = make_text_pair_serving_fn(
        model,
        tokenizer,
        max_length,
        max_length,
        decode=decode,
        memory=memory,
        threshold=threshold,
        match_input=match_input,
    )
    resources = list(tokenizer.tables) + ([memory] if memory is not None else [])
    return export_serving_fn(model, export_dir, serve, resources=resources)


def tf_error_message(error):
    """The useful part of a TensorFlow runtime error: an assertion's text, else its first
    line."""
    text = str(error)
    found = re.search(r"assertion failed: \[([^\]]+)\]", text) or re.search(
        r"StringToNumberOp could not correctly convert string: ([^\n]+)", text
    )
    if found:
        return found.group(0) if "StringToNumber" in found.group(0) else found.group(1)
    return text.strip().splitlines()[0]


def serve_inputs(export_dir, inputs):
    """The exported model's outputs (numpy) for ``inputs`` (bytes), and which inputs they
    answer: all of them, or for an export of an earlier version (which could not read a blank
    input) the non-blank ones.

    Raises:
        RecipeError: the model could not read them (one line).
    """
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    answers_all = "empty" in serve.structured_outputs
    served = [i for i, text in enumerate(inputs) if answers_all or text.strip()]
    if not served:
        return {}, served
    try:
        outputs = serve(inputs=tf.constant([inputs[i] for i in served], tf.string))
    except (tf.errors.InvalidArgumentError, ValueError) as error:
        raise RecipeError(
            f"the model could not read these inputs: {tf_error_message(error)}"
        ) from None
    return {k: v.numpy() for k, v in outputs.items()}, served


def predict(export_dir, inputs, task_info):
    """Prints ``input<TAB>output`` for each raw string, in order. An input with nothing to read
    (or, for ``sort``, something other than numbers) gets a line saying so while the others are
    still answered, and the exit status is 1; an input with invalid UTF-8 or longer than the
    model reads is answered with a warning naming it."""
    answers = Answers(inputs)
    data = raw_bytes(inputs)
    outputs, served = serve_inputs(export_dir, data)
    row = {number: index for index, number in enumerate(served)}
    length = task_info.get("max_length")
    for number in range(len(inputs)):
        i = row.get(number)
        if i is None or outputs.get("empty", [False] * (i + 1))[i]:
            invalid = i is not None and "invalid" in outputs and outputs["invalid"][i]
            why = "not a list of numbers" if invalid else "empty input: nothing to read"
            answers.fail(number + 1, why)
            continue
        answers.answer(number + 1, outputs["output"][i].decode("utf-8", "replace"))
        too_long = None
        if "source_tokens" in outputs and length and outputs["source_tokens"][i] > length:
            count = outputs["source_tokens"][i]
            too_long = (
                f"{count} tokens; the model reads {length}, so only the first {length} were "
                "translated"
            )
            if "truncated" not in outputs:  # an export of an earlier version has no flag
                answers.warn(number + 1, too_long)
        answers.flags(number + 1, outputs, i, too_long)
    answers.finish()

"""The sequences family's serving: raw strings in, decoded strings (or a sorting order) out,
the exports, and how ``keras-adl predict`` prints them."""

import re
import sys

import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops of exported text models)

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.data.dates import SOURCE_LENGTH
from keras_adl.models.pointer import pointer_decode
from keras_adl.models.seq2seq import beam_search, greedy_decode
from keras_adl.recipes.sequences.spec import PROG_NAME
from keras_adl.training.export import export_serving_fn
from keras_adl.training.serving_inputs import cut_ids, is_blank, read_raw_text
from keras_adl.training.rundir import RecipeError


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


def make_pointer_serving_fn(model):
    """A ``tf.function`` from raw strings of numbers to the pointer network's sorting order.

    Each input string holds whitespace- or comma-separated numbers (``"0.3 0.1, 0.2"``); all
    strings of one request must hold the same count.

    Returns:
        A ``tf.function`` returning ``order`` ``[B, N]`` (positions in output order) and
        ``output`` (the numbers in that order, as a space-separated string).
    """

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        parts = tf.strings.split(tf.strings.regex_replace(inputs, ",", " "))
        values = tf.strings.to_number(parts, tf.float32)
        lengths = values.row_lengths()
        tf.debugging.assert_equal(
            lengths, lengths[0], message="every input of one request needs the same count"
        )
        dense = values.to_tensor()
        order, _ = pointer_decode(model, dense[..., None])
        ordered = tf.gather(dense, tf.convert_to_tensor(order), batch_dims=1)
        output = tf.strings.reduce_join(
            tf.strings.as_string(ordered, precision=4), axis=-1, separator=" "
        )
        return {"order": tf.convert_to_tensor(order), "output": output}

    return serve


def make_text_pair_serving_fn(model, tokenizer, source_length, max_length, decode=None):
    """A ``tf.function`` from raw strings to decoded strings for a model trained on text pairs
    tokenized by a `keras_adl.text.TextPairTokenizer` (tensorflow-text ops in the graph).

    Returns:
        A ``tf.function`` returning ``output``, ``tokens``, ``attention`` and
        ``log_likelihood`` as `make_seq2seq_serving_fn` does, and ``source_tokens`` ``[B]``
        int32: each input's token count before the model's ``source_length`` cut it (an
        input with more tokens was truncated).
    """
    decode = decode or greedy_decode

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        ids = tokenizer.encode_source(inputs, source_length)
        tokens, attention, score = decode(model, ids, max_length)
        tokens = tf.convert_to_tensor(tokens)
        counts = tf.cast(tokenizer.token_counts(inputs, "source"), tf.int32)
        return {
            "output": tokenizer.decode_target(tokens, inputs),
            "tokens": tokens,
            "attention": attention,
            "log_likelihood": score,
            "source_tokens": counts,
        }

    return serve


def export_text_pairs(model, export_dir, tokenizer, max_length, decode):
    """Writes a SavedModel whose ``serving_default`` translates raw strings
    (`make_text_pair_serving_fn`, reading and writing ``max_length`` tokens), the tokenizer's
    tables tracked with it."""
    serve = make_text_pair_serving_fn(model, tokenizer, max_length, max_length, decode=decode)
    return export_serving_fn(model, export_dir, serve, resources=tokenizer.tables)


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


def serve_inputs(export_dir, readable):
    """The exported model's outputs for the non-empty inputs ``readable`` (``{}`` when there
    are none).

    Raises:
        RecipeError: the model could not read them (one line).
    """
    if not readable:
        return {}
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    try:
        return serve(inputs=tf.constant(readable))
    except (tf.errors.InvalidArgumentError, ValueError) as error:
        raise RecipeError(
            f"the model could not read these inputs: {tf_error_message(error)}"
        ) from None


def predict(export_dir, inputs, task_info):
    """Prints ``input<TAB>output`` for each raw string, in order. An empty input gets an
    error line of its own and the others are still served; a text-pair input longer than
    the model reads is reported (its tail was not translated)."""
    readable = [text for text in inputs if text.strip()]
    outputs = serve_inputs(export_dir, readable)
    length = task_info.get("max_length")
    served = iter(outputs["output"].numpy()) if readable else iter(())
    counts = iter(outputs["source_tokens"].numpy()) if "source_tokens" in outputs else None
    empty = 0
    for number, text in enumerate(inputs, 1):
        if not text.strip():
            print(f"{text}\t(empty input: nothing to translate)")
            empty += 1
            continue
        print(f"{text}\t{next(served).decode()}")
        count = int(next(counts)) if counts is not None else 0
        if length and count > length:
            print(
                f"{PROG_NAME}: warning: input {number} has {count} tokens; the model reads "
                f"{length}, so only the first {length} were translated",
                file=sys.stderr,
            )
    if empty:
        raise RecipeError(f"{empty} of {len(inputs)} input(s) were empty")

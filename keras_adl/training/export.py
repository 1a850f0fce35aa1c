"""SavedModel export of sequence-to-sequence inference with a raw-string signature.

The exported ``serving_default`` takes a batch of raw strings and returns the decoded strings,
the token ids, the attention matrix and the log-likelihood. Tokenization lives only in the
serving function (plain TensorFlow string ops, no lookup tables), so the SavedModel loads with
``tf.saved_model.load`` in a process where ``keras_adl`` is not installed.
"""

import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf

from keras_adl.models.pointer import pointer_decode
from keras_adl.models.seq2seq import beam_search, greedy_decode


def _code_point_table(vocab):
    """int32 ``[128]``: ASCII code point → id (``<unk>`` for characters not in ``vocab``)."""
    table = np.full(128, 3, "int32")
    for char in vocab.chars:
        if ord(char) < 128:
            table[ord(char)] = vocab.encode([char], 1)[0, 0]
    return table


def make_seq2seq_serving_fn(model, source_vocab, target_vocab, max_length, beam_width=1,
                            lowercase=True, decode=None):
    """A ``tf.function`` from raw strings ``[B]`` to decoded outputs.

    Args:
        model: a model from `attention_seq2seq` or `encoder_decoder`.
        source_vocab, target_vocab: `keras_adl.tasks.dates.CharVocabulary` objects (character
            level; characters outside ASCII or the vocabulary map to ``<unk>``).
        max_length: number of target steps to decode.
        beam_width: 1 for greedy decoding, more for beam search.
        lowercase: lower-case the input first.
        decode: optional ``decode(model, ids, max_length) -> (tokens, attention, score)``,
            e.g. `keras_adl.models.transformer_greedy_decode`; by default greedy decoding
            (``beam_width=1``) or beam search.

    Returns:
        A ``tf.function`` with input signature ``[tf.TensorSpec([None], tf.string)]`` returning
        a dict with ``output`` (strings ``[B]``), ``tokens`` ``[B, max_length]``, ``attention``
        ``[B, max_length, T]`` and ``log_likelihood`` ``[B]``.
    """
    table = tf.constant(_code_point_table(source_vocab))
    target_tokens = tf.constant([""] * 4 + list(target_vocab.chars))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        text = tf.strings.lower(inputs) if lowercase else inputs
        code_points = tf.strings.unicode_decode(text, "UTF-8", errors="replace")
        ids = tf.gather(table, tf.minimum(code_points, 127))
        ids = tf.where(code_points > 127, 3, ids).to_tensor(default_value=0)
        if decode is not None:
            tokens, attention, score = decode(model, ids, max_length)
        elif beam_width > 1:
            tokens, attention, score = beam_search(model, ids, max_length, beam_width)
        else:
            tokens, attention, score = greedy_decode(model, ids, max_length)
        tokens = tf.convert_to_tensor(tokens)
        # Specials (<pad>, <s>, </s>, <unk>) render as ""; decoding emits padding after </s>.
        output = tf.strings.reduce_join(tf.gather(target_tokens, tokens), axis=-1)
        return {"output": output, "tokens": tokens, "attention": attention, "log_likelihood": score}

    return serve


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
        output = tf.strings.reduce_join(tf.strings.as_string(ordered, precision=4), axis=-1,
                                        separator=" ")
        return {"order": tf.convert_to_tensor(order), "output": output}

    return serve


def make_text_pair_serving_fn(model, tokenizer, source_length, max_length, decode=None):
    """A ``tf.function`` from raw strings to decoded strings for a model trained on text pairs
    tokenized by a `keras_adl.text.TextPairTokenizer` (tensorflow-text ops in the graph).

    Returns:
        A ``tf.function`` returning ``output``, ``tokens``, ``attention`` and
        ``log_likelihood`` as `make_seq2seq_serving_fn` does.
    """
    decode = decode or greedy_decode

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        ids = tokenizer.encode_source(inputs, source_length)
        tokens, attention, score = decode(model, ids, max_length)
        tokens = tf.convert_to_tensor(tokens)
        return {"output": tokenizer.decode_target(tokens), "tokens": tokens,
                "attention": attention, "log_likelihood": score}

    return serve


def export_serving_fn(model, export_dir, serving_fn, resources=()):
    """Writes ``model`` with ``serving_fn`` as its ``serving_default`` SavedModel signature.

    The directory is written next to ``export_dir`` under a temporary name and renamed at the
    end, so a failed export leaves nothing behind.

    Args:
        resources: extra TensorFlow resources the function uses (e.g. a tokenizer's lookup
            tables) to track in the SavedModel.

    Raises:
        FileExistsError: ``export_dir`` already exists.
    """
    if os.path.exists(export_dir):
        raise FileExistsError(f"export directory {export_dir!r} already exists; choose a new one.")
    parent = os.path.dirname(os.path.abspath(export_dir))
    os.makedirs(parent, exist_ok=True)
    archive = keras.export.ExportArchive()
    archive.track(model)
    for resource in resources:
        archive.track(resource)
    archive.add_endpoint("serve", serving_fn)
    staging = tempfile.mkdtemp(prefix=".export-", dir=parent)
    try:
        archive.write_out(staging, verbose=False)
        os.rename(staging, export_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return export_dir


def export_seq2seq(model, export_dir, source_vocab, target_vocab, max_length, beam_width=1,
                   decode=None):
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

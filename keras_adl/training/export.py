"""SavedModel export of sequence-to-sequence and captioning inference.

The exported ``serving_default`` of a sequence-to-sequence model takes a batch of raw strings
and returns the decoded strings, the token ids, the attention matrix and the log-likelihood.
Tokenization lives only in the serving function (plain TensorFlow string ops, no lookup
tables), so the SavedModel loads with ``tf.saved_model.load`` in a process where ``keras_adl``
is not installed. A captioning model's takes a batch of images and returns the caption as a
string too. A HAN classifier's takes raw documents; its tokenization (tensorflow-text ops and
a vocabulary lookup table) lives in the graph, so reloading needs ``import tensorflow_text``.
"""

import os
import shutil
import tempfile

import keras
import numpy as np
import tensorflow as tf

from keras_adl.conventions import END, NUM_SPECIAL_TOKENS, PAD, START, UNK
from keras_adl.models.captioning import caption_beam_search, caption_greedy_decode
from keras_adl.models.pointer import pointer_decode
from keras_adl.models.seq2seq import beam_search, greedy_decode
from keras_adl.tasks.digit_strips import CAPTION_VOCAB_SIZE, DIGIT_OFFSET
from keras_adl.utils import check_positive_int


def _code_point_table(vocab):
    """int32 ``[128]``: ASCII code point → id (``<unk>`` for characters not in ``vocab``)."""
    table = np.full(128, UNK, "int32")
    for char in vocab.chars:
        if ord(char) < 128:
            table[ord(char)] = vocab.encode([char], 1)[0, 0]
    return table


def make_seq2seq_serving_fn(
    model, source_vocab, target_vocab, max_length, beam_width=1, lowercase=True, decode=None
):
    """A ``tf.function`` from raw strings ``[B]`` to decoded outputs.

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

    Returns:
        A ``tf.function`` with input signature ``[tf.TensorSpec([None], tf.string)]`` returning
        a dict with ``output`` (strings ``[B]``), ``tokens`` ``[B, max_length]``, ``attention``
        ``[B, max_length, T]`` and ``log_likelihood`` ``[B]``.
    """
    table = tf.constant(_code_point_table(source_vocab))
    target_tokens = tf.constant([""] * NUM_SPECIAL_TOKENS + list(target_vocab.chars))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        text = tf.strings.lower(inputs) if lowercase else inputs
        code_points = tf.strings.unicode_decode(text, "UTF-8", errors="replace")
        ids = tf.gather(table, tf.minimum(code_points, 127))
        ids = tf.where(code_points > 127, UNK, ids).to_tensor(default_value=PAD)
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


def _caption_token_strings(vocab_size, token_strings):
    """The string of every token id: specials are ``""``; by default ids 3..12 are the digits
    ``"0".."9"`` (the digit-strip task's ``token = digit + 3``)."""
    if token_strings is None:
        if vocab_size != CAPTION_VOCAB_SIZE:
            raise ValueError(
                "make_captioning_serving_fn: the default `token_strings` are the digit-strip "
                f"task's {CAPTION_VOCAB_SIZE} tokens; this model has vocab_size {vocab_size}: pass "
                "`token_strings`, one string per token id."
            )
        token_strings = [""] * DIGIT_OFFSET + [str(digit) for digit in range(10)]
    token_strings = [str(s) for s in token_strings]
    if len(token_strings) != vocab_size:
        raise ValueError(
            "make_captioning_serving_fn: `token_strings` must hold one string per token id "
            f"({vocab_size} for this model); received {len(token_strings)}."
        )
    for special in (PAD, START, END):
        token_strings[special] = ""
    return token_strings


def make_captioning_serving_fn(model, max_length, beam_width=1, token_strings=None):
    """A ``tf.function`` from a batch of images to captions, for a `show_attend_tell` model.

    Args:
        model: a model from `keras_adl.models.show_attend_tell` (image or feature mode).
        max_length: number of caption steps to decode (including ``END``).
        beam_width: 1 for greedy decoding, more for beam search.
        token_strings: optional list of strings indexed by token id, used to render the
            caption; ``PAD``, ``START`` and ``END`` always render as ``""`` and are skipped.
            The default suits the digit-strip task: ids 3..12 are ``"0".."9"``.

    Returns:
        A ``tf.function`` with input signature ``[tf.TensorSpec([None, H, W, C], tf.float32,
        name="images")]`` (``[None, L, D]`` named ``"features"`` for a feature-mode model)
        returning a dict with ``caption`` (the tokens' strings joined by spaces, ``[B]``),
        ``tokens`` ``[B, max_length]`` int32, ``attention`` ``[B, max_length, L]`` float32
        and ``log_likelihood`` ``[B]``.

    Example:

    >>> from keras_adl.models import show_attend_tell
    >>> model = show_attend_tell(13, image_shape=(8, 8, 1), embedding_dim=4, units=8,
    ...                          encoder_filters=(4,))
    >>> serve = make_captioning_serving_fn(model, max_length=3)
    >>> out = serve(tf.zeros((2, 8, 8, 1)))
    >>> sorted(out), tuple(out["attention"].shape)
    (['attention', 'caption', 'log_likelihood', 'tokens'], (2, 3, 16))
    """
    where = "make_captioning_serving_fn: "
    check_positive_int("max_length", max_length, where)
    check_positive_int("beam_width", beam_width, where)
    strings = tf.constant(_caption_token_strings(model.get_layer("logits").units, token_strings))
    encoder_input = model.get_layer("encoder").input
    name = "images" if encoder_input.name == "image" else encoder_input.name
    spec = tf.TensorSpec((None,) + tuple(encoder_input.shape[1:]), tf.float32, name=name)

    @tf.function(input_signature=[spec])
    def serve(images):
        if beam_width > 1:
            tokens, attention, score = caption_beam_search(model, images, max_length, beam_width)
        else:
            tokens, attention, score = caption_greedy_decode(model, images, max_length)
        tokens = tf.convert_to_tensor(tokens)
        words = tf.gather(strings, tokens)  # [B, max_length]; specials are ""
        words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
        caption = tf.strings.reduce_join(words, axis=-1, separator=" ")
        return {
            "caption": caption,
            "tokens": tokens,
            "attention": attention,
            "log_likelihood": score,
        }

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
        ``log_likelihood`` as `make_seq2seq_serving_fn` does.
    """
    decode = decode or greedy_decode

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    def serve(inputs):
        ids = tokenizer.encode_source(inputs, source_length)
        tokens, attention, score = decode(model, ids, max_length)
        tokens = tf.convert_to_tensor(tokens)
        return {
            "output": tokenizer.decode_target(tokens),
            "tokens": tokens,
            "attention": attention,
            "log_likelihood": score,
        }

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


def export_captioning(model, export_dir, max_length, beam_width=1, token_strings=None):
    """Writes a SavedModel whose ``serving_default`` captions a batch of images.

    Args:
        model: a model from `keras_adl.models.show_attend_tell`.
        export_dir: where to write; must not exist (nothing is left behind on failure).
        max_length, beam_width, token_strings: as in `make_captioning_serving_fn`.
    """
    serving_fn = make_captioning_serving_fn(model, max_length, beam_width, token_strings)
    return export_serving_fn(model, export_dir, serving_fn)


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


def make_ram_serving_fn(model):
    """A ``tf.function`` from an image batch to a Recurrent Attention Model's answer.

    Args:
        model: a model from `keras_adl.models.recurrent_attention_model`.

    Returns:
        A ``tf.function`` with input signature ``images`` ``[None, H, W, C]`` float32 returning
        a dict with ``classes`` ``[B]`` int32, ``probabilities`` ``[B, K]`` and ``locations``
        ``[B, n, 2]`` (the glimpse centres ``(y, x)`` in ``[-1, 1]``; a learned policy's mean,
        so the answer is deterministic; the random-glimpse baseline stays random).
    """
    shape = [None, *model.inputs[0].shape[1:]]

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32, name="images")])
    def serve(images):
        outputs = model(images, training=False)
        probabilities = tf.cast(outputs["probabilities"], tf.float32)
        return {
            "classes": tf.argmax(probabilities, axis=-1, output_type=tf.int32),
            "probabilities": probabilities,
            "locations": tf.cast(outputs["locations"], tf.float32),
        }

    return serve


def make_han_serving_fn(model, tokenizer, class_names=None):
    """A ``tf.function`` from raw document strings to a HAN's classes and attention maps.

    Sentence and word splitting, vocabulary lookup and padding run in the graph (the
    tensorflow-text ops of `keras_adl.text.DocumentTokenizer`), so the exported SavedModel
    takes raw strings; reloading it needs ``import tensorflow_text`` but not keras_adl.

    Args:
        model: a model from `keras_adl.models.han_classifier`.
        tokenizer: the `DocumentTokenizer` the model was trained with.
        class_names: optional class names, returned as strings per document.

    Returns:
        A ``tf.function`` with input signature ``documents`` ``[None]`` string returning a dict:
        ``classes`` ``[B]`` int32, ``probabilities`` ``[B, C]``, ``word_attention``
        ``[B, S, W]``, ``sentence_attention`` ``[B, S]`` (float32), ``tokens`` ``[B, S, W]``
        (the words at the attention positions, ``""`` at padding) and, with
        ``class_names``, ``class_names`` ``[B]``.
    """
    from keras_adl.models.han import ENCODER_LAYER, han_attention

    attention_model = han_attention(model)
    _check_han_tokenizer(model, tokenizer, class_names, ENCODER_LAYER)
    names = None if class_names is None else tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="documents")])
    def serve(documents):
        ids, tokens = tokenizer.encode_with_tokens(documents)
        outputs = attention_model(ids, training=False)
        probabilities = tf.cast(outputs["probabilities"], tf.float32)
        classes = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        result = {
            "classes": classes,
            "probabilities": probabilities,
            "word_attention": tf.cast(outputs["word_attention"], tf.float32),
            "sentence_attention": tf.cast(outputs["sentence_attention"], tf.float32),
            "tokens": tokens,
        }
        if names is not None:
            result["class_names"] = tf.gather(names, classes)
        return result

    return serve


def _check_han_tokenizer(model, tokenizer, class_names, encoder_name):
    """Clear errors when a HAN, its tokenizer and its class names do not fit together."""
    where = "make_han_serving_fn: "
    shape = tuple(model.input.shape[1:])
    wanted = (tokenizer.max_sentences, tokenizer.max_words)
    if any(d is not None and d != w for d, w in zip(shape, wanted)):
        raise ValueError(
            f"{where}the model reads [S, W] = {list(shape)} but `tokenizer` pads documents to "
            f"{list(wanted)}; use the tokenizer the model was trained with."
        )
    vocab_size = model.get_layer(encoder_name).vocab_size
    if vocab_size is not None and tokenizer.vocabulary_size > vocab_size:
        raise ValueError(
            f"{where}`tokenizer` has {tokenizer.vocabulary_size} ids but the model's embedding "
            f"holds {vocab_size}; use the tokenizer the model was trained with."
        )
    num_classes = model.outputs[0].shape[-1]
    if class_names is not None and len(class_names) != num_classes:
        raise ValueError(
            f"{where}`class_names` must name the model's {num_classes} classes; received "
            f"{len(class_names)} names."
        )


def export_han(model, export_dir, tokenizer, class_names=None):
    """Writes a SavedModel whose ``serving_default`` classifies raw document strings.

    Args:
        model, tokenizer, class_names: as in `make_han_serving_fn`.
        export_dir: where to write; must not exist (nothing is left behind on failure).
    """
    serving_fn = make_han_serving_fn(model, tokenizer, class_names)
    return export_serving_fn(model, export_dir, serving_fn, resources=tokenizer.tables)

"""The tagging family's serving: raw strings in, a tag per token out, the export, and how
``keras-adl predict`` prints them."""

import tensorflow as tf
import tensorflow_text as tf_text

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.recipes._recipe import Answers, raw_bytes
from keras_adl.recipes.tagging.spec import MAX_CHARACTERS
from keras_adl.text.characters import character_ids
from keras_adl.text.vocabulary import lookup_table
from keras_adl.training.export import export_serving_fn
from keras_adl.training.serving_inputs import read_raw_text

# The most tokens an export tags of one input (the date-field sequences have at most 20, the
# fortune sentences 30); the rest of a longer input is left untagged and flagged.
MAX_TOKENS = 256

# `keras_adl.data.date_field_tokens`' split in RE2: words, numbers, single other characters.
# RE2's \s is ASCII; Python's (which the training data was split with) also counts \v, the
# separators \x1c-\x1f, \x85 and every Unicode space (\p{Z}: no-break spaces, ...).
_SPACE = r"\s\x{0b}\x{1c}-\x{1f}\x{85}\p{Z}"
TOKEN = rf"[A-Za-z]+|[0-9]+|[^{_SPACE}A-Za-z0-9]"
_DELIMITER = rf"{TOKEN}|[{_SPACE}]+"


def text_tokens(texts):
    """``[B, T]`` strings: the tokens of ``[B]`` raw texts as
    `keras_adl.data.date_field_tokens` splits them, ``""`` after the last.

    Example:

    >>> text_tokens(tf.constant(["Wed,\u00a005/06"])).numpy().tolist()
    [[b'Wed', b',', b'05', b'/', b'06']]
    """
    tokens = tf_text.regex_split(texts, _DELIMITER, TOKEN)
    return tokens.to_tensor(default_value="")


def make_tagger_serving_fn(model, task, words, tag_names, characters, max_tokens=MAX_TOKENS):
    """``(serve, resources)``: ``serve`` maps ``texts [None]`` strings to ``tokens``
    ``[B, T]``, their ``tags`` ``[B, T]`` (``""`` at padding), ``tag_ids`` and the
    ``probabilities`` ``[B, T]`` of the chosen tags (``1 <= T <= max_tokens``), and the flags
    ``empty`` (no token), ``truncated`` (more than ``max_tokens`` tokens: the first are
    tagged) and ``invalid_utf8`` (replaced with U+FFFD) as ``bool [B]``; ``resources`` the
    lookup table."""
    table = lookup_table(words, NUM_SPECIAL_TOKENS, UNK)
    names = tf.constant(list(tag_names))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        text, invalid_utf8 = read_raw_text(texts)
        split = tf_text.regex_split(text, _DELIMITER, TOKEN)
        count = split.row_lengths()
        tokens = split[:, :max_tokens].to_tensor(default_value="")
        tokens = tf.pad(tokens, [[0, 0], [0, tf.maximum(1 - tf.shape(tokens)[1], 0)]])
        real = tokens != ""
        ids = tf.where(real, tf.cast(table.lookup(tokens), tf.int32), PAD)
        inputs = {"words": ids}
        if characters:
            inputs["characters"] = character_ids(tokens, MAX_CHARACTERS)
        logits = tf.cast(model(inputs, training=False)[task], tf.float32)
        probabilities = tf.nn.softmax(logits[..., 1:])  # tag 0 is padding, never predicted
        tag_ids = tf.where(real, tf.argmax(probabilities, -1, output_type=tf.int32) + 1, 0)
        return {
            "tokens": tokens,
            "tags": tf.where(real, tf.gather(names, tag_ids), ""),
            "tag_ids": tag_ids,
            "probabilities": tf.where(real, tf.reduce_max(probabilities, -1), 0.0),
            "empty": tf.equal(count, 0),
            "truncated": count > max_tokens,
            "invalid_utf8": invalid_utf8,
        }

    return serve, [table]


def export_tagger(model, export_dir, task, words, tag_names, characters):
    """A SavedModel tagging raw strings (`make_tagger_serving_fn`)."""
    serve, resources = make_tagger_serving_fn(model, task, words, tag_names, characters)
    export_serving_fn(model, export_dir, serve, resources=resources)


def predict(export_dir, inputs):
    """One line per text: its tokens, each as ``token/TAG``; a text of no tokens gets a line
    saying so (exit status 1) and the others are still tagged."""
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    outputs = {k: v.numpy() for k, v in serve(texts=tf.constant(raw_bytes(inputs))).items()}
    answers = Answers(inputs)
    for index in range(len(inputs)):
        pairs = [
            f"{t.decode()}/{g.decode()}"
            for t, g in zip(outputs["tokens"][index], outputs["tags"][index])
            if t
        ]
        if not pairs:
            answers.fail(index + 1, "no tokens")
            continue
        answers.answer(index + 1, " ".join(pairs))
        answers.flags(
            index + 1,
            outputs,
            index,
            f"more than {outputs['tokens'].shape[1]} tokens; the first were tagged",
        )
    answers.finish()

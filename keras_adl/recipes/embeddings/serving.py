"""The embeddings family's serving: words in, their vectors and nearest neighbours out, the
export, and how ``keras-adl predict`` prints them."""

import tensorflow as tf
import tensorflow_text  # noqa: F401  (the normalisation ops of the export)

from keras_adl.conventions import NUM_SPECIAL_TOKENS
from keras_adl.models.word2vec import word_vectors
from keras_adl.recipes._recipe import Answers, raw_bytes
from keras_adl.text.normalization import plain_words
from keras_adl.text.vocabulary import lookup_table
from keras_adl.training.export import export_serving_fn
from keras_adl.training.serving_inputs import read_raw_text

# Nearest neighbours served per word.
NEIGHBORS = 8


def make_word_vectors_serving_fn(model, words, neighbors=NEIGHBORS):
    """A ``tf.function`` from a batch of words to their vectors and nearest neighbours.

    Each input is normalised as training normalised the corpus (NFKC, case folding; its first
    word is looked up). Any string is answered: invalid UTF-8 is replaced (and flagged), an
    input of no word is unknown (and ``empty``), an input of several words is answered for its
    first (and ``truncated``).

    Returns:
        ``(serve, resources)``: ``serve`` has the signature ``words [None] string`` and
        returns ``vectors`` ``[B, D]`` (unit length; zeros for an unknown word), ``known``
        ``[B]`` bool, ``neighbors`` ``[B, k]`` strings and ``similarities`` ``[B, k]``
        (cosines, the word itself excluded; empty strings and 0 for an unknown word), and the
        flags ``empty``, ``truncated`` and ``invalid_utf8`` (``bool [B]``); ``resources`` the
        lookup table to track.
    """
    table = lookup_table(words, NUM_SPECIAL_TOKENS, -1)
    vectors = tf.constant(word_vectors(model)[NUM_SPECIAL_TOKENS:])
    names = tf.constant(list(words))
    k = min(neighbors, len(words) - 1)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="words")])
    def serve(inputs):
        text, invalid_utf8 = read_raw_text(inputs)
        plain = plain_words(text)
        first = plain.to_tensor(default_value="", shape=[None, 1])[:, 0]
        ids = table.lookup(first)
        known = ids >= 0
        rows = tf.where(known, ids - NUM_SPECIAL_TOKENS, 0)
        query = tf.gather(vectors, rows) * tf.cast(known, vectors.dtype)[:, None]
        scores = tf.matmul(query, vectors, transpose_b=True)
        scores = tf.tensor_scatter_nd_update(
            scores,
            tf.stack([tf.range(tf.shape(rows, out_type=tf.int64)[0]), rows], 1),
            tf.fill(tf.shape(rows), tf.constant(-2.0, scores.dtype)),
        )  # the word itself
        similarities, nearest = tf.math.top_k(scores, k)
        return {
            "vectors": query,
            "known": known,
            "neighbors": tf.where(known[:, None], tf.gather(names, nearest), ""),
            "similarities": tf.where(known[:, None], similarities, 0.0),
            "empty": tf.equal(plain.row_lengths(), 0),
            "truncated": plain.row_lengths() > 1,
            "invalid_utf8": invalid_utf8,
        }

    return serve, [table]


def export_word_vectors(model, export_dir, words):
    """Writes a SavedModel whose ``serving_default`` maps a batch of words to their vectors and
    nearest neighbours (`make_word_vectors_serving_fn`)."""
    serve, resources = make_word_vectors_serving_fn(model, words)
    export_serving_fn(model, export_dir, serve, resources=resources)


def predict(export_dir, inputs):
    """Prints each word's nearest neighbours with their cosine similarities, in order; an
    unknown word gets a line saying so (exit status 1) and the others are still served."""
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    outputs = {k: v.numpy() for k, v in serve(words=tf.constant(raw_bytes(inputs))).items()}
    answers = Answers(inputs)
    for index in range(len(inputs)):
        if not outputs["known"][index]:
            empty = "empty" in outputs and outputs["empty"][index]
            answers.fail(index + 1, "empty input: no word" if empty else "not in the vocabulary")
            continue
        pairs = zip(outputs["neighbors"][index], outputs["similarities"][index])
        answers.answer(index + 1, ", ".join(f"{n.decode()} {s:.2f}" for n, s in pairs))
        answers.flags(index + 1, outputs, index, "several words; answered for the first")
    answers.finish()

"""The contextual family's serving: raw strings in, every biLM layer, ``[GloVe; CoVe]`` vectors
or a fortune topic out, and how ``keras-adl predict`` prints them."""

import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops of exported text models)

from keras_adl.models.elmo import elmo_embedder
from keras_adl.models.seq2seq import cove_encoder
from keras_adl.recipes._recipe import Answers, raw_bytes
from keras_adl.recipes.contextual.data import make_feature_encoder
from keras_adl.text.characters import text_character_ids
from keras_adl.text.normalization import plain_words, written_words
from keras_adl.training.export import export_serving_fn
from keras_adl.training.serving_inputs import read_raw_text

# -- serving functions -------------------------------------------------------------------------

# The models read words normalised (case folded), as they were trained; the ``words`` outputs
# show each word as the user wrote it, position by position.


def _written(text, length):
    """The `written_words` of ``[B]`` texts, cut and padded with ``""`` to ``[B, length]``."""
    return written_words(text)[:, :length].to_tensor(default_value="", shape=[None, length])


def _flags(text, invalid_utf8, max_words):
    """The flags of a contextual export: ``empty`` (no word), ``truncated`` (more than
    ``max_words`` words) and ``invalid_utf8``, ``bool [B]`` each."""
    count = plain_words(text).row_lengths()
    return {
        "empty": tf.equal(count, 0),
        "truncated": count > max_words,
        "invalid_utf8": invalid_utf8,
    }


def make_classifier_serving_fn(model, words, class_names):
    """``(serve, resources)``: ``serve`` maps ``texts [None]`` strings to ``classes`` ``[B]``,
    ``probabilities`` ``[B, C]``, ``class_names`` ``[B]`` and the flags ``empty``,
    ``truncated`` and ``invalid_utf8`` (`keras_adl.training.serving_inputs`); a text of no
    word gets class -1, class name ``""`` and zero probabilities."""
    shapes = {name: tuple(x.shape[1:]) for name, x in model.input.items()}
    encode = make_feature_encoder(shapes, words)
    names = tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        text, invalid_utf8 = read_raw_text(texts)
        flags = _flags(text, invalid_utf8, shapes["words"][0])
        empty = flags["empty"]
        probabilities = tf.nn.softmax(tf.cast(model(encode(text), training=False), tf.float32))
        probabilities = tf.where(empty[:, None], 0.0, probabilities)
        classes = tf.where(empty, -1, tf.argmax(probabilities, axis=-1, output_type=tf.int32))
        return {
            "classes": classes,
            "probabilities": probabilities,
            "class_names": tf.where(empty, "", tf.gather(names, tf.maximum(classes, 0))),
            **flags,
        }

    return serve, [encode.table]


def make_elmo_serving_fn(bilm, max_characters, max_words):
    """A ``tf.function`` from ``texts [None]`` strings to ``layers`` ``[B, L, max_words, D]``
    (`elmo_embedder`), ``words`` ``[B, max_words]`` (as written, ``""`` at padding; the biLM
    reads them case folded, as it was trained), ``mask`` and the
    flags ``empty``, ``truncated`` (more than ``max_words`` words: the first are embedded)
    and ``invalid_utf8``."""
    embedder = elmo_embedder(bilm)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        text, invalid_utf8 = read_raw_text(texts)
        plain, characters = text_character_ids(text, max_words, max_characters)
        mask = plain != ""
        words = _written(text, max_words)
        layers = tf.cast(embedder(characters, training=False), tf.float32)
        layers = layers * tf.cast(mask, tf.float32)[:, None, :, None]
        flags = _flags(text, invalid_utf8, max_words)
        return {"layers": layers, "words": words, "mask": mask, **flags}

    return serve


def make_cove_serving_fn(translator, tokenizer, max_length):
    """A ``tf.function`` from ``texts [None]`` English strings to ``vectors``
    ``[B, max_length, E + 2U]`` (`cove_encoder`: ``[GloVe(w); CoVe(w)]``, zeros at padding),
    ``words`` (as written; the encoder reads them case folded), ``mask`` and the flags ``empty``, ``truncated`` (more than ``max_length``
    tokens) and ``invalid_utf8``."""
    encoder = cove_encoder(translator)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        text, invalid_utf8 = read_raw_text(texts)
        ids = tokenizer.encode_source(text, max_length)
        mask = ids != 0
        vectors = tf.cast(encoder(ids, training=False), tf.float32)
        counts = tokenizer.token_counts(text, "source")
        return {
            "vectors": vectors * tf.cast(mask, tf.float32)[..., None],
            "words": _written(text, max_length),
            "mask": mask,
            "empty": tf.logical_not(tf.reduce_any(mask, axis=1)),
            "truncated": counts > max_length,
            "invalid_utf8": invalid_utf8,
        }

    return serve


# -- export ------------------------------------------------------------------------------------


def export_bilm(model, export_dir, max_characters, max_words):
    """A SavedModel mapping raw strings to every biLM layer (`make_elmo_serving_fn`)."""
    export_serving_fn(model, export_dir, make_elmo_serving_fn(model, max_characters, max_words))


def export_cove(model, export_dir, tokenizer, max_length):
    """A SavedModel mapping raw English strings to ``[GloVe; CoVe]`` vectors
    (`make_cove_serving_fn`)."""
    serve = make_cove_serving_fn(model, tokenizer, max_length)
    export_serving_fn(model, export_dir, serve, resources=tokenizer.tables)


def export_classifier(model, export_dir, words, class_names):
    """A SavedModel mapping raw strings to a topic (`make_classifier_serving_fn`)."""
    serve, resources = make_classifier_serving_fn(model, words, class_names)
    export_serving_fn(model, export_dir, serve, resources=resources)


# -- predict -----------------------------------------------------------------------------------


def serve_texts(export_dir, inputs):
    """The outputs (numpy) of the exported model in ``export_dir`` on the raw strings
    ``inputs``."""
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    return {k: v.numpy() for k, v in serve(texts=tf.constant(raw_bytes(inputs))).items()}


def print_topics(inputs, outputs):
    """One line per text: the text, its topic and the topic's probability; a text of no word
    gets a line saying so (exit status 1) and the others are still answered."""
    answers = Answers(inputs)
    for index in range(len(inputs)):
        if outputs.get("empty", [False] * len(inputs))[index]:
            answers.fail(index + 1, "no words")
            continue
        name, probabilities = outputs["class_names"][index], outputs["probabilities"][index]
        answers.answer(index + 1, f"{name.decode()}\tp={probabilities.max():.3f}")
        answers.flags(
            index + 1,
            outputs,
            index,
            "longer than the model reads; classified from its first words",
        )
    answers.finish()


def print_embeddings(inputs, outputs, key, layered):
    """One line per text: the text, its words and the shape of its vectors (``outputs[key]``;
    ``layered``: one set of vectors per layer, the biLM's); a text of no word gets a line
    saying so (exit status 1) and the others are still answered."""
    answers = Answers(inputs)
    for index in range(len(inputs)):
        words = [w.decode() for w in outputs["words"][index] if w]
        if not words:
            answers.fail(index + 1, "no words")
            continue
        vectors = outputs[key][index]
        size = f"{vectors.shape[0]} layers × " if layered else ""
        size += f"{len(words)} words × {vectors.shape[-1]}"
        answers.answer(index + 1, f"{' '.join(words)}\t{key}: {size}")
        answers.flags(
            index + 1, outputs, index, f"more than {len(words)} words; the first were embedded"
        )
    answers.finish()

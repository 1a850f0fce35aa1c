"""The contextual family's serving: raw strings in, every biLM layer, ``[GloVe; CoVe]`` vectors
or a fortune topic out, and how ``keras-adl predict`` prints them."""

import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops of exported text models)

from keras_adl.models.elmo import elmo_embedder
from keras_adl.models.seq2seq import cove_encoder
from keras_adl.recipes._recipe import input_label as label
from keras_adl.recipes.contextual.data import make_feature_encoder
from keras_adl.text.characters import padded_words, text_character_ids
from keras_adl.training.export import export_serving_fn
from keras_adl.training.rundir import RecipeError

# -- serving functions -------------------------------------------------------------------------


def make_classifier_serving_fn(model, words, class_names):
    """``(serve, resources)``: ``serve`` maps ``texts [None]`` strings to ``classes`` ``[B]``,
    ``probabilities`` ``[B, C]`` and ``class_names`` ``[B]``."""
    shapes = {name: tuple(x.shape[1:]) for name, x in model.input.items()}
    encode = make_feature_encoder(shapes, words)
    names = tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        probabilities = tf.nn.softmax(tf.cast(model(encode(texts), training=False), tf.float32))
        classes = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        return {
            "classes": classes,
            "probabilities": probabilities,
            "class_names": tf.gather(names, classes),
        }

    return serve, [encode.table]


def make_elmo_serving_fn(bilm, max_characters, max_words):
    """A ``tf.function`` from ``texts [None]`` strings to ``layers`` ``[B, L, max_words, D]``
    (`elmo_embedder`), ``words`` ``[B, max_words]`` (``""`` at padding) and ``mask``."""
    embedder = elmo_embedder(bilm)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        words, characters = text_character_ids(texts, max_words, max_characters)
        mask = words != ""
        layers = tf.cast(embedder(characters, training=False), tf.float32)
        layers = layers * tf.cast(mask, tf.float32)[:, None, :, None]
        return {"layers": layers, "words": words, "mask": mask}

    return serve


def make_cove_serving_fn(translator, tokenizer, max_length):
    """A ``tf.function`` from ``texts [None]`` English strings to ``vectors``
    ``[B, max_length, E + 2U]`` (`cove_encoder`: ``[GloVe(w); CoVe(w)]``, zeros at padding),
    ``words`` and ``mask``."""
    encoder = cove_encoder(translator)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        ids = tokenizer.encode_source(texts, max_length)
        mask = ids != 0
        vectors = tf.cast(encoder(ids, training=False), tf.float32)
        return {
            "vectors": vectors * tf.cast(mask, tf.float32)[..., None],
            "words": padded_words(texts, max_length),
            "mask": mask,
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
    """The outputs of the exported model in ``export_dir`` on the raw strings ``inputs``."""
    serve = tf.saved_model.load(export_dir).signatures["serving_default"]
    return serve(texts=tf.constant(inputs))


def print_topics(inputs, outputs):
    """One line per text: the text, its topic and the topic's probability."""
    for text, name, probabilities in zip(
        inputs, outputs["class_names"].numpy(), outputs["probabilities"].numpy()
    ):
        print(f"{label(text)}\t{name.decode()}\tp={probabilities.max():.3f}")


def print_embeddings(inputs, outputs, key, layered):
    """One line per text: the text, its words and the shape of its vectors (``outputs[key]``;
    ``layered``: one set of vectors per layer, the biLM's).

    Raises:
        RecipeError: some texts have no words.
    """
    empty = 0
    for text, words, vectors in zip(inputs, outputs["words"].numpy(), outputs[key].numpy()):
        words = [w.decode() for w in words if w]
        if not words:
            print(f"{label(text)}\t(no words)")
            empty += 1
            continue
        size = f"{vectors.shape[0]} layers × " if layered else ""
        size += f"{len(words)} words × {vectors.shape[-1]}"
        print(f"{label(text)}\t{' '.join(words)}\t{key}: {size}")
    if empty:
        raise RecipeError(f"{empty} of {len(inputs)} input(s) have no words")

"""The one place the contextual family's models are built and compiled: the biLM, CoVe's
translator over fixed word vectors, and the classifier over frozen features."""

import keras

from keras_adl.layers import ELMoEmbedding
from keras_adl.models.elmo import compile_bilm, elmo_bilm, elmo_embedder, features_classifier
from keras_adl.models.seq2seq import attention_seq2seq
from keras_adl.recipes._compile import compile_for_training, override
from keras_adl.recipes.contextual.data import input_shapes
from keras_adl.recipes.contextual.spec import FEATURES


def build_bilm(preset, vocab_size, jit_compile=True, **overrides):
    """The compiled `elmo_bilm` of a preset (`spec.BILM`) with ``vocab_size`` output words;
    ``overrides`` replace preset values (only existing ones)."""
    settings = override(dict(preset), overrides)
    learning_rate = settings.pop("learning_rate")
    return compile_bilm(elmo_bilm(vocab_size, **settings), learning_rate, jit_compile)


def build_cove(preset, source_size, target_size, vectors, jit_compile=True):
    """The compiled `attention_seq2seq` of a preset (`spec.COVE`) translating ``source_size``
    source words into ``target_size`` target pieces, its source embedding the word vectors
    ``vectors`` ``[source_size, D]``, frozen (CoVe keeps its word vectors fixed)."""
    model = attention_seq2seq(
        source_size,
        target_size,
        embedding_dim=vectors.shape[1],
        units=preset["units"],
        cell=preset["cell"],
    )
    embedding = model.get_layer("source_embedding")
    embedding.set_weights([vectors])
    embedding.trainable = False  # CoVe: the word vectors stay fixed
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return compile_for_training(model, loss, preset["learning_rate"], jit_compile)


def feature_layers(features, sources, inputs):
    """The classifier's per-word features ``[B, T, D]`` of ``inputs`` (`input_shapes`): the
    frozen CoVe encoder's, or the frozen word vectors followed, for ELMo, by the biLM's layers
    mixed by a trainable `ELMoEmbedding`."""
    kind = FEATURES[features]
    words = inputs["words"]
    if "cove" in kind.runs:
        encoder = sources["cove"]
        encoder.trainable = False
        x = encoder(words)
    else:
        vectors = sources["vectors"]
        x = keras.layers.Embedding(
            vectors.shape[0],
            vectors.shape[1],
            mask_zero=True,
            trainable=False,
            embeddings_initializer=keras.initializers.Constant(vectors),
            name="word_vectors",
        )(words)
    if kind.elmo_mix:
        elmo = ELMoEmbedding(elmo_embedder(sources["bilm"]), mix=kind.elmo_mix, name="elmo")(
            inputs["characters"]
        )
        x = keras.layers.Concatenate(name="vectors_elmo")([x, elmo])
    return x


def build_classifier(preset, features, sources, num_classes, jit_compile=True, **overrides):
    """The compiled downstream classifier of a preset (`spec.CLASSIFIER`): frozen features →
    `features_classifier`; ``overrides`` replace preset values (only existing ones).

    Its inputs are a dict: ``words`` ``[B, T]`` (ids of ``sources["words"]``) and, for ELMo,
    ``characters`` ``[B, T, C]``."""
    settings = override(dict(preset), overrides)
    learning_rate = settings.pop("learning_rate")
    inputs = {
        name: keras.Input(shape, dtype="int32", name=name)
        for name, shape in input_shapes(features, sources).items()
    }
    x = feature_layers(features, sources, inputs)
    model = features_classifier(inputs, x, num_classes, name=f"{features}_classifier", **settings)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return compile_for_training(model, loss, learning_rate, jit_compile)

"""The Hierarchical Attention Network document classifier (Yang et al. 2016)."""

import keras

from keras_adl.layers.global_batch_dropout import GlobalBatchDropout
from keras_adl.layers.hierarchical_attention import HierarchicalAttention
from keras_adl.utils import check_choice, check_positive_int, check_rate

ENCODER_LAYER = "hierarchical_attention"


def han_classifier(
    vocab_size: int,
    num_classes: int,
    max_sentences: int | None = None,
    max_words: int | None = None,
    embedding_dim: int = 100,
    units: int = 100,
    encoder: str = "gru",
    encoder_units: int = 50,
    dropout: float = 0.0,
    name: str = "han_classifier",
) -> keras.Model:
    """Builds HAN: token ids ``[B, S, W]`` → class logits ``[B, num_classes]``.

        v = HierarchicalAttention(ids)      (word encoder + word attention → sentence vectors,
                                             sentence encoder + sentence attention → v)
        p = softmax(W_c v + b_c)            (eq. 11; the model returns the logits)

    Padding id 0 marks padded words; a sentence with no real word is padding. Train with
    ``SparseCategoricalCrossentropy(from_logits=True)``; `han_attention` gives a model that
    also returns the probabilities and both attention maps. The logits are ``float32`` under a
    ``mixed_float16`` policy.

    Args:
        vocab_size: number of token ids (including 0, padding), e.g.
            ``DocumentTokenizer.vocabulary_size``.
        num_classes: number of classes.
        max_sentences: optional static ``S`` of the input (``None`` accepts any size).
        max_words: optional static ``W`` of the input (``None`` accepts any size).
        embedding_dim: word embedding size (200 in the paper).
        units: attention size: projections and context vectors (100 in the paper).
        encoder: ``"gru"`` (the paper) or ``"lstm"``, bidirectional at both levels.
        encoder_units: units per direction (50 in the paper).
        dropout: dropout rate on the document vector (a `GlobalBatchDropout`: the same masks
            on one device as on several ``tf.distribute`` replicas).
        name: model name.

    Returns:
        A functional ``keras.Model`` named ``name`` with input ``token_ids``.

    Example:

    >>> model = han_classifier(vocab_size=50, num_classes=3, embedding_dim=8, units=8,
    ...                        encoder_units=4)
    >>> tuple(model(keras.ops.ones((2, 4, 6), "int32")).shape)
    (2, 3)
    >>> outputs = han_attention(model)(keras.ops.ones((2, 4, 6), "int32"))
    >>> sorted(outputs), tuple(outputs["word_attention"].shape)
    (['logits', 'probabilities', 'sentence_attention', 'word_attention'], (2, 4, 6))

    References:
        Yang, Yang, Dyer, He, Smola, Hovy (2016). Hierarchical Attention Networks for Document
        Classification. NAACL-HLT.
    """
    check_positive_int("num_classes", num_classes, where="han_classifier: ")
    check_choice("encoder", encoder, ("gru", "lstm"), where="han_classifier: ")
    check_rate("dropout", dropout, where="han_classifier: ")
    ids = keras.Input((max_sentences, max_words), dtype="int32", name="token_ids")
    document, _, _ = HierarchicalAttention(
        units=units,
        word_encoder=encoder,
        sentence_encoder=encoder,
        encoder_units=encoder_units,
        vocab_size=vocab_size,
        embedding_dim=embedding_dim,
        name=ENCODER_LAYER,
    )(ids, return_attention_scores=True)
    if dropout:
        document = GlobalBatchDropout(dropout, name="dropout")(document)
    logits = keras.layers.Dense(num_classes, dtype="float32", name="logits")(document)
    return keras.Model(ids, logits, name=name)


def han_attention(model: keras.Model) -> keras.Model:
    """A model sharing ``model``'s weights that returns its logits, probabilities and attention.

    Args:
        model: a model from `han_classifier` (also after a ``.keras`` round trip).

    Returns:
        A ``keras.Model`` from token ids ``[B, S, W]`` to a dict: ``logits`` and
        ``probabilities`` ``[B, C]``, ``word_attention`` ``[B, S, W]`` (each sentence's weights
        over its words) and ``sentence_attention`` ``[B, S]``.

    Example:

    >>> model = han_classifier(vocab_size=50, num_classes=3, embedding_dim=8, units=8,
    ...                        encoder_units=4)
    >>> outputs = han_attention(model)(keras.ops.ones((2, 4, 6), "int32"))
    >>> tuple(outputs["sentence_attention"].shape), tuple(outputs["probabilities"].shape)
    ((2, 4), (2, 3))
    """
    try:
        encoder = model.get_layer(ENCODER_LAYER)
    except ValueError:
        raise ValueError(
            f"han_attention: `model` must come from han_classifier (a layer named "
            f"{ENCODER_LAYER!r}); received model {model.name!r}."
        ) from None
    outputs = encoder.output
    if not isinstance(outputs, (list, tuple)) or len(outputs) != 3:
        raise ValueError(
            "han_attention: the model's HierarchicalAttention layer must be called with "
            "return_attention_scores=True, as han_classifier does."
        )
    _, word_attention, sentence_attention = outputs
    logits = model.outputs[0]
    probabilities = keras.layers.Softmax(dtype="float32", name="probabilities")(logits)
    return keras.Model(
        model.input,
        {
            "logits": logits,
            "probabilities": probabilities,
            "word_attention": word_attention,
            "sentence_attention": sentence_attention,
        },
        name=f"{model.name}_attention",
    )

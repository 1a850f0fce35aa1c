"""The documents family's figures: held-out accuracy, and how often the sentence attention
peaks on the needle's key sentence."""

import os

import numpy as np
import tensorflow as tf

from keras_adl.models.han import han_attention
from keras_adl.recipes._pictures import draw
from keras_adl.recipes.documents.plots import plot_document_attention


def evaluate(model, tokenizer, documents, out, title):
    """Held-out accuracy (and, for documents with key sentences, how often the sentence
    attention peaks on the key sentence), and the attention picture of the first test document
    (``attention.html`` and ``.png`` in ``out``).

    Args:
        model: a trained `han_classifier`.
        tokenizer: its `DocumentTokenizer`.
        documents: the task's `keras_adl.recipes.documents.data.Documents`.
        out: the run directory.
        title: the picture's title.
    """
    texts, labels = list(documents.test_docs), np.asarray(documents.test_labels)
    # tokenized a batch at a time: a whole held-out split at once holds every word as a string
    batches = tf.data.Dataset.from_tensor_slices(tf.constant(texts, tf.string)).batch(64)
    outputs = han_attention(model).predict(batches.map(tokenizer.encode), verbose=0)
    predictions = outputs["probabilities"].argmax(-1)
    metrics = {
        "held_out_accuracy": float(np.mean(predictions == labels)),
        "held_out_documents": len(texts),
    }
    if documents.test_keys is not None:
        metrics["sentence_attention_hit_rate"] = float(
            sentence_attention_hit_rate(outputs["sentence_attention"], documents.test_keys)
        )
    names = documents.class_names
    words = tokenizer.tokens(tf.constant(texts[:1])).numpy()[0]
    label = (
        f"{title}: predicted {names[predictions[0]]} "
        f"({outputs['probabilities'][0].max():.2f}), true {names[labels[0]]}"
    )
    for extension in ("html", "png"):
        draw(
            plot_document_attention,
            words,
            outputs["word_attention"][0],
            outputs["sentence_attention"][0],
            os.path.join(out, f"attention.{extension}"),
            title=label,
        )
    return metrics


def sentence_attention_hit_rate(sentence_attention, key_sentences):
    """Fraction of documents whose most-attended sentence is the key sentence.

    Args:
        sentence_attention: ``[N, S]`` sentence-attention weights (padding sentences should
            carry no weight).
        key_sentences: int ``[N]`` key-sentence indices in ``[0, S)``, e.g. from
            `needle_documents`.

    Returns:
        The hit rate, a float in ``[0, 1]``.

    Raises:
        ValueError: the shapes do not match, there are no documents, or a key index is out
            of range.
        TypeError: ``key_sentences`` is not integer.

    Example:

    >>> attention = np.array([[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.0, 0.1, 0.9]])
    >>> round(sentence_attention_hit_rate(attention, np.array([1, 2, 2])), 3)
    0.667
    """
    where = "sentence_attention_hit_rate: "
    attention, keys = np.asarray(sentence_attention), np.asarray(key_sentences)
    if attention.ndim != 2 or attention.shape[0] == 0 or attention.shape[1] == 0:
        raise ValueError(
            f"{where}`sentence_attention` must have shape [N, S] with N, S > 0; received shape "
            f"{attention.shape}."
        )
    if keys.shape != (attention.shape[0],):
        raise ValueError(
            f"{where}`key_sentences` must have shape [N] with N = {attention.shape[0]} (the "
            f"rows of `sentence_attention`, shape {attention.shape}); received shape "
            f"{keys.shape}."
        )
    if not np.issubdtype(keys.dtype, np.integer):
        raise TypeError(f"{where}`key_sentences` must be integers; received dtype {keys.dtype}.")
    if keys.min() < 0 or keys.max() >= attention.shape[1]:
        raise ValueError(
            f"{where}`key_sentences` must lie in [0, {attention.shape[1]}) (the sentences of "
            f"`sentence_attention`); received values in [{keys.min()}, {keys.max()}]."
        )
    return float(np.mean(np.argmax(attention, axis=1) == keys))

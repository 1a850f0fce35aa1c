"""The pretraining family's figures: held-out masked-token accuracy against the most frequent
token, held-out perplexity against a unigram model (and a generated continuation), and the
fine-tuned classifiers' accuracy on the held-out fortunes."""

import numpy as np
import tensorflow as tf

from keras_adl.models.gpt import generate
from keras_adl.recipes.pretraining.data import check_labels, mlm_dataset
from keras_adl.recipes.pretraining.serving import make_text_classifier_serving_fn
from keras_adl.recipes.pretraining.spec import EVALUATION_BATCHES, GENERATE_LENGTH, SEGMENTS


def masked_lm_figures(model, tokenizer, held_out, batch_size, length, segments=SEGMENTS):
    """Held-out masked-token accuracy over `EVALUATION_BATCHES` batches of the held-out
    documents, against the most frequent masked token's share (and the next-sentence accuracy
    of a pretrainer with that head)."""
    evaluation = mlm_dataset(tokenizer, held_out, batch_size, length, 1, segments)
    evaluation = evaluation.take(EVALUATION_BATCHES).cache()
    figures = model.evaluate(evaluation, verbose=0, return_dict=True)
    targets = np.concatenate([t["mlm"].numpy()[w["mlm"].numpy() > 0] for _, t, w in evaluation])
    baseline = float(np.bincount(targets).max() / len(targets))
    accuracy = float(figures["mlm_accuracy"])
    metrics = {
        "held_out_masked_accuracy": accuracy,
        "most_frequent_token_accuracy": baseline,
        "masked_accuracy_over_baseline": accuracy / baseline,
        "held_out_masked_tokens": int(len(targets)),
    }
    if "nsp_accuracy" in figures:
        metrics["held_out_next_sentence_accuracy"] = float(figures["nsp_accuracy"])
    return metrics


def causal_lm_figures(model, tokenizer, windows, held_out, batch_size, length, counts=None):
    """Held-out perplexity against an add-one unigram model of the training targets, and the
    greedy continuation of the first held-out document's first words (printed).

    Args:
        windows: ``(inputs, targets, held_inputs, held_targets)``, the training and held-out
            causal-LM windows (the training ones may be ``None`` when ``counts`` is given).
        held_out: the held-out documents.
        counts: ``[V]`` the training pieces' counts, when the training windows are not in
            memory (a corpus streamed from disk).
    """
    _, targets, held_inputs, held_targets = windows
    figures = model.evaluate(
        held_inputs, held_targets, batch_size=batch_size, verbose=0, return_dict=True
    )
    if counts is None:
        counts = np.bincount(targets.ravel(), minlength=tokenizer.size)
    counts = counts + 1.0  # add-one
    log_p = np.log(counts / counts.sum())
    unigram = float(np.exp(-log_p[held_targets.ravel()].mean()))
    perplexity = float(figures["perplexity"])
    prompt = held_out[0].split()[:4]
    prompt_ids = tokenizer.tokenize(tf.constant([" ".join(prompt)])).to_tensor()
    generated = generate(model, prompt_ids, min(GENERATE_LENGTH, length))
    text = tokenizer.detokenize(generated).numpy()[0].decode()
    print(f"  {' '.join(prompt)!r} → {text!r}")
    return {
        "held_out_perplexity": perplexity,
        "unigram_perplexity": unigram,
        "perplexity_over_unigram": perplexity / unigram,
        "held_out_tokens": int(held_targets.size),
        "sample": text,
    }


def classifier_accuracy(serve, texts, labels, batch_size=256):
    """The accuracy of a text classifier's serving function (`make_text_classifier_serving_fn`)
    on ``texts``, each classified by all the windows it reads."""
    check_labels(texts, labels)
    if not len(texts):
        raise ValueError("classifier_accuracy: `texts` is empty; expected at least one text.")

    classes = [
        serve(tf.constant(list(texts[start : start + batch_size])))["classes"].numpy()
        for start in range(0, len(texts), batch_size)
    ]
    return float(np.mean(np.concatenate(classes) == np.asarray(labels)))


def classifier_figures(model, model_name, tokenizer, length, documents, windows):
    """Held-out accuracy of a fine-tuned classifier on the test fortunes of ``documents``,
    each read as up to ``windows`` windows (and, with several, on its first window alone)."""
    names, texts, labels = documents.class_names, documents.test_docs, documents.test_labels
    serve = make_text_classifier_serving_fn(model, model_name, tokenizer, length, names, windows)
    metrics = {
        "held_out_accuracy": classifier_accuracy(serve, texts, labels),
        "held_out_documents": len(texts),
    }
    if windows > 1:
        first = make_text_classifier_serving_fn(model, model_name, tokenizer, length, names, 1)
        metrics["held_out_first_window_accuracy"] = classifier_accuracy(first, texts, labels)
    return metrics

"""The contextual family's figures: the biLM's held-out perplexities against a unigram model,
CoVe's translation scores (greedy and beam search) and attention pictures, and the classifier's
held-out accuracy with its learned scalar mix."""

import os

import keras
import tensorflow as tf

from keras_adl.conventions import END
from keras_adl.data.bilm import counts_perplexity, window_ids
from keras_adl.models.seq2seq import beam_search, greedy_decode
from keras_adl.recipes._pictures import draw
from keras_adl.recipes.contextual.plots import plot_scalar_mix
from keras_adl.recipes.contextual.spec import (
    ATTENTION_MESSAGES,
    BEAM_WIDTH,
    FEATURES,
)
from keras_adl.recipes.sequences.data import in_batches
from keras_adl.recipes.sequences.evaluate import evaluate_pairs, score_pairs
from keras_adl.recipes.sequences.plots import plot_attention

# -- pretrain_bilm -----------------------------------------------------------------------------


def bilm_figures(model, validation, corpus, max_words, history):
    """The held-out forward and backward perplexities against a unigram model of the training
    words (the counts of `StreamedWindows`: `counts_perplexity`), and after every epoch the
    training (with dropout) over held-out perplexity."""
    figures = model.evaluate(validation, verbose=0, return_dict=True)
    unigram = counts_perplexity(
        corpus.counts, window_ids(corpus.held, corpus.vocabulary, max_words)
    )
    metrics = {"unigram_perplexity": unigram}
    for direction in ("forward", "backward"):
        perplexity = float(figures[f"{direction}_perplexity"])
        metrics[f"held_out_{direction}_perplexity"] = perplexity
        metrics[f"{direction}_over_unigram"] = perplexity / unigram
    if history is not None:
        logs = history.history
        metrics["train_over_held_out_per_epoch"] = [
            round(t / v, 4)
            for t, v in zip(
                logs.get("forward_perplexity", []), logs.get("val_forward_perplexity", [])
            )
        ]
    return metrics


# -- cove --------------------------------------------------------------------------------------


def cove_figures(model_name, model, tokenizer, held, held_pairs, max_length, out):
    """Held-out token accuracy (``held``: the held-out dataset), BLEU and chrF of greedy
    (`evaluate_pairs`) and beam-search translations of the held-out pairs ``held_pairs``
    ``(sources, targets)``, and attention pictures of held-out messages in ``out``."""
    sources, targets = held_pairs
    figures = model.evaluate(held, verbose=0, return_dict=True)
    metrics = evaluate_pairs(model_name, model, tokenizer, sources, targets, max_length, out)
    metrics["held_out_token_accuracy"] = float(figures["accuracy"])
    metrics.update(beam_scores(model, tokenizer, sources, targets, max_length))
    attention_pictures(model, tokenizer, sources[1:200], max_length, out)
    return metrics


def beam_scores(model, tokenizer, sources, targets, max_length):
    """BLEU and chrF of beam-search translations (`BEAM_WIDTH`) of the held-out pairs."""

    def translate(batch):
        tokens, _, _ = beam_search(
            model, tokenizer.encode_source(batch, max_length), max_length, BEAM_WIDTH
        )
        return tokenizer.decode_target(tokens)

    scores = score_pairs(tokenizer, sources, targets, in_batches(sources, translate))
    return {
        f"held_out_beam{BEAM_WIDTH}_{name}": scores[name]
        for name in ("bleu", "chrf")
        if name in scores
    }


def attention_pictures(model, tokenizer, sources, max_length, out):
    """``attention_<i>.png`` for held-out messages of 3 to 12 words (``attention.png``, the
    first held-out message, is `evaluate_pairs`' picture)."""
    chosen = [s for s in sources if 3 <= len(s.split()) <= 12][: ATTENTION_MESSAGES - 1]
    for i, source in enumerate(chosen, 1):
        ids = tokenizer.encode_source(tf.constant([source]), max_length)
        tokens, attention, _ = greedy_decode(model, ids, max_length)
        tokens = keras.ops.convert_to_numpy(tokens)[0]
        ends = [j for j, t in enumerate(tokens) if t == END]
        tokens = tokens[: ends[0] + 1] if ends else tokens
        words = [w.decode() for w in tokenizer.source_tokens(tf.constant([source]))[0].numpy()]
        draw(
            plot_attention,
            keras.ops.convert_to_numpy(attention)[0][: len(tokens), : len(words)],
            words[:max_length],
            [t.decode() for t in tokenizer.target_tokens(tokens).numpy()],
            os.path.join(out, f"attention_{i}.png"),
            title="CoVe's translator: attention on a held-out message",
        )


# -- fortunes_features -------------------------------------------------------------------------


def classifier_figures(model, features, held, held_documents, out):
    """Held-out accuracy on ``held`` (the ``held_documents`` test fortunes' dataset) and, for
    ELMo features, the learned scalar-mix weights and γ (drawn in ``scalar_mix.png`` for the
    mix of all layers)."""
    figures = model.evaluate(held, verbose=0, return_dict=True)
    metrics = {
        "held_out_accuracy": float(figures["accuracy"]),
        "held_out_documents": held_documents,
    }
    kind = FEATURES[features]
    if kind.elmo_mix:
        mix = model.get_layer("elmo").scalar_mix
        weights, gamma = mix.mixing_weights(), float(mix.gamma.numpy())
        metrics["scalar_mix_weights"] = [float(w) for w in weights]
        metrics["scalar_mix_gamma"] = gamma
        if kind.scalar_mix_picture:
            draw(
                plot_scalar_mix,
                {"fortunes": weights},
                os.path.join(out, "scalar_mix.png"),
                gammas={"fortunes": gamma},
            )
    return metrics

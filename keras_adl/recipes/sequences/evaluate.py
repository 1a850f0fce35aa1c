"""The sequences family's figures: exact match on the generated tasks, BLEU, chrF and exact
match of translations (`translation_scores`, `score_pairs`), and their attention pictures."""

import os

import keras
import numpy as np
import sacrebleu
import tensorflow as tf

from keras_adl.conventions import END
from keras_adl.data.dates import TARGET_LENGTH, TARGET_VOCAB
from keras_adl.models.pointer import pointer_decode
from keras_adl.recipes._pictures import draw
from keras_adl.recipes.sequences.build import decode_fn
from keras_adl.recipes.sequences.data import in_batches
from keras_adl.recipes.sequences.plots import plot_attention
from keras_adl.recipes.sequences.retrieval import complete_matches, repaired_matches
from keras_adl.recipes.sequences.spec import EVALUATION_BATCH
from keras_adl.text.copy_through import copied_spans
from keras_adl.text.normalization import joined_words, word_tokens

# Source-length buckets (in words) of `translation_scores`: short, medium, long.
LENGTH_BUCKETS = ((1, 6), (7, 12), (13, None))

# -- the generated tasks ---------------------------------------------------------------------


def evaluate_dates(model_name, model, test, out):
    """Exact match of greedy decoding on the held-out dates ``test`` (`date_arrays`' dict),
    three of them printed, and the attention picture of the first."""
    tokens, attention, _ = decode_fn(model_name)(model, test["source"], TARGET_LENGTH - 1)
    predictions = TARGET_VOCAB.decode(keras.ops.convert_to_numpy(tokens))
    exact = float(np.mean([p == t for p, t in zip(predictions, test["target_text"])]))
    draw(
        plot_attention,
        keras.ops.convert_to_numpy(attention)[0],
        list(test["source_text"][0]),
        list(predictions[0]) + ["</s>"],
        os.path.join(out, "attention.png"),
        title=f"{model_name}: attention",
    )
    for source, prediction in list(zip(test["source_text"], predictions))[:3]:
        print(f"  {source} -> {prediction}")
    return {"held_out_exact_match": exact}


def evaluate_sort(model, test, out):
    """The share of the held-out lists ``test`` (`sort_arrays`' dict) fully sorted, and the
    pointer distribution of the first."""
    order, probabilities = pointer_decode(model, test["inputs"])
    order = keras.ops.convert_to_numpy(order)
    draw(
        plot_attention,
        keras.ops.convert_to_numpy(probabilities)[0],
        [f"{v:.2f}" for v in test["inputs"][0, :, 0]],
        [str(i) for i in order[0]],
        os.path.join(out, "attention.png"),
        title="pointer distribution per output step",
    )
    return {"held_out_fully_sorted": float(np.mean(np.all(order == test["target"], 1)))}


# -- translations ----------------------------------------------------------------------------


def translate(model_name, model, tokenizer, sources, max_length, encode=None):
    """Greedy translations of ``sources`` (a list of str), in batches: ``(predictions,
    attention of the first source, output tokens of the first source)``, the predictions
    as `TextPairTokenizer.decode_target` writes them. ``encode`` maps a ``[B]`` string batch
    to the model's input ids (default: the tokenizer's source ids; for a model that reads
    its memory's matches, `retrieval.MatchInput.encode`)."""
    first = []

    def translate_batch(batch):
        if encode is None:
            ids = tokenizer.encode_source(batch, max_length)
        else:
            ids = encode(batch)
        tokens, attention, _ = decode_fn(model_name)(model, ids, max_length)
        if not first:
            first.extend(keras.ops.convert_to_numpy(x)[0] for x in (attention, tokens))
        return tokenizer.decode_target(tokens, batch)

    return in_batches(sources, translate_batch), *first


# A threshold no fuzzy score reaches: the memory answers exact matches only.
EXACT_ONLY = 1.01


def with_memory(predictions, found, threshold):
    """The translations of a model completed by a translation memory: for each source, the
    memory's ``target`` where its match is exact, or scores at least ``threshold`` and (where
    ``found`` says, `memory_lookup`'s ``complete``) holds every placeholder of the source;
    else the model's prediction. ``found``: `TranslationMemory.lookup`'s
    outputs, as numpy arrays. Returns ``(outputs, from_memory)``, a list of str and a bool
    array."""
    fuzzy = np.asarray(found["score"]) >= threshold
    if "complete" in found:
        fuzzy &= np.asarray(found["complete"])
    chosen = np.asarray(found["exact"]) | fuzzy
    chosen &= np.asarray(found["index"]) >= 0
    targets = [t.decode() if isinstance(t, bytes) else t for t in found["target"]]
    outputs = [m if use else p for p, m, use in zip(predictions, targets, chosen)]
    return outputs, chosen


def choose_memory_threshold(tokenizer, predictions, found, targets):
    """The threshold of `with_memory` whose outputs score the best corpus chrF against
    ``targets`` (development pairs the model did not train on; ``found``: their matches in a
    memory that does not hold them), among the matches' scores (to hundredths) and
    `EXACT_ONLY`. Returns
    ``(threshold, figures)``: the chrF of the model alone, of the memory alone and of both."""
    references = [t.decode() for t in tokenizer.normalize_target(tf.constant(targets)).numpy()]
    memory = [t.decode() for t in found["target"]]
    memory = [t.decode() for t in tokenizer.normalize_target(tf.constant(memory)).numpy()]
    normalised = dict(found, target=memory)

    def chrf(outputs):
        return float(sacrebleu.corpus_chrf(outputs, [references]).score)

    # The scores floored to hundredths: a candidate admits the scores it stands for.
    scores = np.floor(np.asarray(found["score"], np.float64) * 100) / 100
    candidates = sorted(set(scores.tolist())) + [EXACT_ONLY]
    # Ties go to the higher threshold: the memory answers only where it is as good.
    best, threshold = max((chrf(with_memory(predictions, normalised, t)[0]), t) for t in candidates)
    figures = {"model_chrf": chrf(predictions), "memory_chrf": chrf(memory), "chrf": best}
    return float(threshold), figures


def memory_lookup(memory, sources, copy=None):
    """`TranslationMemory.lookup` of ``sources`` (a list of str) in batches: numpy arrays.
    With a `keras_adl.text.CopyThrough` ``copy``, the targets of fuzzy matches are repaired
    (`CopyThrough.repair`: the query's placeholders, options… in place of the match's).
    ``complete`` says whether each match's target holds every format placeholder of its
    query (`retrieval.complete_matches`)."""

    def lookup(batch):
        found = memory.lookup(batch)
        if copy is not None:
            found["target"] = repaired_matches(copy, batch, found)
        found["complete"] = complete_matches(batch, found["target"])
        return {k: v.numpy() for k, v in found.items()}

    found = [
        lookup(tf.constant(sources[i : i + EVALUATION_BATCH]))
        for i in range(0, len(sources), EVALUATION_BATCH)
    ]
    return {k: np.concatenate([f[k] for f in found]) for k in found[0]} if found else {}


def evaluate_pairs(
    model_name,
    model,
    tokenizer,
    sources,
    targets,
    max_length,
    out,
    memory=None,
    threshold=None,
    match_input=None,
):
    """BLEU, chrF and exact match of greedy translations of held-out pairs (`score_pairs`),
    and the attention picture of the first held-out pair. With a translation ``memory``
    (`keras_adl.text.TranslationMemory`), the headline figures are those of the translations
    completed by it (`with_memory` at ``threshold``), what the export answers, and
    ``held_out_model`` and ``held_out_memory`` give the model's and the memory's alone;
    ``held_out_from_memory`` is the share the memory answered. The memory's translations are
    scored in the form the tokenizer writes outputs (`normalize_target`), as
    `choose_memory_threshold` scores them (the export answers them as stored: the same text
    for a cased target, which is the default). A model trained with its memory's matches as
    input (``--memory input``) reads them through ``match_input`` (a `retrieval.MatchInput`)
    from ``memory``."""
    encode = None
    if match_input is not None:

        def encode(batch):
            return match_input.encode(memory, batch, max_length)

    predictions, first_attention, first_tokens = translate(
        model_name, model, tokenizer, sources, max_length, encode
    )
    labels = [t.decode() for t in tokenizer.source_tokens(tf.constant(sources[:1]))[0].numpy()]
    ends = [i for i, t in enumerate(first_tokens) if t == END]
    outputs = first_tokens[: ends[0] + 1] if ends else first_tokens  # through </s>
    draw(
        plot_attention,
        first_attention[:, : len(labels[:max_length])],  # the source's columns, not its match's
        labels[:max_length],
        [t.decode() for t in tokenizer.target_tokens(outputs).numpy()],
        os.path.join(out, "attention.png"),
        title=f"{model_name}: attention on a held-out pair",
    )
    alone = None
    if memory is not None:
        found = memory_lookup(memory, sources, tokenizer.copy)
        # Scored as the threshold was chosen: the memory's translations in the model's form.
        stored = tokenizer.normalize_target(tf.constant(list(found["target"]), tf.string))
        found = dict(found, target=list(stored.numpy()))
        alone = predictions
        predictions, chosen = with_memory(predictions, found, threshold)
    for source, prediction in list(zip(sources, predictions))[:3]:
        print(f"  {source} -> {prediction}")
    scores = score_pairs(tokenizer, sources, targets, predictions)
    figures = {f"held_out_{name}": value for name, value in scores.items()}
    if alone is not None:
        retrieved = [t.decode() for t in found["target"]]
        headline = ("bleu", "chrf", "exact_match")
        for name, outputs in (("model", alone), ("memory", retrieved)):
            scored = score_pairs(tokenizer, sources, targets, outputs)
            figures[f"held_out_{name}"] = {k: scored[k] for k in headline}
        figures["held_out_from_memory"] = float(np.mean(chosen))
    return figures


def score_pairs(tokenizer, sources, targets, predictions):
    """`translation_scores` of ``predictions`` against the references in the form the
    tokenizer writes its outputs, by source length in words (after Unicode normalisation,
    whatever the tokenizer's level).

    With a cased target the headline figures are sacreBLEU's on raw text (case and
    punctuation as written, only NFC and single spaces); ``normalized`` adds the figures of both
    sides case-folded with punctuation split off (`joined_words`), comparable with runs whose
    target was folded. With a cased target ``copied_spans`` gives the share of the
    placeholders, options… that the references keep unchanged and the predictions reproduce
    exactly (`keras_adl.text.copy_through.copied_spans`)."""

    def strings(tensor):
        return [t.decode() for t in tensor.numpy()]

    references = strings(tokenizer.normalize_target(tf.constant(targets)))
    lengths = word_tokens(tf.constant(sources)).row_lengths().numpy()
    scores = translation_scores(predictions, references, lengths)
    if getattr(tokenizer, "cased_target", False):
        folded = translation_scores(
            strings(joined_words(tf.constant(predictions))),
            strings(joined_words(tf.constant(references))),
        )
        scores["normalized"] = {k: folded[k] for k in ("bleu", "chrf", "exact_match")}
    if getattr(tokenizer, "cased_target", False):  # spans the reference keeps, as written
        scores["copied_spans"] = copied_spans(sources, targets, predictions)
    return scores


def length_bucket_name(low, high):
    """The name of a source-length bucket: ``"7-12"``, or ``"13+"`` when ``high`` is None."""
    return f"{low}-{high}" if high is not None else f"{low}+"


def translation_scores(predictions, references, source_lengths=None, buckets=LENGTH_BUCKETS):
    """Corpus BLEU and chrF (sacrebleu's standard implementations, default settings) and exact
    match of translations, in all and, given ``source_lengths``, by source-length bucket.

    Args:
        predictions, references: lists of strings of one length (one reference per
            prediction), compared as given (normalise both the same way first).
        source_lengths: optional source lengths (words) for the buckets.
        buckets: ``(low, high)`` inclusive ranges of source length; ``high=None`` is open.

    Returns:
        A dict: ``bleu`` and ``chrf`` in [0, 100], ``exact_match`` in [0, 1], ``pairs``; with
        ``source_lengths``, ``by_source_length``: ``{"1-6": {...}, "7-12": {...}, "13+":
        {...}}`` with the same figures for each non-empty bucket.

    Example:

    >>> scores = translation_scores(["le chat dort", "un chien"], ["le chat dort", "le chien"])
    >>> scores["exact_match"], scores["pairs"], round(scores["chrf"], 1)
    (0.5, 2, 81.8)
    """
    predictions, references = list(predictions), list(references)
    if len(predictions) != len(references) or not predictions:
        raise ValueError(
            "translation_scores: `predictions` and `references` must be non-empty and of one "
            f"length; received {len(predictions)} and {len(references)}."
        )
    scores = {
        # force: the inputs are often normalised text with punctuation split off, on purpose.
        "bleu": float(sacrebleu.corpus_bleu(predictions, [references], force=True).score),
        "chrf": float(sacrebleu.corpus_chrf(predictions, [references]).score),
        "exact_match": float(np.mean([p == r for p, r in zip(predictions, references)])),
        "pairs": len(predictions),
    }
    if source_lengths is not None:
        lengths = np.asarray(source_lengths)
        if lengths.shape != (len(predictions),):
            raise ValueError(
                "translation_scores: `source_lengths` must give one length per prediction; "
                f"received shape {lengths.shape} for {len(predictions)} predictions."
            )
        by_length = {}
        for low, high in buckets:
            inside = (lengths >= low) & (lengths <= (high if high is not None else lengths.max()))
            if inside.any():
                name = length_bucket_name(low, high)
                by_length[name] = translation_scores(
                    [p for p, m in zip(predictions, inside) if m],
                    [r for r, m in zip(references, inside) if m],
                )
        scores["by_source_length"] = by_length
    return scores

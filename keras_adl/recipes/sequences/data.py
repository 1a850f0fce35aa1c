"""The sequences family's data: the generated examples of ``dates`` and ``sort``, and the text
pairs of ``pairs`` with their splits, their tokenizer and their batches."""

import json
import os

import tensorflow as tf

from keras_adl.data.dates import date_arrays
from keras_adl.data.gettext_catalogs import load_gettext_pairs
from keras_adl.data.sorting import sort_arrays
from keras_adl.data.text_pairs import load_text_pairs, split_pairs
from keras_adl.recipes.sequences.spec import (
    EVALUATION_BATCH,
    MEMORY_FILE,
    OLD_TOKENIZER_FILE,
    SORT_LENGTH,
    SPLIT_SEED,
    TOKENIZER_FILE,
)
from keras_adl.text.tokenizer import TextPairTokenizer
from keras_adl.training.rundir import RecipeError, read_run_file

# -- generated examples ----------------------------------------------------------------------


def date_examples(samples, seed):
    """``(inputs, targets, raw)`` of ``samples`` generated dates: the model's inputs, its
    teacher-forced targets and `date_arrays`' dict (with the texts)."""
    data = date_arrays(samples, seed=seed)
    return (
        {"source": data["source"], "decoder_input": data["decoder_input"]},
        data["target"],
        data,
    )


def sort_examples(samples, seed):
    """``(inputs, targets, raw)`` of ``samples`` generated lists of `SORT_LENGTH` numbers."""
    data = sort_arrays(samples, length=SORT_LENGTH, seed=seed)
    return (
        {"inputs": data["inputs"], "decoder_input": data["decoder_input"]},
        data["target"],
        data,
    )


# -- text pairs ------------------------------------------------------------------------------


def load_pairs(data):
    """``(sources, targets)`` from the ``--data`` of ``pairs``: ``gettext:LANG`` or
    ``gettext:DIR`` and ``.po``/``.mo`` files through
    `keras_adl.data.gettext_catalogs.load_gettext_pairs`, anything else as a
    ``source<TAB>target`` file (`keras_adl.data.text_pairs.load_text_pairs`).

    Raises:
        RecipeError: the data cannot be read (the message says why and where).
    """
    try:
        if data.startswith("gettext:"):
            return load_gettext_pairs(data[len("gettext:") :])
        if data.endswith((".po", ".mo")):
            return load_gettext_pairs(data)
        return load_text_pairs(data)
    except (OSError, ValueError) as error:
        raise RecipeError(str(error)) from None


def training_pairs(options, samples):
    """``(sources, targets, held_out, available)``: the training pairs of ``--data``, the
    held-out pairs (``--validation``, else a seeded ``--validation-split`` of them) and how
    many training pairs there were before ``samples`` cut them to a seeded subset."""
    sources, targets = load_pairs(options["data"])
    if options.get("validation"):
        held_out = load_pairs(options["validation"])
    else:
        (sources, targets), held_out = split_pairs(
            sources, targets, options["validation_split"], seed=SPLIT_SEED
        )
    available = len(sources)
    if available > samples:  # --samples: at most this many, a seeded subset
        (sources, targets), _ = split_pairs(
            sources, targets, 1 - samples / available, seed=SPLIT_SEED + 1
        )
    return sources, targets, held_out, available


def cased_target(options):
    """Whether a ``pairs`` run's targets keep their case and spacing (``--target-case``:
    unset, yes at the subword level)."""
    case = options.get("target_case")
    if case == "keep" and options.get("tokens") != "subword":
        raise RecipeError(
            f"--target-case keep needs --tokens subword; received --tokens {options['tokens']}"
        )
    return options.get("tokens") == "subword" and case != "fold"


def pair_tokenizer(sources, targets, options, cased):
    """The `TextPairTokenizer` of a ``pairs`` run, built from its training pairs."""
    return TextPairTokenizer.build(
        sources,
        targets,
        level=options["tokens"],
        vocab_size=options["vocab_size"],
        cased_target=cased,
        copy_through="off" if options.get("copy_through") == "off" else "auto",
    )


def write_tokenizer(tokenizer, directory):
    """Writes ``tokenizer``'s config as `TOKENIZER_FILE` in ``directory``."""
    with open(os.path.join(directory, TOKENIZER_FILE), "w") as f:
        json.dump(tokenizer.to_config(), f)


def read_tokenizer(directory):
    """The `TextPairTokenizer` of a run or export ``directory``: `TOKENIZER_FILE`, or the
    `OLD_TOKENIZER_FILE` of earlier versions."""
    return TextPairTokenizer.from_config(
        read_run_file(directory, TOKENIZER_FILE, OLD_TOKENIZER_FILE)
    )


def write_memory(directory, sources, targets, threshold, read_by_model=False):
    """Writes a run's translation memory (`MEMORY_FILE`): its pairs, threshold and whether
    the model reads its matches (``--memory input``)."""
    with open(os.path.join(directory, MEMORY_FILE), "w", encoding="utf-8") as f:
        json.dump(
            {
                "threshold": threshold,
                "input": bool(read_by_model),
                "sources": sources,
                "targets": targets,
            },
            f,
        )


def read_memory(directory):
    """The translation memory of a run or export ``directory`` (a dict of ``threshold``,
    ``input``, ``sources`` and ``targets``), or ``None`` for a run without one (``--memory
    off``, or an earlier version)."""
    path = os.path.join(directory, MEMORY_FILE)
    if not os.path.isfile(path):
        return None
    with open(path, encoding="utf-8") as f:
        stored = json.load(f)
    stored.setdefault("input", False)  # written before --memory input
    return stored


def fitting_pairs(tokenizer, sources, targets, max_length):
    """The pairs whose source has at most ``max_length`` tokens and whose target, with its
    ``</s>``, fits too: ``(sources, targets, number_left_out)``. Training on a cut target would
    teach the model that translations stop mid-sentence."""
    source_counts = tokenizer.token_counts(tf.constant(sources), "source").numpy()
    target_counts = tokenizer.token_counts(
        tf.constant(targets), "target", tf.constant(sources)
    ).numpy()
    keep = (source_counts <= max_length) & (target_counts + 1 <= max_length)
    kept = [i for i, k in enumerate(keep) if k]
    return [sources[i] for i in kept], [targets[i] for i in kept], int(len(sources) - len(kept))


def held_out_dataset(tokenizer, sources, targets, batch_size, max_length):
    """The held-out pairs as unshuffled batches of at most ``batch_size`` (``None`` when
    there are none)."""
    if not sources:
        return None
    size = min(batch_size, len(sources))
    return tokenizer.dataset(sources, targets, size, max_length, max_length, shuffle=False)


def in_batches(sources, translate_batch):
    """``translate_batch`` (a ``tf.string`` batch → a ``tf.string`` batch) over ``sources``
    (a list of str) in batches of `EVALUATION_BATCH`: the outputs, a list of str."""
    outputs = []
    for start in range(0, len(sources), EVALUATION_BATCH):
        batch = tf.constant(sources[start : start + EVALUATION_BATCH])
        outputs += [text.decode() for text in translate_batch(batch).numpy()]
    return outputs

"""The runs the contextual tasks read: the word vectors of a ``word2vec`` run (``--vectors``),
the translator of a ``cove`` run (``--cove``) and the biLM of a ``pretrain_bilm`` run
(``--bilm``)."""

import json
import os

import keras

from keras_adl.models.seq2seq import cove_encoder
from keras_adl.models.word2vec import word_vectors
from keras_adl.recipes.contextual.spec import (
    FEATURES,
    OLD_TOKENIZER_FILE,
    TOKENIZER_FILE,
    WORD2VEC_VOCABULARY_FILE,
)
from keras_adl.training.rundir import MODEL_FILE, RUN_FILE, RecipeError, read_run_file


def read_run(path, task):
    """The ``run.json`` of a finished run of ``task`` in ``path``.

    Raises:
        RecipeError: ``path`` holds no finished run of ``task``.
    """
    try:
        with open(os.path.join(path, RUN_FILE)) as f:
            record = json.load(f)
    except (OSError, ValueError):
        raise RecipeError(f"{path!r} holds no keras-adl run (no readable {RUN_FILE})") from None
    if record.get("task") != task or record.get("status") != "finished":
        raise RecipeError(
            f"{path!r} holds a {record.get('status')} run of {record.get('task')!r}; expected a "
            f"finished `keras-adl train {task}` run"
        )
    return record


def read_word_vectors(path):
    """``(words, vectors)`` of a ``word2vec`` run: the vocabulary and the unit-length input
    vectors ``[len(words) + 4, D]`` (row ``i + 4`` is ``words[i]``, `keras_adl.conventions`)."""
    read_run(path, "word2vec")
    with open(os.path.join(path, WORD2VEC_VOCABULARY_FILE)) as f:
        words = json.load(f)["words"]
    model = keras.models.load_model(os.path.join(path, MODEL_FILE))
    return words, word_vectors(model)


def read_tokenizer_config(run_dir):
    """The tokenizer file of a run of this family, under its name or its earlier one."""
    return read_run_file(run_dir, TOKENIZER_FILE, OLD_TOKENIZER_FILE)


def sources(features, options):
    """What ``--features`` reads, checked and loaded: ``{"words": [...], "vectors": [V, D]
    array}`` and, for CoVe, ``"cove"`` (the encoder model) or, for ELMo, ``"bilm"`` (the
    model) and ``"max_characters"``.

    Raises:
        RecipeError: a run it needs is not named, or is not a finished run of its task.
    """
    need = FEATURES[features].runs
    missing = [f"--{n}" for n in need if not options.get(n)]
    if missing:
        raise RecipeError(f"--features {features} needs {' and '.join(missing)}")
    found = {}
    if "vectors" in need:
        found["words"], found["vectors"] = read_word_vectors(options["vectors"])
    if "cove" in need:
        record = read_run(options["cove"], "cove")
        found["words"] = read_tokenizer_config(options["cove"])["source"]
        translator = keras.models.load_model(os.path.join(options["cove"], MODEL_FILE))
        found["cove"] = cove_encoder(translator)
        found["cove_run"] = record
    if "bilm" in need:
        record = read_run(options["bilm"], "pretrain_bilm")
        found["bilm"] = keras.models.load_model(os.path.join(options["bilm"], MODEL_FILE))
        found["max_characters"] = record["settings"]["max_characters"]
    return found

"""Small finished runs of the contextual tasks, written as ``keras-adl train`` writes them (or
as an earlier version did), for the tests that read, export and serve them."""

import json
import os

import numpy as np

from keras_adl.recipes.contextual.build import build_classifier, build_cove
from keras_adl.recipes.contextual.spec import CLASSIFIER, COVE
from keras_adl.text.tokenizer import WordVectorPairTokenizer

WORDS = ["the", "file", "été", "мир"]
PIECES = ["le", "fichier", "est", "ouvert"]
CLASS_NAMES = ["art", "science"]


def _write(run_dir, model, record, tokenizer_file, tokenizer_config):
    os.makedirs(run_dir)
    model.save(os.path.join(run_dir, "model.keras"))
    with open(os.path.join(run_dir, "run.json"), "w") as f:
        json.dump(dict(record, status="finished"), f)
    with open(os.path.join(run_dir, tokenizer_file), "w") as f:
        json.dump(tokenizer_config, f)
    return str(run_dir)


def cove_run(run_dir, tokenizer_file="tokenizer.json"):
    """``(run_dir, tokenizer, record)``: a ``cove`` run with 8-unit LSTMs over 4-dimensional
    word vectors, its tokenizer in ``tokenizer_file``."""
    tokenizer = WordVectorPairTokenizer(WORDS, PIECES)
    vectors = np.random.default_rng(0).normal(size=(tokenizer.source_size, 4)).astype("float32")
    preset = dict(COVE, units=8)
    model = build_cove(preset, tokenizer.source_size, tokenizer.target_size, vectors, False)
    record = {"task": "cove", "model": "attention_seq2seq", "max_length": 6, "settings": preset}
    run_dir = _write(run_dir, model, record, tokenizer_file, tokenizer.to_config())
    return run_dir, tokenizer, record


def classifier_run(run_dir, tokenizer_file="tokenizer.json"):
    """``(run_dir, record)``: a ``fortunes_features`` run over static word vectors, its word
    list in ``tokenizer_file``."""
    vectors = np.random.default_rng(0).normal(size=(len(WORDS) + 4, 4)).astype("float32")
    found = {"words": WORDS, "vectors": vectors}
    model = build_classifier(dict(CLASSIFIER, units=8), "static", found, 2, jit_compile=False)
    record = {"task": "fortunes_features", "model": "bigru", "class_names": CLASS_NAMES}
    return _write(run_dir, model, record, tokenizer_file, {"words": WORDS}), record

"""The pretraining family's tasks run end to end: ``finetune --init`` starts from a pretraining
run of an earlier version, whose vocabulary is ``vocab.json``."""

import json
import os

import pytest

from keras_adl import recipes
from keras_adl.recipes.pretraining import spec
from tests.cli.test_cli import _fortunes_dir, _sentences_corpus

_TINY = dict(num_layers=1, model_dim=16, num_heads=2, intermediate_dim=32, jit_compile=False)


@pytest.mark.slow  # ~30 s: a tiny pretraining run and a fine-tuning run from it
def test_finetune_init_reads_a_run_whose_vocabulary_has_the_old_name(tmp_path):
    corpus = _sentences_corpus(tmp_path / "corpus.txt")
    fortunes = _fortunes_dir(tmp_path / "fortunes")
    mlm = str(tmp_path / "mlm")
    recipes.train(
        "pretrain_mlm", mlm, epochs=1, batch_size=8, data=corpus, steps=2, vocab_size=120, **_TINY
    )
    written = sorted(os.listdir(mlm))
    assert spec.TOKENIZER_FILE in written and spec.OLD_TOKENIZER_FILE not in written
    with open(os.path.join(mlm, spec.TOKENIZER_FILE)) as f:
        vocabulary = json.load(f)
    # The run as an earlier version wrote it.
    os.rename(os.path.join(mlm, spec.TOKENIZER_FILE), os.path.join(mlm, spec.OLD_TOKENIZER_FILE))
    finetuned = str(tmp_path / "finetuned")
    _, _, metrics = recipes.train(
        "finetune", finetuned, epochs=1, batch_size=8, init=mlm, data=fortunes, jit_compile=False
    )
    assert 0.0 <= metrics["held_out_accuracy"] <= 1.0
    with open(os.path.join(finetuned, "run.json")) as f:
        run = json.load(f)
    assert run["weights"] == "pretrained" and run["settings"]["model_dim"] == 16
    with open(os.path.join(finetuned, spec.TOKENIZER_FILE)) as f:
        assert json.load(f) == vocabulary  # the pretraining run's vocabulary, under the new name

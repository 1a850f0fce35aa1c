import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB
from keras_adl.models import attention_seq2seq
from keras_adl.recipes.sequences.serving import export_seq2seq, make_seq2seq_serving_fn

INPUTS = ["3 may 1998", "Tuesday, 14 May 2002", "12/31/1999", "é?"]

RELOAD = r"""
import json, sys
sys.modules["keras_adl"] = None  # keras_adl must not be needed to serve
import tensorflow as tf
inputs = tf.constant(json.loads(sys.argv[1]))
results = []
for export_dir in sys.argv[2:]:
    out = tf.saved_model.load(export_dir).signatures["serving_default"](inputs=inputs)
    results.append({k: v.numpy().tolist() if k != "output" else [s.decode() for s in v.numpy()]
                    for k, v in out.items()})
print(json.dumps(results))
"""


@pytest.mark.slow  # a fresh process, ~24 s; make test checks the exports in process
def test_exported_saved_models_serve_raw_strings_in_a_fresh_process(tmp_path):
    # Greedy (width 1) and beam search (width 3) exports, reloaded by one fresh process.
    model = attention_seq2seq(len(SOURCE_VOCAB), len(TARGET_VOCAB), 8, 16)
    widths = (1, 3)
    expected, export_dirs = [], []
    for beam_width in widths:
        serve = make_seq2seq_serving_fn(model, SOURCE_VOCAB, TARGET_VOCAB, 11, beam_width)
        expected.append({k: v.numpy() for k, v in serve(np.array(INPUTS, dtype=object)).items()})
        export_dirs.append(str(tmp_path / f"export_{beam_width}"))
        export_seq2seq(model, export_dirs[-1], SOURCE_VOCAB, TARGET_VOCAB, 11, beam_width)
    result = subprocess.run(
        [sys.executable, "-c", RELOAD, json.dumps(INPUTS), *export_dirs],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    results = json.loads(result.stdout.strip().splitlines()[-1])
    assert len(results) == len(widths)
    for beam_width, served, want in zip(widths, results, expected):
        assert served["output"] == [s.decode() for s in want["output"]], beam_width
        np.testing.assert_array_equal(served["tokens"], want["tokens"])
        np.testing.assert_allclose(served["attention"], want["attention"], atol=1e-5)
        np.testing.assert_allclose(served["log_likelihood"], want["log_likelihood"], atol=1e-4)
        # Outputs are strings of target characters only (specials render as nothing).
        assert all(set(s) <= set(TARGET_VOCAB.chars) for s in served["output"])


def test_serving_tokenization_matches_the_vocabulary():
    model = attention_seq2seq(len(SOURCE_VOCAB), len(TARGET_VOCAB), 8, 16)
    serve = make_seq2seq_serving_fn(model, SOURCE_VOCAB, TARGET_VOCAB, 11)
    from keras_adl.models.seq2seq import greedy_decode

    ids = SOURCE_VOCAB.encode(["3 may 1998", "12/31/1999"], 12)
    np.testing.assert_array_equal(
        serve(np.array(["3 MAY 1998", "12/31/1999"], dtype=object))["tokens"].numpy(),
        keras.ops.convert_to_numpy(greedy_decode(model, ids, 11)[0]),
    )


def test_existing_export_dir_is_refused_and_failures_leave_nothing(tmp_path, monkeypatch):
    model = attention_seq2seq(len(SOURCE_VOCAB), len(TARGET_VOCAB), 8, 16)
    existing = tmp_path / "exists"
    existing.mkdir()
    with pytest.raises(FileExistsError, match="already exists"):
        export_seq2seq(model, str(existing), SOURCE_VOCAB, TARGET_VOCAB, 11)

    def half_write(self, path, *args, **kwargs):
        open(os.path.join(path, "saved_model.pb"), "w").write("partial")
        raise OSError("disk full")

    # ExportArchive() returns the backend's archive class; patch that class's writer.
    monkeypatch.setattr(type(keras.export.ExportArchive()), "write_out", half_write)
    with pytest.raises(OSError, match="disk full"):
        export_seq2seq(model, str(tmp_path / "new"), SOURCE_VOCAB, TARGET_VOCAB, 11)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exists"]

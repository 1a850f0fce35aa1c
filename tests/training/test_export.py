import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

from keras_adl.models import attention_seq2seq
from keras_adl.tasks.dates import SOURCE_VOCAB, TARGET_VOCAB
from keras_adl.training.export import export_seq2seq, make_seq2seq_serving_fn

INPUTS = ["3 may 1998", "Tuesday, 14 May 2002", "12/31/1999", "é?"]

RELOAD = r"""
import json, sys
sys.modules["keras_adl"] = None  # keras_adl must not be needed to serve
import tensorflow as tf
loaded = tf.saved_model.load(sys.argv[1])
out = loaded.signatures["serving_default"](inputs=tf.constant(json.loads(sys.argv[2])))
print(json.dumps({k: v.numpy().tolist() if k != "output" else [s.decode() for s in v.numpy()]
                  for k, v in out.items()}))
"""


@pytest.mark.parametrize("beam_width", [1, 3])
def test_exported_saved_model_serves_raw_strings_in_a_fresh_process(tmp_path, beam_width):
    model = attention_seq2seq(len(SOURCE_VOCAB), len(TARGET_VOCAB), 8, 16)
    serve = make_seq2seq_serving_fn(model, SOURCE_VOCAB, TARGET_VOCAB, 11, beam_width)
    expected = {k: v.numpy() for k, v in serve(np.array(INPUTS, dtype=object)).items()}
    export_dir = str(tmp_path / "export")
    export_seq2seq(model, export_dir, SOURCE_VOCAB, TARGET_VOCAB, 11, beam_width)
    result = subprocess.run(
        [sys.executable, "-c", RELOAD, export_dir, json.dumps(INPUTS)],
        capture_output=True, text=True, timeout=300,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
    )
    assert result.returncode == 0, result.stderr[-2000:]
    served = json.loads(result.stdout.strip().splitlines()[-1])
    assert served["output"] == [s.decode() for s in expected["output"]]
    np.testing.assert_array_equal(served["tokens"], expected["tokens"])
    np.testing.assert_allclose(served["attention"], expected["attention"], atol=1e-5)
    np.testing.assert_allclose(served["log_likelihood"], expected["log_likelihood"], atol=1e-4)
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

"""The run directory's files: a file renamed in a later version is read under both names."""

import json

import pytest

from keras_adl.training.rundir import read_run_file


def test_read_run_file_prefers_the_new_name_and_falls_back_to_the_old(tmp_path):
    (tmp_path / "vocab.json").write_text(json.dumps({"old": 1}))
    assert read_run_file(str(tmp_path), "tokenizer.json", "vocab.json") == {"old": 1}
    (tmp_path / "tokenizer.json").write_text(json.dumps({"new": 2}))
    assert read_run_file(str(tmp_path), "tokenizer.json", "vocab.json") == {"new": 2}


def test_read_run_file_names_the_new_file_when_neither_exists(tmp_path):
    with pytest.raises(FileNotFoundError) as raised:
        read_run_file(str(tmp_path), "tokenizer.json", "vocab.json")
    assert str(raised.value) == (
        f"[Errno 2] No such file or directory: '{tmp_path / 'tokenizer.json'}'"
    )

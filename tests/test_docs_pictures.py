"""`docs/pictures.py` and what it made: every picture listed in ``docs/pictures/pictures.json``
is there, a small PNG; every family has one; the script's settings name real tasks and models,
its ``--help`` runs, one picture can be redone, and its shrinking and index keep their
promises."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from PIL import Image

from keras_adl.recipes import FAMILIES, find
from tests.scripts import ROOT, load_script

PICTURES_DIR = os.path.join(ROOT, "docs", "pictures")
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
MAX_BYTES = 150_000


@pytest.fixture(scope="module")
def script():
    return load_script("docs/pictures.py")


@pytest.fixture(scope="module")
def index():
    with open(os.path.join(PICTURES_DIR, "pictures.json"), encoding="utf-8") as file:
        return json.load(file)["pictures"]


def test_every_listed_picture_is_a_small_png(index):
    total = 0
    for entry in index:
        path = os.path.join(PICTURES_DIR, entry["file"])
        with open(path, "rb") as file:
            assert file.read(8) == PNG_SIGNATURE, entry["file"]
        size = os.path.getsize(path)
        assert size <= MAX_BYTES, (entry["file"], size)
        total += size
    assert total < 2_000_000


def test_every_family_has_a_picture_with_a_caption_and_its_command(index):
    assert {e["family"] for e in index} == set(FAMILIES)
    for entry in index:
        assert entry["file"].startswith(entry["family"] + "/")
        assert entry["caption"] and "\n" not in entry["caption"]
        assert entry["command"].startswith(f"keras-adl train {entry['task']} ")
        assert f"--seed {entry['seed']}" in entry["command"]


def test_the_index_lists_the_scripts_pictures_in_order_and_nothing_else(script, index):
    files = [f"{p.family}/{p.name}.png" for p in script.PICTURES]
    assert [e["file"] for e in index] == files
    on_disk = {
        f"{family}/{name}"
        for family in os.listdir(PICTURES_DIR)
        if os.path.isdir(os.path.join(PICTURES_DIR, family))
        for name in os.listdir(os.path.join(PICTURES_DIR, family))
    }
    assert on_disk == set(files)


def test_the_runs_name_real_tasks_and_models_and_read_earlier_runs(script):
    names = list(script.RUNS)
    for position, (name, run) in enumerate(script.RUNS.items()):
        find(run.task, run.model)  # raises for an unknown task or model
        assert all(names.index(needed) < position for needed in run.needs()), name
    assert {p.run for p in script.PICTURES} <= set(names)
    # --only contextual still runs the word vectors its ELMo features read.
    contextual = [p for p in script.PICTURES if p.family == "contextual"]
    assert "word2vec" in script.runs_needed(contextual)


def test_the_command_shows_a_read_run_by_name(script):
    run = script.Run("fortunes_features", "bigru", ("--vectors", "{word2vec}"), seed=3)
    assert run.command() == (
        "keras-adl train fortunes_features --model bigru --vectors <word2vec run> --seed 3"
    )
    assert run.argv({"word2vec": "/tmp/w"})[4:6] == ["--vectors", "/tmp/w"]


def test_shrink_narrows_and_compresses_a_large_picture(script, tmp_path):
    rng = np.random.default_rng(0)
    gradient = np.linspace(0, 255, 1600)[None, :, None] * np.ones((1200, 1, 3))
    pixels = (gradient + rng.normal(0, 8, gradient.shape)).clip(0, 255).astype("uint8")
    source, target = tmp_path / "big.png", tmp_path / "out" / "small.png"
    Image.fromarray(pixels).save(source)
    assert os.path.getsize(source) > MAX_BYTES
    size = script.shrink(str(source), str(target))
    assert size == os.path.getsize(target) <= MAX_BYTES
    with Image.open(target) as small:
        assert small.width <= script.MAX_WIDTH and small.mode == "P"
        assert abs(small.width / small.height - 1600 / 1200) < 0.01


def test_redoing_one_family_keeps_the_others_entries_and_drops_stale_files(script, tmp_path):
    first, second = script.PICTURES[0], script.PICTURES[-1]
    assert first.family != second.family
    out = str(tmp_path)

    def entry(picture, caption):
        return {"file": f"{picture.family}/{picture.name}.png", "caption": caption}

    script.write_index(out, {e["file"]: e for e in [entry(first, "a"), entry(second, "b")]}, [])
    stale = tmp_path / second.family / "stale.png"
    stale.parent.mkdir()
    stale.write_bytes(PNG_SIGNATURE)
    entries = script.write_index(
        out, {entry(second, "c")["file"]: entry(second, "c")}, [second.family]
    )
    assert [e["caption"] for e in entries] == ["a", "c"]
    assert not stale.exists()
    with open(tmp_path / "pictures.json") as file:
        assert json.load(file)["pictures"] == entries
    # A redo whose run failed keeps the picture it had.
    kept = tmp_path / entry(first, "a")["file"]
    kept.parent.mkdir()
    kept.write_bytes(PNG_SIGNATURE)
    assert script.write_index(out, {}, [first.family]) == entries
    assert kept.exists()


def test_one_picture_can_be_redone_with_the_runs_it_needs(script):
    pictures, redone = script.chosen(script.parse_args(["--pictures", "memory/ntm_addressing"]))
    assert [f"{p.family}/{p.name}" for p in pictures] == ["memory/ntm_addressing"]
    assert redone == ["memory"] and script.runs_needed(pictures) == ["copy_ntm"]
    pictures, redone = script.chosen(script.parse_args(["--only", "memory"]))
    assert [p.name for p in pictures] == ["ntm_addressing", "dnc_addressing"]
    assert redone == ["memory"]
    pictures, redone = script.chosen(script.parse_args([]))
    assert pictures == list(script.PICTURES) and redone == list(FAMILIES)


def test_help_runs():
    result = subprocess.run(
        [sys.executable, os.path.join(ROOT, "docs", "pictures.py"), "--help"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert all(option in result.stdout for option in ("--only", "--pictures", "--out"))

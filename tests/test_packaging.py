"""Packaging: the sdist and wheel hold what they must, the optional dependencies (extras) fail
with one clear line naming what to install, and ``python -m keras_adl`` runs.

A missing module is simulated with ``sys.modules[name] = None``: Python's import then raises
``ModuleNotFoundError`` for it, as when it is not installed."""

import configparser
import hashlib
import importlib
import os
import subprocess
import sys
import tarfile
import zipfile

import numpy as np
import pytest

from keras_adl import cli, recipes
from keras_adl.data.image_sources import load_sklearn_digits
from keras_adl.extras import MissingExtra, require
from keras_adl.recipes import FAMILIES, _pictures, _tuning
from keras_adl.recipes.sequences.plots import plot_attention

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# sha256 of the Apache License 2.0 text as apache.org publishes it (LICENSE-2.0.txt).
APACHE_2_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"
APPENDIX_PLACEHOLDER = "   Copyright [yyyy] [name of copyright owner]"
COPYRIGHT = "   Copyright 2026 The keras-adl authors"
# What `make test` needs beside the package: shipped in the sdist (MANIFEST.in).
SDIST_FILES = (
    "LICENSE",
    "README.md",
    "Makefile",
    "setup.cfg",
    "pyproject.toml",
    ".ci/run",
    "tests/conftest.py",
    "tests/harness.py",
)


def _missing(monkeypatch, *modules):
    for module in modules:
        monkeypatch.setitem(sys.modules, module, None)


def _setup_cfg():
    config = configparser.ConfigParser()
    config.read(os.path.join(ROOT, "setup.cfg"))
    return config


def _requirements(value):
    return {line.strip() for line in value.splitlines() if line.strip()}


# -- missing extras -------------------------------------------------------------------------------


def test_pictures_without_matplotlib_name_the_plots_extra(monkeypatch, tmp_path):
    _missing(monkeypatch, "matplotlib", "matplotlib.pyplot")
    path = tmp_path / "attention.png"
    with pytest.raises(MissingExtra) as raised:
        plot_attention(np.ones((2, 2)), ["a", "b"], ["c", "d"], str(path))
    assert str(raised.value) == "drawing pictures needs matplotlib: pip install 'keras-adl[plots]'"
    assert isinstance(raised.value, ModuleNotFoundError) and raised.value.name == "matplotlib"
    assert (raised.value.package, raised.value.extra) == ("matplotlib", "plots")
    assert not path.exists()


def test_digits_and_tsne_without_scikit_learn_name_the_data_extra(monkeypatch, tmp_path):
    _missing(monkeypatch, "sklearn", "sklearn.manifold")
    with pytest.raises(MissingExtra, match=r"^load_sklearn_digits .*needs scikit-learn: "):
        load_sklearn_digits()
    from keras_adl.recipes.embeddings.plots import plot_embeddings

    with pytest.raises(MissingExtra) as raised:
        plot_embeddings(None, ["a", "b"], str(tmp_path / "embeddings.png"))
    assert str(raised.value).endswith("needs scikit-learn: pip install 'keras-adl[data]'")


@pytest.mark.parametrize("family", FAMILIES)
def test_each_recipes_hypermodels_without_keras_tuner_name_the_tuner_extra(monkeypatch, family):
    _missing(monkeypatch, "keras_tuner")
    name = f"keras_adl.recipes.{family}.hypermodels"
    monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(MissingExtra, match=r"needs keras-tuner: pip install 'keras-adl\[tuner\]'$"):
        importlib.import_module(name)


def test_search_without_keras_tuner_names_the_tuner_extra(monkeypatch):
    _missing(monkeypatch, "keras_tuner")
    with pytest.raises(MissingExtra, match=r"pip install 'keras-adl\[tuner\]'"):
        _tuning.search(None, "val_loss", 1, "unused", "unused")


def test_a_broken_install_is_not_reported_as_a_missing_extra(monkeypatch, tmp_path):
    # The package is there, a module it imports is not: that error is the package's own.
    package = tmp_path / "half_installed"
    package.mkdir()
    (package / "__init__.py").write_text("import no_such_dependency_of_half_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as raised:
        require("half_installed", "plots", "this test")
    assert not isinstance(raised.value, MissingExtra)
    assert raised.value.name == "no_such_dependency_of_half_installed"
    assert require("json", "plots", "this test") is sys.modules["json"]


def test_run_pictures_are_skipped_with_one_line_without_matplotlib(monkeypatch, tmp_path, capsys):
    _missing(monkeypatch, "matplotlib", "matplotlib.pyplot")
    monkeypatch.setattr(_pictures, "_PICTURES_SKIPPED", set())
    for name in ("a.png", "b.png"):
        drawn = _pictures.draw(
            plot_attention, np.ones((2, 2)), ["a", "b"], ["c", "d"], str(tmp_path / name)
        )
        assert drawn is None
    assert capsys.readouterr().out == (
        "pictures skipped: matplotlib is not installed (pip install 'keras-adl[plots]')\n"
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow  # a short training run
def test_training_without_matplotlib_finishes_without_pictures(monkeypatch, tmp_path, capsys):

    _missing(monkeypatch, "matplotlib", "matplotlib.pyplot")
    monkeypatch.setattr(_pictures, "_PICTURES_SKIPPED", set())
    out = tmp_path / "sort"
    recipes.train("sort", str(out), epochs=1, samples=64, batch_size=32)
    skipped = "pictures skipped: matplotlib is not installed (pip install 'keras-adl[plots]')"
    assert capsys.readouterr().out.splitlines().count(skipped) == 1
    assert (out / "model.keras").is_file() and not (out / "attention.png").exists()
    assert '"status": "finished"' in (out / "run.json").read_text()


def test_tune_without_keras_tuner_exits_2_with_one_line(monkeypatch, tmp_path, capsys):
    _missing(monkeypatch, "keras_tuner")

    def no_tensorflow(*args, **kwargs):
        raise AssertionError("the missing extra is reported before TensorFlow loads")

    monkeypatch.setattr(cli.commands, "load_tensorflow", no_tensorflow)
    code = cli.main(["tune", "dates", "--trials", "1", "--out", str(tmp_path / "tune")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err == (
        "keras-adl: error: keras-adl tune needs keras-tuner: pip install 'keras-adl[tuner]'\n"
    )
    assert not (tmp_path / "tune").exists()


def test_python_m_keras_adl_help():
    result = subprocess.run(
        [sys.executable, "-m", "keras_adl", "--help"], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: keras-adl ") and "tune" in result.stdout


# -- metadata and files ---------------------------------------------------------------------------


def test_license_is_the_apache_2_text():
    with open(os.path.join(ROOT, "LICENSE"), "rb") as f:
        text = f.read().decode()
    assert text.count(COPYRIGHT + "\n") == 1
    original = text.replace(COPYRIGHT + "\n", APPENDIX_PLACEHOLDER + "\n")
    assert hashlib.sha256(original.encode()).hexdigest() == APACHE_2_SHA256
    metadata = _setup_cfg()["metadata"]
    assert metadata["license"] == "Apache-2.0" and metadata["license_files"].strip() == "LICENSE"


def test_py_typed_is_package_data():
    assert os.path.isfile(os.path.join(ROOT, "keras_adl", "py.typed"))
    assert _setup_cfg()["options.package_data"]["keras_adl"].split() == ["py.typed"]


def test_extras_split_the_optional_dependencies():
    config = _setup_cfg()
    required = _requirements(config["options"]["install_requires"])
    extras = {k: _requirements(v) for k, v in config["options.extras_require"].items()}
    assert not {r for r in required if r.startswith(("matplotlib", "scikit-learn", "keras-tuner"))}
    assert extras["plots"] == {"matplotlib"} and extras["data"] == {"scikit-learn"}
    assert extras["all"] == extras["plots"] | extras["data"] | extras["tuner"]
    assert "keras>=3.15,<3.17" in required


def _manifest_files():
    """The files setuptools' sdist takes from MANIFEST.in (its own template rules)."""
    from setuptools.command.egg_info import FileList

    files = FileList()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with open("MANIFEST.in") as f:
            for line in f:
                if line.strip() and not line.startswith("#"):
                    files.process_template_line(line)
    finally:
        os.chdir(cwd)
    return {path.replace(os.sep, "/") for path in files.files}


def _tree(folder, suffixes=None):
    """The files under ``folder`` (of ROOT) a test run needs, ``/``-separated."""
    found = set()
    for directory, subfolders, names in os.walk(os.path.join(ROOT, folder)):
        subfolders[:] = [s for s in subfolders if s != "__pycache__"]
        for name in names:
            if not name.endswith(".pyc") and (suffixes is None or name.endswith(suffixes)):
                found.add(os.path.relpath(os.path.join(directory, name), ROOT).replace(os.sep, "/"))
    return found


def test_manifest_ships_what_make_test_needs():
    files = _manifest_files()
    assert set(SDIST_FILES) <= files
    # The docs' sources, not the site `make docs` builds nor the API pages each build writes.
    docs = {f for f in _tree("docs") if not f.startswith(("docs/_build/", "docs/api/"))}
    for needed in (_tree("tests"), _tree("examples"), _tree("benchmarks", (".py", ".md")), docs):
        assert needed and needed <= files, sorted(needed - files)
    assert not [f for f in files if f.startswith(("docs/_build/", "docs/api/"))]
    assert not [f for f in files if f.endswith(".pyc") or "__pycache__" in f]
    assert not [f for f in files if f.split("/")[0] in ("runs", "build", "dist", ".venv")]


@pytest.mark.slow  # builds the sdist and the wheel (python -m build: a few seconds)
def test_built_sdist_and_wheel_hold_what_they_must(tmp_path):
    # Offline: the build backend of pyproject.toml is installed (the test extra), so no isolated
    # environment is made and nothing is downloaded.
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(tmp_path), ROOT],
        check=True,
        capture_output=True,
        timeout=600,
    )
    (wheel,) = tmp_path.glob("keras_adl-*.whl")
    (sdist,) = tmp_path.glob("keras_adl-*.tar.gz")
    with zipfile.ZipFile(wheel) as z:
        in_wheel = set(z.namelist())
        metadata = z.read(next(n for n in in_wheel if n.endswith(".dist-info/METADATA"))).decode()
    modules = _tree("keras_adl", (".py",)) | {"keras_adl/py.typed"}
    assert modules <= in_wheel, sorted(modules - in_wheel)
    assert [n for n in in_wheel if n.endswith(".dist-info/licenses/LICENSE")]
    assert not [n for n in in_wheel if n.startswith(("tests/", "examples/", "benchmarks/"))]
    assert 'Requires-Dist: matplotlib; extra == "plots"' in metadata
    with tarfile.open(sdist) as tar:
        top = tar.getnames()[0].split("/")[0]
        in_sdist = {n[len(top) + 1 :] for n in tar.getnames() if n.startswith(top + "/")}
    needed = {"MANIFEST.in", *SDIST_FILES} | _tree("tests") | _tree("examples") | modules
    needed |= _tree("benchmarks", (".py", ".md"))
    assert needed <= in_sdist, sorted(needed - in_sdist)
    assert {os.path.dirname(f) for f in _tree("tests")} <= in_sdist  # every tests/ folder

"""Every `Example:` in a public docstring runs and prints what it shows."""

import doctest
import importlib
import os
import pkgutil
import shutil
import subprocess

import pytest

import keras_adl


def _has_english_tag_data():
    """Fortunes, WordNet and Lingua::EN::Tagger, as ``make data`` installs them."""
    from keras_adl.data.fortunes import find_fortunes
    from keras_adl.data.text_corpora import WORDNET_DIR

    if not (shutil.which("perl") and find_fortunes()):
        return False
    if not os.path.isfile(os.path.join(WORDNET_DIR, "cntlist.rev")):
        return False
    done = subprocess.run(["perl", "-MLingua::EN::Tagger", "-e", "1"], capture_output=True)
    return done.returncode == 0


# Modules whose examples read Debian data (``make data``): skipped, like their tests, without it.
NEEDS_DATA = {"keras_adl.data.english_tags": _has_english_tag_data}


def _modules():
    for info in pkgutil.walk_packages(keras_adl.__path__, "keras_adl."):
        yield info.name


@pytest.mark.parametrize("name", sorted(_modules()))
def test_docstring_examples(name):
    if name in NEEDS_DATA and not NEEDS_DATA[name]():
        pytest.skip(f"{name}'s examples need `make data`")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {name}"
    with open(module.__file__, encoding="utf-8") as f:
        source = f.read()
    if "Example:" in source:
        assert result.attempted > 0, f"{name} documents an Example that doctest does not run"

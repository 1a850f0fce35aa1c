"""Every `Example:` in a public docstring runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import keras_adl
from tests import debian_data

# Modules whose examples read Debian data (``make data``): skipped, like their tests, without it
# (failed in CI).
NEEDS_DATA = {
    "keras_adl.data.english_tags": ("fortunes", "wordnet-base", "liblingua-en-tagger-perl")
}


def _modules():
    for info in pkgutil.walk_packages(keras_adl.__path__, "keras_adl."):
        yield info.name


@pytest.mark.parametrize("name", sorted(_modules()))
def test_docstring_examples(name):
    debian_data.require(*NEEDS_DATA.get(name, ()))
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} doctest failure(s) in {name}"
    with open(module.__file__, encoding="utf-8") as f:
        source = f.read()
    if "Example:" in source:
        assert result.attempted > 0, f"{name} documents an Example that doctest does not run"

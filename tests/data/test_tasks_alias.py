"""The data package's old path, ``keras_adl.tasks``, still imports (deprecated for a release)."""

import importlib
import sys

import pytest


def test_old_path_warns_and_aliases_the_data_package():
    import keras_adl.data
    import keras_adl.data.dates

    sys.modules.pop("keras_adl.tasks", None)
    with pytest.warns(DeprecationWarning, match="keras_adl.data"):
        old = importlib.import_module("keras_adl.tasks")
    assert old.generate_dates is keras_adl.data.generate_dates
    assert sorted(old.__all__) == sorted(keras_adl.data.__all__)
    assert importlib.import_module("keras_adl.tasks.dates") is keras_adl.data.dates


# The modules of the data package when it moved (issue 49); those added since have no old path.
MOVED = {
    "algorithmic", "bilm", "corpora", "date_fields", "dates", "digit_strips", "fortunes",
    "gettext_catalogs", "image_sources", "needle", "pretraining", "skipgrams", "sorting",
    "splits", "text_corpora", "text_pairs", "translated_digits",
}  # fmt: skip


def test_every_moved_data_module_has_its_old_path():
    import pathlib

    import keras_adl.data
    import keras_adl.tasks

    data = {p.stem for p in pathlib.Path(keras_adl.data.__file__).parent.glob("[!_]*.py")}
    old = {p.stem for p in pathlib.Path(keras_adl.tasks.__file__).parent.glob("[!_]*.py")}
    assert old == MOVED and MOVED <= data
    for name in sorted(MOVED):  # the package warned once, above
        alias = importlib.import_module(f"keras_adl.tasks.{name}")
        assert alias is importlib.import_module(f"keras_adl.data.{name}")

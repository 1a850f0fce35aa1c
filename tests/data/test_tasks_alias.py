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


def test_every_data_module_has_its_old_path():
    import pathlib

    import keras_adl.data
    import keras_adl.tasks

    data = {p.stem for p in pathlib.Path(keras_adl.data.__file__).parent.glob("[!_]*.py")}
    old = {p.stem for p in pathlib.Path(keras_adl.tasks.__file__).parent.glob("[!_]*.py")}
    assert data == old

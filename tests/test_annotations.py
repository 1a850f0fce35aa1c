"""The public API is fully annotated: every function in ``keras_adl.ops.__all__``, the
``__init__`` of every layer in ``keras_adl.layers.__all__`` and every function in
``keras_adl.models.__all__`` annotates each parameter and its return, and the annotations
resolve (``typing.get_type_hints``: no broken forward references). Portable: the annotations
import nothing backend-specific."""

import inspect
import typing

import pytest

import keras_adl.layers
import keras_adl.models
import keras_adl.ops

pytestmark = pytest.mark.portable


def _ops():
    return [(f"keras_adl.ops.{n}", getattr(keras_adl.ops, n)) for n in keras_adl.ops.__all__]


def _layers():
    return [
        (f"keras_adl.layers.{n}.__init__", getattr(keras_adl.layers, n).__init__)
        for n in keras_adl.layers.__all__
    ]


def _models():
    public = [(n, getattr(keras_adl.models, n)) for n in keras_adl.models.__all__]
    return [(f"keras_adl.models.{n}", f) for n, f in public if not inspect.isclass(f)]


GROUPS = {"ops": _ops, "layers": _layers, "models": _models}


def _missing(function):
    """The names of ``function``'s unannotated parameters, and ``return`` if that is."""
    signature = inspect.signature(function)
    missing = [
        name
        for name, parameter in signature.parameters.items()
        if name != "self" and parameter.annotation is inspect.Parameter.empty
    ]
    if signature.return_annotation is inspect.Signature.empty:
        missing.append("return")
    return missing


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_public_api_is_annotated(group):
    functions = GROUPS[group]()
    assert functions, f"no public functions found in group {group!r}"
    problems = []
    for label, function in functions:
        missing = _missing(function)
        if missing:
            problems.append(f"{label}: {', '.join(missing)}")
    assert not problems, "unannotated parameters / returns:\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("group", sorted(GROUPS))
def test_annotations_resolve(group):
    problems = []
    for label, function in GROUPS[group]():
        try:
            typing.get_type_hints(function)
        except Exception as error:  # NameError for a broken forward reference, TypeError, …
            problems.append(f"{label}: {type(error).__name__}: {error}")
    assert not problems, "annotations that do not resolve:\n  " + "\n  ".join(problems)


def test_missing_reports_every_gap():
    def partly(self, a: int, b, *args, c=1, **kwargs: int):
        return a

    assert _missing(partly) == ["b", "args", "c", "return"]

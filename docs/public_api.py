"""The public API the reference documents: one page per module, and the names each page renders.

The docs build (``docs/conf.py``), the test that every public name has an entry
(``tests/test_docs.py``) and the docstring linter read this one list.
"""

import importlib

TRAINING = tuple(
    f"keras_adl.training.{name}"
    for name in (
        "fit",
        "distribute",
        "cluster",
        "run",
        "rundir",
        "export",
        "checkpoint",
        "budget",
        "callbacks",
        "divergence",
        "data",
        "sparse_adam",
    )
)

# (page, modules): ``docs/api/<page>.md`` documents each module's ``__all__``.
PAGES = (
    ("ops", ("keras_adl.ops", "keras_adl.ops.recurrence")),
    ("layers", ("keras_adl.layers",)),
    (
        "models",
        (
            "keras_adl.models",
            "keras_adl.models.word2vec",
            "keras_adl.models.bert",
            "keras_adl.models.gpt",
        ),
    ),
    (
        "data",
        (
            "keras_adl.data",
            "keras_adl.data.text_pairs",
            "keras_adl.data.gettext_catalogs",
            "keras_adl.data.text_corpora",
            "keras_adl.data.skipgrams",
            "keras_adl.data.pretraining",
            "keras_adl.data.bilm",
        ),
    ),
    (
        "text",
        (
            "keras_adl.text",
            "keras_adl.text.normalization",
            "keras_adl.text.wordpiece",
            "keras_adl.text.characters",
            "keras_adl.text.copy_through",
        ),
    ),
    ("embeddings", ("keras_adl.embeddings",)),
    ("metrics", ("keras_adl.metrics",)),
    ("conventions", ("keras_adl.conventions",)),
    ("plotting", ("keras_adl.plotting",)),
    ("training", TRAINING),
    ("recipes", ("keras_adl.recipes",)),
    ("cli", ("keras_adl.cli",)),
)
MODULES = tuple(module for _, modules in PAGES for module in modules)


def public_names(module_name):
    """The names ``module_name`` exports (its ``__all__``), in their order."""
    return list(importlib.import_module(module_name).__all__)


def public_objects():
    """``{short name: [full dotted names]}`` of every documented public name."""
    names = {}
    for module in MODULES:
        for name in public_names(module):
            names.setdefault(name, []).append(f"{module}.{name}")
    return names

"""The public API the reference documents: one page per module, the names each page renders,
the layers by kind (a page per layer) and the sections of the ops and models pages.

The docs build (``docs/conf.py``) and the test that every public name has an entry
(``tests/test_docs.py``) read these lists.
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
        "serving_inputs",
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
            "keras_adl.data.po_catalogs",
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

# The layers by kind, as keras.io groups its layers API: (kind page, title, what the kind is,
# layers). ``docs/api/layers.md`` lists the kinds and their layers, ``docs/api/layers/<kind
# page>.md`` one kind's, and ``docs/api/layers/<file>.md`` documents one layer, ``<file>``
# being the name of the layer's source file (``bahdanau_attention`` for `BahdanauAttention`).
# Every name of ``keras_adl.layers.__all__`` is in one kind (tests/test_docs.py checks it).
LAYER_KINDS = (
    (
        "attention_layers",
        "Attention layers",
        "Attention of a query over a memory (additive, multiplicative, multi-head), the "
        "Transformer's blocks and an RNN decoder that attends at every step.",
        (
            "BahdanauAttention",
            "LuongAttention",
            "MultiHeadSelfAttention",
            "MultiHeadCrossAttention",
            "TransformerEncoderBlock",
            "TransformerDecoderBlock",
            "AttentionRNNDecoder",
        ),
    ),
    (
        "memory_cells",
        "Memory cells",
        "RNN cells with an external memory that they address by content and by location; "
        "put them in ``keras.layers.RNN``.",
        ("NTMCell", "DNCCell"),
    ),
    (
        "visual_attention_layers",
        "Visual attention layers",
        "A retina-like glimpse sensor, the network that encodes a glimpse, and the recurrent "
        "models that choose where to look next.",
        ("GlimpseSensor", "GlimpseNetwork", "RecurrentAttention", "DeepRecurrentAttention"),
    ),
    (
        "pooling_layers",
        "Pooling and hierarchy layers",
        "From a sequence to one vector (attention against a learned context, masked pooling), "
        "and from documents of sentences of words to document vectors.",
        ("AttentionPooling", "SequencePooling", "HierarchicalAttention"),
    ),
    (
        "embedding_layers",
        "Embedding and text layers",
        "Token, position and character embeddings, and ELMo's contextual embeddings of a "
        "trained biLM.",
        (
            "TokenAndPositionEmbedding",
            "PositionalEncoding",
            "CharacterCNN",
            "Highway",
            "ELMoEmbedding",
            "ScalarMix",
        ),
    ),
    (
        "pretraining_layers",
        "Pretraining layers",
        "BERT's masked-LM head, and the prediction module and restricted views of cross-view "
        "training.",
        ("MaskedLMHead", "PredictionModule", "RestrictedViews"),
    ),
    (
        "regularization_layers",
        "Regularization layers",
        "Show, Attend and Tell's attention penalty, and a dropout whose masks do not depend on "
        "how the batch is split over replicas.",
        ("DoublyStochasticRegularization", "GlobalBatchDropout"),
    ),
)

# The sections of a module's entry on its page, by the source module each public name comes
# from: (section title, source modules). A module not listed here renders its ``__all__`` in
# one run.
SECTIONS = {
    "keras_adl.ops": (
        ("Attention", ("keras_adl.ops.attention", "keras_adl.ops._kernels")),
        ("Memory addressing", ("keras_adl.ops.addressing",)),
        ("Visual attention: glimpses", ("keras_adl.ops.glimpse",)),
        ("Cross-view training", ("keras_adl.ops.cross_view",)),
    ),
    "keras_adl.models": (
        (
            "Sequences: attention, the Transformer, pointer networks",
            (
                "keras_adl.models.seq2seq",
                "keras_adl.models.transformer",
                "keras_adl.models.pointer",
            ),
        ),
        ("Memory", ("keras_adl.models.memory",)),
        (
            "Visual attention",
            (
                "keras_adl.models.ram",
                "keras_adl.models.dram",
                "keras_adl.models.captioning",
                "keras_adl.models.baselines",
            ),
        ),
        ("Documents: hierarchical attention", ("keras_adl.models.han",)),
        (
            "Pretraining and contextual embeddings",
            (
                "keras_adl.models.bert",
                "keras_adl.models.gpt",
                "keras_adl.models.elmo",
                "keras_adl.models.cross_view",
            ),
        ),
    ),
}


def public_names(module_name):
    """The names ``module_name`` exports (its ``__all__``), in their order."""
    return list(importlib.import_module(module_name).__all__)


def layer_file(name):
    """The name of the page of the layer ``name``: its source file's (``bahdanau_attention``)."""
    return getattr(importlib.import_module("keras_adl.layers"), name).__module__.rsplit(".", 1)[1]


def section_names(module_name):
    """``[(section title, [names])]``: ``module_name``'s ``__all__`` by `SECTIONS`, each
    section's names in ``__all__`` order; ``[(None, __all__)]`` for a module without
    sections. Raises ValueError for a name whose source module no section lists."""
    names = public_names(module_name)
    if module_name not in SECTIONS:
        return [(None, names)]
    module = importlib.import_module(module_name)
    sections = [(title, []) for title, _ in SECTIONS[module_name]]
    for name in names:
        source = getattr(getattr(module, name), "__module__", None)
        for (_, sources), (_, members) in zip(SECTIONS[module_name], sections):
            if source in sources:
                members.append(name)
                break
        else:
            raise ValueError(
                f"{module_name}.{name} comes from {source}, which no section of "
                f"public_api.SECTIONS[{module_name!r}] lists"
            )
    return [(title, members) for title, members in sections if members]


def public_objects():
    """``{short name: [full dotted names]}`` of every documented public name."""
    names = {}
    for module in MODULES:
        for name in public_names(module):
            names.setdefault(name, []).append(f"{module}.{name}")
    return names

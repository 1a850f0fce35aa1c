"""The tagging family: sequence tagging by cross-view training (Clark et al. 2018).

Task (`spec`): ``date_fields``, the field of every token of human-written dates (weekday,
day, month, year, separator), where the order of day and month must be read from the rest of
the sequence. A few labelled sequences and many unlabelled ones train one
`keras_adl.models.cross_view_tagger`; ``--unlabelled off`` trains the same network on the
labels alone, the baseline cross-view training is measured against (``benchmarks/cvt.py``).
The exported SavedModel tags raw strings (`serving`).

Why a family of its own: CVT trains a tagger on labelled and unlabelled text in one run, with
token-level labels and outputs; the contextual family transfers pretrained representations
(ELMo, CoVe) to document classifiers, and shares neither its data nor its training loop.
"""

"""Deprecated alias of `keras_adl.data.text_pairs` (see `keras_adl.tasks`)."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("keras_adl.data.text_pairs")

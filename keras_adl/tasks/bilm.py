"""Deprecated alias of `keras_adl.data.bilm` (see `keras_adl.tasks`)."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("keras_adl.data.bilm")

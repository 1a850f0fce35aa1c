"""Deprecated alias of `keras_adl.data.date_fields` (see `keras_adl.tasks`)."""

import importlib
import sys

sys.modules[__name__] = importlib.import_module("keras_adl.data.date_fields")

"""Deprecated: the data package is `keras_adl.data` (renamed from ``keras_adl.tasks`` in 0.2,
because "task" also names a command-line task and keras-hub's model-with-head).

``keras_adl.tasks`` and ``keras_adl.tasks.<module>`` still import, as aliases of
`keras_adl.data` and its modules, with a ``DeprecationWarning``; they go in the next release.
"""

import warnings

from keras_adl.data import *  # noqa: F401,F403
from keras_adl.data import __all__  # noqa: F401

warnings.warn(
    "keras_adl.tasks is deprecated; import keras_adl.data instead",
    DeprecationWarning,
    stacklevel=2,
)

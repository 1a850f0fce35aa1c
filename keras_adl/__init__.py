"""keras-adl: advanced deep learning architectures for Keras 3 (TensorFlow backend).

Importing the package registers every keras-adl class that can appear in a saved model
(layers, `RecurrentAttentionModel`, the memory losses and metrics) with ``keras.saving``, so
that ``.keras`` files using them load after ``import keras_adl``; see `keras_adl.registry`.

One exception: when the process is the ``keras-adl`` command (or ``python -m keras_adl``),
the registration waits, so that the command can parse and check its arguments before Keras and
TensorFlow load; the command imports `keras_adl.registry` itself before it loads a model.
"""

import os as _os
import sys as _sys

__version__ = "0.1.0"


def _started_as_command():
    """Whether this process is the ``keras-adl`` console script or ``python -m keras_adl``
    (or ``-m keras_adl.cli``), not a program that imports keras_adl."""
    if _os.path.basename(_sys.argv[0] if _sys.argv else "") == "keras-adl":
        return True
    argv = getattr(_sys, "orig_argv", [])
    return any(
        flag == "-m" and module in ("keras_adl", "keras_adl.cli")
        for flag, module in zip(argv, argv[1:])
    )


if not _started_as_command():
    from keras_adl import (  # noqa: F401
        layers,
        ops,
        registry,  # noqa: F401  (registers classes for deserialization)
    )

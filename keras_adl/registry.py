"""Registers every keras-adl class that can appear in a saved model.

Importing this module imports each module whose classes carry
``@keras.saving.register_keras_serializable(package="keras_adl")``: the layers, the model
subclasses (`RecurrentAttentionModel`), the memory losses and metrics that
`compile_memory_model` writes into a compiled model's file, and the `SparseAdam` optimizer
(`keras_adl.training.sparse_adam`, for a user's model with large embeddings; the word2vec
recipe itself trains with Adam or SGD), and `ScaledSchedule` (`keras_adl.training.divergence`:
the learning-rate schedule of a run given ``--learning-rate``). `keras_adl/__init__.py` imports it, so
``import keras_adl`` is all `keras.models.load_model` needs.
"""

from keras_adl import layers, metrics, models, ops  # noqa: F401  (registration side effects)
from keras_adl.training import (
    divergence,  # noqa: F401  (ScaledSchedule: --learning-rate)
    sparse_adam,  # noqa: F401  (registers SparseAdam)
)

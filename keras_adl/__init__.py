"""keras-adl: advanced deep learning architectures for Keras 3 (TensorFlow backend).

Importing the package imports every layer module, which registers each layer with
``keras.saving`` so that ``.keras`` files using them load.
"""

__version__ = "0.1.0"

from keras_adl import layers, ops  # noqa: E402,F401  (registers layers for deserialization)

"""Type aliases used in the annotations of the public API.

Keras 3 has no public type that covers the tensors of every backend, NumPy arrays and symbolic
``KerasTensor`` inputs at once, so `Tensor` is ``Any``: it documents intent, it does not
constrain. This module imports only the standard library and ``keras``, so it loads under the
TensorFlow, JAX and PyTorch backends alike.
"""

from collections.abc import Callable
from typing import Any, TypeAlias

import keras

#: A tensor of the active Keras backend, a NumPy array or a ``keras.KerasTensor`` (symbolic
#: input of a functional model). Keras has no public type covering all three, hence ``Any``.
Tensor: TypeAlias = Any

#: A static shape, as ``tensor.shape`` of a ``KerasTensor``: ``None`` for an unknown dimension.
Shape: TypeAlias = tuple[int | None, ...]

#: A dtype: its name (``"float32"``), a NumPy dtype or a backend's dtype object; anything
#: ``keras.backend.standardize_dtype`` accepts.
DType: TypeAlias = Any

#: An ``initializer`` argument: anything ``keras.initializers.get`` accepts (a name such as
#: ``"glorot_uniform"``, a serialized config, an ``Initializer`` or a callable).
Initializer: TypeAlias = str | dict[str, Any] | keras.initializers.Initializer | Callable[..., Any]

#: A ``regularizer`` argument: anything ``keras.regularizers.get`` accepts, or ``None``.
Regularizer: TypeAlias = (
    str | dict[str, Any] | keras.regularizers.Regularizer | Callable[..., Any] | None
)

#: A ``constraint`` argument: anything ``keras.constraints.get`` accepts, or ``None``.
Constraint: TypeAlias = (
    str | dict[str, Any] | keras.constraints.Constraint | Callable[..., Any] | None
)

#: An ``activation`` argument: a name such as ``"relu"``, a callable, or ``None`` (linear).
Activation: TypeAlias = str | Callable[..., Any] | None

__all__ = ["Activation", "Constraint", "DType", "Initializer", "Regularizer", "Shape", "Tensor"]

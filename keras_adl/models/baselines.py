"""Whole-image baselines of the Recurrent Attention Model paper: a 2-layer MLP and a 2-layer
convnet that see every pixel of the canvas, where the RAM sees a few glimpses.

Mnih et al. (2014) compare the RAM on translated and cluttered MNIST with fully connected
networks of two hidden layers of up to 256 rectified linear units, and with a convolutional
network of two layers: one convolutional layer of 8 filters of 10×10 with stride 5, then a
fully connected layer of 256 rectified linear units, before the softmax. These builders give
those networks for any canvas, so that benchmarks and ``keras-adl train
translated_digits|cluttered_digits --model mlp|convnet`` compare them with the RAM on the same
data and budget.

References:
    Mnih, Heess, Graves, Kavukcuoglu (2014). Recurrent Models of Visual Attention.
    arXiv:1406.6247 (Tables 1 and 2).
"""

import keras

from keras_adl.utils import check_image_shape, check_positive_int, check_positive_ints


def _classifier_head(hidden, num_classes):
    logits = keras.layers.Dense(num_classes, name="classifier")(hidden)
    return keras.layers.Softmax(dtype="float32", name="probabilities")(logits)


def whole_image_mlp(
    image_shape: tuple[int, int, int],
    num_classes: int,
    units: int = 256,
    num_layers: int = 2,
    name: str = "whole_image_mlp",
) -> keras.Model:
    """A fully connected classifier of the whole image: the RAM paper's MLP baseline.

    The image is flattened, then ``num_layers`` dense layers of ``units`` ReLUs and a softmax.

    Args:
        image_shape: ``(H, W, C)``.
        num_classes: number of classes.
        units: width of each hidden layer (the paper: up to 256).
        num_layers: number of hidden layers (the paper: 2).
        name: model name.

    Returns:
        A ``keras.Model`` mapping images ``[B, H, W, C]`` to float32 class probabilities
        ``[B, num_classes]``. Compile it with ``SparseCategoricalCrossentropy()`` and fit on
        ``(images, integer labels)``.

    Example:

    >>> model = whole_image_mlp((32, 32, 1), 10, units=16)
    >>> tuple(model.output.shape), len(model.layers)
    ((None, 10), 6)
    """
    where = "whole_image_mlp: "
    image_shape = check_image_shape(image_shape, where=where)
    check_positive_ints(where=where, num_classes=num_classes, units=units, num_layers=num_layers)
    images = keras.Input(image_shape, name="images")
    hidden = keras.layers.Flatten(name="flatten")(images)
    for index in range(num_layers):
        hidden = keras.layers.Dense(units, activation="relu", name=f"hidden_{index + 1}")(hidden)
    return keras.Model(images, _classifier_head(hidden, num_classes), name=name)


def whole_image_convnet(
    image_shape: tuple[int, int, int],
    num_classes: int,
    filters: int = 8,
    kernel_size: int = 10,
    strides: int = 5,
    units: int = 256,
    name: str = "whole_image_convnet",
) -> keras.Model:
    """A two-layer convolutional classifier of the whole image: the RAM paper's convnet.

    One convolutional layer (``filters`` filters of ``kernel_size × kernel_size``, stride
    ``strides``, no padding, ReLU), a fully connected layer of ``units`` ReLUs, and a softmax.
    The defaults are the paper's: 8 filters of 10×10 with stride 5 and 256 units.

    Args:
        image_shape: ``(H, W, C)``, with ``H, W ≥ kernel_size``.
        num_classes: number of classes.
        filters: the convolutional layer's number of filters.
        kernel_size: the convolutional layer's kernel size.
        strides: the convolutional layer's stride.
        units: width of the fully connected layer.
        name: model name.

    Returns:
        A ``keras.Model`` mapping images ``[B, H, W, C]`` to float32 class probabilities
        ``[B, num_classes]``; compile and fit it as `whole_image_mlp`.

    Raises:
        ValueError: a size is not a positive integer, or the image is smaller than the kernel.

    Example:

    >>> model = whole_image_convnet((60, 60, 1), 10)
    >>> model.get_layer("conv").output.shape  # (60 - 10) / 5 + 1 = 11 positions a side
    (None, 11, 11, 8)
    """
    where = "whole_image_convnet: "
    image_shape = check_image_shape(image_shape, where=where)
    check_positive_ints(
        where=where, num_classes=num_classes, filters=filters, strides=strides, units=units
    )
    check_positive_int("kernel_size", kernel_size, where=where)
    if kernel_size > min(image_shape[:2]):
        raise ValueError(
            f"{where}`kernel_size` must be at most the image's height and width "
            f"{image_shape[:2]}; received {kernel_size}."
        )
    images = keras.Input(image_shape, name="images")
    features = keras.layers.Conv2D(
        filters, kernel_size, strides=strides, activation="relu", name="conv"
    )(images)
    hidden = keras.layers.Flatten(name="flatten")(features)
    hidden = keras.layers.Dense(units, activation="relu", name="hidden")(hidden)
    return keras.Model(images, _classifier_head(hidden, num_classes), name=name)

"""Test configuration: two logical CPUs, seeds, and warnings from our code as errors.

Warnings issued by ``keras_adl`` modules, and the Keras warnings that signal a bug in a layer
(a mask silently dropped, unbuilt state), are turned into errors by ``filterwarnings`` in
``setup.cfg``.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import pytest  # noqa: E402


def pytest_configure(config):
    # Must run before TensorFlow initialises its devices: split the one CPU into two logical
    # devices so that tf.distribute.MirroredStrategy tests have two replicas.
    import tensorflow as tf

    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
    )


@pytest.fixture(autouse=True)
def _seed_and_policy():
    import keras

    keras.utils.set_random_seed(1234)
    keras.config.set_dtype_policy("float32")
    yield
    keras.config.set_dtype_policy("float32")

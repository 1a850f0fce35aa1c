import pytest

from keras_adl.data.image_sources import load_sklearn_digits


@pytest.fixture(scope="module")
def sk_digits():
    """scikit-learn's digits at 16×16: ``(images [1797, 16, 16], labels [1797])``."""
    return load_sklearn_digits(16)

"""The vision family's serving: the image files ``keras-adl predict`` reads."""

import numpy as np
import pytest

from keras_adl.recipes import RecipeError
from keras_adl.recipes.vision.serving import read_images


def test_predict_images_of_the_wrong_kind_are_refused_in_one_line(tmp_path):
    def write(name, array):
        path = str(tmp_path / name)
        np.save(path, array)
        return path

    good = write("good.npy", np.full((8, 8), 255, "uint8"))
    np.testing.assert_allclose(read_images([good], [8, 8, 1]), 1.0)
    unit = write("unit.npy", np.full((8, 8, 1), 0.5, "float64"))
    np.testing.assert_allclose(read_images([unit], [8, 8, 1]), 0.5)
    nan = np.zeros((8, 8), "float32")
    nan[3, 3] = np.nan
    cases = [
        (write("nan.npy", nan), "holds NaN or infinite values"),
        (write("big.npy", np.full((8, 8), 300.0)), "values from 300 to 300; expected"),
        (write("negative.npy", np.full((8, 8), -1.0)), "expected intensities in"),
        (write("text.npy", np.array([["a"] * 8] * 8)), "holds <U1 values; expected a numeric"),
        (write("rgb.npy", np.zeros((8, 8, 3), "uint8")), "has shape [8, 8, 3]; this model reads"),
        (write("size.npy", np.zeros((9, 8), "uint8")), "has shape [9, 8, 1]; this model reads"),
    ]
    (tmp_path / "not.npy").write_bytes(b"not an array")
    cases.append((str(tmp_path / "not.npy"), "is not a NumPy array file"))
    for path, message in cases:
        with pytest.raises(RecipeError) as caught:
            read_images([good, path], [8, 8, 1])
        assert message in str(caught.value) and path in str(caught.value), str(caught.value)
        assert "\n" not in str(caught.value)

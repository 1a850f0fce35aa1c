import numpy as np
import pytest

from keras_adl.conventions import START_VALUE
from keras_adl.data.sorting import sort_arrays


def test_sort_task():
    data = sort_arrays(5, length=6, seed=2)
    values = data["inputs"][..., 0]
    ordered = np.take_along_axis(values, data["target"], 1)
    assert np.all(np.diff(ordered, axis=1) > 0)
    assert np.all(data["decoder_input"][:, 0, 0] == START_VALUE)
    np.testing.assert_array_equal(data["decoder_input"][:, 1:, 0], ordered[:, :-1])
    with pytest.raises(ValueError, match="`length`"):
        sort_arrays(3, length=0)

"""The memory family's tasks as objects: one recipe per task, composed of the family's data,
build, evaluate and serving modules."""

import numpy as np
import pytest

from keras_adl import recipes
from keras_adl.data.algorithmic import GENERATORS
from keras_adl.recipes.memory import data, spec
from keras_adl.recipes.memory.tasks import RECIPES, CopyTask, MemoryTask


def test_every_task_has_its_recipe_and_copy_is_scored_at_longer_lengths():
    assert list(RECIPES) == [task.name for task in spec.FAMILY.tasks]
    for name, recipe in RECIPES.items():
        assert recipes.recipe_for(name) is recipe
        assert isinstance(recipe, MemoryTask) and recipe.spec is spec.FAMILY.task(name)
    assert isinstance(RECIPES["copy"], CopyTask) and RECIPES["copy"].longer_lengths == (30, 50)
    assert all(RECIPES[name].longer_lengths == () for name in list(RECIPES)[1:])


def test_build_model_reads_the_preset_and_its_overrides():
    model = RECIPES["associative_recall"].build_model(
        "dnc", jit_compile=False, memory_size=8, controller_units=8
    )
    (cell,) = [layer.cell for layer in model.layers if hasattr(layer, "cell")]
    assert (cell.memory_size, cell.num_read_heads, cell.memory_init) == (8, 4, "constant")
    assert model.input.shape[-1] == data.dims("associative_recall")[0]
    with pytest.raises(ValueError, match=r"unknown setting\(s\) \['memory_sise'\]"):
        RECIPES["copy"].build_model("ntm", memory_sise=16)


def test_each_use_of_a_task_draws_its_own_sequences():
    held_out = data.held_out("copy")[0]
    development = data.development("copy")[0]
    assert held_out.shape[0] == spec.HELD_OUT and development.shape[0] == 128
    assert not {r.tobytes() for r in held_out} & {r.tobytes() for r in development}
    x, _, w = data.longer("copy", 30)
    assert x.shape[0] == data.LONGER_SEQUENCES and (w.sum(-1) == 30).all()
    # the picture's sequence ends with its last answer step
    full, _, weights = GENERATORS["associative_recall"](1, seed=data.PICTURE_SEED)
    picture = data.picture_inputs("associative_recall")
    steps = int(weights[0].nonzero()[0][-1]) + 1
    np.testing.assert_array_equal(picture, full[:, :steps])

"""The vision family's spec: plain data that loads nothing heavy, one preset per (task, model),
and the layouts that follow the digits' size."""

import subprocess
import sys

from keras_adl.recipes.vision import spec
from keras_adl.recipes.vision.tasks import RECIPES


def test_the_spec_loads_no_numpy_keras_or_tensorflow():
    code = (
        "import sys; sys.orig_argv = [sys.executable, '-m', 'keras_adl']; "
        "import keras_adl.recipes.vision.spec; "
        "print(sorted(m for m in ('numpy', 'keras', 'tensorflow') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "[]", result.stderr[-2000:]


def test_every_model_of_every_task_has_its_preset_the_settings_on_sklearns_digits():
    for name, task in RECIPES.items():
        assert task.spec is spec.FAMILY.task(name)
        assert set(task.spec.presets) == set(task.spec.models)
        for model in task.spec.models:
            assert task.settings(model) == task.spec.preset(model) == task.spec.presets[model]
    assert RECIPES["cluttered_digits"].settings("ram")["num_glimpses"] == 8
    assert RECIPES["digit_strips_glimpses"].settings("dram_random")["policy"] == "random"


def test_layouts_follow_the_digits_size():
    cluttered = spec.CLUTTERED_LAYOUT
    assert (cluttered.of(16)["canvas_size"], cluttered.of(16)["patch_size"]) == (48, 8)
    assert (cluttered.of(28)["canvas_size"], cluttered.of(28)["patch_size"]) == (60, 12)
    assert spec.TRANSLATED_LAYOUT.of(20) == dict(
        canvas_size=60, num_clutter=0, num_glimpses=4, patch_size=8, num_scales=2
    )
    assert RECIPES["cluttered_digits"].settings("ram", 28)["patch_size"] == 12
    assert spec.DRAM_LAYOUT.of(28) == dict(
        patch_size=16, glimpse_filters=(16, 32), context_size=(7, 21)
    )

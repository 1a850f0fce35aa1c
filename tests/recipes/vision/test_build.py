"""The vision family's models as its tasks build them: the learning-rate schedules (the DRAM's
cosine decay over the run, the translated task's for every model) and the layouts that follow the
digits' size."""

import keras
import pytest

from keras_adl.recipes.vision import spec
from keras_adl.recipes.vision.tasks import RECIPES


def _rate(model):
    """The optimizer's learning rate: a schedule, or a float."""
    rate = model.optimizer.get_config()["learning_rate"]
    return keras.optimizers.schedules.deserialize(rate) if isinstance(rate, dict) else rate


def test_dram_rate_decays_over_the_runs_steps():
    task = RECIPES["digit_strips_glimpses"]
    peak = task.settings("dram")["learning_rate"]
    model = task.build_model("dram", 16, jit_compile=False, total_steps=100)
    schedule = _rate(model)
    assert isinstance(schedule, keras.optimizers.schedules.CosineDecay)
    assert float(schedule(0)) == pytest.approx(peak)
    assert float(schedule(50)) == pytest.approx(peak * (0.01 + 0.99 * 0.5), rel=1e-5)
    assert float(schedule(100)) == pytest.approx(peak * 0.01, rel=1e-5)
    # Without the run's length: the task's default epochs over sklearn's training digits.
    default = _rate(task.build_model("dram", 16, jit_compile=False))
    assert default.decay_steps == task.spec.epochs * (
        spec.SKLEARN_TRAIN_DIGITS // task.spec.batch_size
    )


def test_dram_rate_can_be_constant_and_bad_decays_are_named():
    task = RECIPES["digit_strips_glimpses"]
    model = task.build_model("dram", 16, jit_compile=False, learning_rate_decay=None)
    assert _rate(model) == pytest.approx(task.settings("dram")["learning_rate"])
    with pytest.raises(ValueError, match="`learning_rate_decay` must be 'cosine' or None"):
        task.build_model("dram", 16, learning_rate_decay="linear")


def test_ram_keeps_a_constant_rate():
    model = RECIPES["cluttered_digits"].build_model("ram", 16, jit_compile=False)
    assert _rate(model) == pytest.approx(1e-3)


@pytest.mark.parametrize("model_name", spec.RAM_MODELS + spec.BASELINE_MODELS)
def test_translated_digits_models_share_the_tasks_schedule(model_name):
    """Every model of translated_digits trains at Adam 3e-3 decaying along a cosine over the
    run (the RAM's and the baselines' same budget); the cluttered tasks keep a constant 1e-3."""
    translated = RECIPES["translated_digits"]
    settings = translated.settings(model_name)
    assert (settings["learning_rate"], settings["learning_rate_decay"]) == (3e-3, "cosine")
    model = translated.build_model(model_name, 16, jit_compile=False, total_steps=40)
    schedule = _rate(model)
    assert isinstance(schedule, keras.optimizers.schedules.CosineDecay)
    assert float(schedule(0)) == pytest.approx(3e-3)
    assert float(schedule(40)) == pytest.approx(3e-5, rel=1e-5)
    assert translated.spec.epochs == 300
    for task in ("cluttered_digits", "cluttered_digits_100"):
        model = RECIPES[task].build_model(model_name, 16, jit_compile=False)
        assert _rate(model) == pytest.approx(1e-3)
    # the decay can be removed, or given to a task that has none
    constant = translated.build_model(model_name, 16, jit_compile=False, learning_rate_decay=None)
    assert _rate(constant) == pytest.approx(3e-3)
    decayed = RECIPES["cluttered_digits"].build_model(
        model_name, 16, False, total_steps=8, learning_rate_decay="cosine"
    )
    assert float(_rate(decayed)(8)) == pytest.approx(1e-5, rel=1e-5)


def test_dram_layout_depends_on_the_items_size():
    """sklearn's 16-pixel digits: an 8×8 patch and the linear glimpse network; 28-pixel items:
    a 16×16 patch read by two 3×3 convolutions (benchmarks/RESULTS.md, Fashion-MNIST strips)."""
    task = RECIPES["digit_strips_glimpses"]
    small = task.settings("dram", 16)
    assert (small["patch_size"], small["glimpse_filters"], small["context_size"]) == (
        8,
        (),
        (4, 12),
    )
    large = task.settings("dram", 28)
    assert (large["patch_size"], large["glimpse_filters"]) == (16, (16, 32))
    layer = task.build_model("dram", 28, jit_compile=False).get_layer("deep_recurrent_attention")
    assert [conv.filters for conv in layer.glimpse_network.convs] == [16, 32]
    assert layer.patch_size == 16 and layer.context_size == (7, 21)

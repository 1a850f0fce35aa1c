"""The vision recipe's learning-rate schedule (the DRAM's cosine decay over the run)."""

import keras
import pytest

from keras_adl.recipes import vision


def _rate(model):
    """The optimizer's learning rate: a schedule, or a float."""
    rate = model.optimizer.get_config()["learning_rate"]
    return keras.optimizers.schedules.deserialize(rate) if isinstance(rate, dict) else rate


def test_dram_rate_decays_over_the_runs_steps():
    recipe, task = vision.RECIPE, "digit_strips_glimpses"
    peak = recipe.settings(task, "dram")["learning_rate"]
    model = recipe.build_model(task, "dram", 16, jit_compile=False, total_steps=100)
    schedule = _rate(model)
    assert isinstance(schedule, keras.optimizers.schedules.CosineDecay)
    assert float(schedule(0)) == pytest.approx(peak)
    assert float(schedule(50)) == pytest.approx(peak * (0.01 + 0.99 * 0.5), rel=1e-5)
    assert float(schedule(100)) == pytest.approx(peak * 0.01, rel=1e-5)
    # Without the run's length: the task's default epochs over sklearn's training digits.
    default = _rate(recipe.build_model(task, "dram", 16, jit_compile=False))
    spec = recipe.task(task)
    assert default.decay_steps == spec.epochs * (vision.SKLEARN_TRAIN_DIGITS // spec.batch_size)


def test_dram_rate_can_be_constant_and_bad_decays_are_named():
    recipe, task = vision.RECIPE, "digit_strips_glimpses"
    model = recipe.build_model(task, "dram", 16, jit_compile=False, learning_rate_decay=None)
    assert _rate(model) == pytest.approx(recipe.settings(task, "dram")["learning_rate"])
    with pytest.raises(ValueError, match="`learning_rate_decay` must be 'cosine' or None"):
        recipe.build_model(task, "dram", 16, learning_rate_decay="linear")


def test_ram_keeps_a_constant_rate():
    model = vision.RECIPE.build_model("cluttered_digits", "ram", 16, jit_compile=False)
    assert _rate(model) == pytest.approx(1e-3)


@pytest.mark.parametrize("model_name", vision.RAM_MODELS + vision.BASELINE_MODELS)
def test_translated_digits_models_share_the_tasks_schedule(model_name):
    """Every model of translated_digits trains at Adam 3e-3 decaying along a cosine over the
    run (the RAM's and the baselines' same budget); the cluttered tasks keep a constant 1e-3."""
    recipe = vision.RECIPE
    settings = recipe.settings("translated_digits", model_name)
    assert (settings["learning_rate"], settings["learning_rate_decay"]) == (3e-3, "cosine")
    model = recipe.build_model(
        "translated_digits", model_name, 16, jit_compile=False, total_steps=40
    )
    schedule = _rate(model)
    assert isinstance(schedule, keras.optimizers.schedules.CosineDecay)
    assert float(schedule(0)) == pytest.approx(3e-3)
    assert float(schedule(40)) == pytest.approx(3e-5, rel=1e-5)
    assert recipe.task("translated_digits").epochs == 300
    for task in ("cluttered_digits", "cluttered_digits_100"):
        model = recipe.build_model(task, model_name, 16, jit_compile=False)
        assert _rate(model) == pytest.approx(1e-3)
    # the decay can be removed, or given to a task that has none
    constant = recipe.build_model(
        "translated_digits", model_name, 16, jit_compile=False, learning_rate_decay=None
    )
    assert _rate(constant) == pytest.approx(3e-3)
    decayed = recipe.build_model(
        "cluttered_digits", model_name, 16, False, total_steps=8, learning_rate_decay="cosine"
    )
    assert float(_rate(decayed)(8)) == pytest.approx(1e-5, rel=1e-5)


def test_dram_layout_depends_on_the_items_size():
    """sklearn's 16-pixel digits: an 8×8 patch and the linear glimpse network; 28-pixel items:
    a 16×16 patch read by two 3×3 convolutions (benchmarks/RESULTS.md, Fashion-MNIST strips)."""
    recipe, task = vision.RECIPE, "digit_strips_glimpses"
    small = recipe.settings(task, "dram", 16)
    assert (small["patch_size"], small["glimpse_filters"], small["context_size"]) == (
        8,
        (),
        (4, 12),
    )
    large = recipe.settings(task, "dram", 28)
    assert (large["patch_size"], large["glimpse_filters"]) == (16, (16, 32))
    layer = recipe.build_model(task, "dram", 28, jit_compile=False).get_layer(
        "deep_recurrent_attention"
    )
    assert [conv.filters for conv in layer.glimpse_network.convs] == [16, 32]
    assert layer.patch_size == 16 and layer.context_size == (7, 21)


def test_predict_images_of_the_wrong_kind_are_refused_in_one_line(tmp_path):
    import numpy as np

    from keras_adl.recipes import RecipeError
    from keras_adl.recipes.vision import RECIPE as VISION

    def write(name, array):
        path = str(tmp_path / name)
        np.save(path, array)
        return path

    good = write("good.npy", np.full((8, 8), 255, "uint8"))
    np.testing.assert_allclose(VISION.read_images([good], [8, 8, 1]), 1.0)
    unit = write("unit.npy", np.full((8, 8, 1), 0.5, "float64"))
    np.testing.assert_allclose(VISION.read_images([unit], [8, 8, 1]), 0.5)
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
            VISION.read_images([good, path], [8, 8, 1])
        assert message in str(caught.value) and path in str(caught.value), str(caught.value)
        assert "\n" not in str(caught.value)

"""The memory family's presets: one per (task, model), read by the command line, the
benchmark and the HyperModel alike."""

import keras
import pytest

from keras_adl import recipes
from keras_adl.recipes.memory import spec
from keras_adl.recipes.memory.tasks import RECIPES
from tests.scripts import load_script


def test_recall_batches_dnc_16_ntm_2_everywhere(monkeypatch, tmp_path):
    recall = spec.ASSOCIATIVE_RECALL
    assert recall.batch_size_of("dnc") == 16
    assert recall.batch_size_of("ntm") == 2
    assert recall.batch_size_of("lstm") == recall.batch_size == 32
    for task in ("copy", "repeat_copy", "priority_sort"):
        assert spec.FAMILY.task(task).batch_size_of("dnc") == 32
    benchmark = load_script("benchmarks/memory_copy.py")
    args = benchmark.parse_args(["--task", "associative_recall"])
    assert [benchmark.batch_size(args, cell) for cell in spec.MODELS] == [2, 16, 32]
    args = benchmark.parse_args(["--task", "associative_recall", "--batch-size", "8"])
    assert benchmark.batch_size(args, "dnc") == 8

    # the Python API (and so the CLI, which calls it) resolves the model's batch size
    seen = []

    def train(run):
        seen.append((run.model, run.batch_size))
        raise ValueError("stopped before building")

    monkeypatch.setattr(RECIPES["associative_recall"], "train", train)
    for model, batch in (("dnc", None), ("ntm", None), ("dnc", 8)):
        with pytest.raises(ValueError, match="stopped before building"):
            recipes.train("associative_recall", str(tmp_path / model), model, batch_size=batch)
    assert seen == [("dnc", 16), ("ntm", 2), ("dnc", 8)]


def test_dnc_reads_with_one_head_on_copy_and_four_elsewhere():
    def heads(task, model_name):
        small = dict(memory_size=4, controller_units=4)
        model = RECIPES[task].build_model(model_name, jit_compile=False, **small)
        return [layer.cell.num_read_heads for layer in model.layers if hasattr(layer, "cell")]

    assert heads("copy", "dnc") == [1]
    for task in ("repeat_copy", "associative_recall", "priority_sort"):
        assert heads(task, "dnc") == [4]
    assert heads("associative_recall", "ntm") == [1]


def test_memory_learning_rate_depends_on_the_task_for_the_memory_cells_only():
    def rate(task, model_name):
        small = {} if model_name == "lstm" else dict(memory_size=4, controller_units=4)
        model = RECIPES[task].build_model(model_name, jit_compile=False, **small)
        return float(model.optimizer.learning_rate.numpy())

    for cell in ("ntm", "dnc"):
        assert rate("copy", cell) == pytest.approx(spec.COPY_LEARNING_RATE)
    assert rate("associative_recall", "dnc") == pytest.approx(spec.MEMORY_LEARNING_RATE)
    assert rate("associative_recall", "ntm") == pytest.approx(1e-4)  # the NTM's RMSProp preset
    assert rate("repeat_copy", "ntm") == pytest.approx(1e-4)
    assert rate("repeat_copy", "dnc") == pytest.approx(spec.MEMORY_LEARNING_RATE)
    model = RECIPES["repeat_copy"].build_model("ntm", jit_compile=False, controller_units=4)
    assert isinstance(model.optimizer, keras.optimizers.RMSprop)
    assert [layer.cell.memory_size for layer in model.layers if hasattr(layer, "cell")] == [32]
    assert rate("priority_sort", "ntm") == pytest.approx(spec.MEMORY_LEARNING_RATE)
    assert rate("copy", "lstm") == pytest.approx(spec.LSTM["learning_rate"])


def test_every_preset_is_its_models_defaults_with_the_tasks_departures():
    memory = dict(
        controller="lstm",
        controller_units=100,
        memory_size=128,
        memory_width=20,
        num_write_heads=1,
        memory_init="constant",
    )
    ntm = dict(memory, num_read_heads=1, optimizer="adam", learning_rate=3e-3)
    dnc = dict(
        memory,
        num_read_heads=4,
        optimizer="adam",
        learning_rate=3e-3,
        sparse_links=None,
        stop_usage_gradient=True,
    )
    lstm = dict(lstm_units=256, lstm_layers=3, optimizer="adam", learning_rate=1e-3)
    rmsprop = dict(optimizer="rmsprop", learning_rate=1e-4)
    expected = {
        "copy": {
            "ntm": dict(ntm, learning_rate=5e-3),
            "dnc": dict(dnc, num_read_heads=1, learning_rate=5e-3),
            "lstm": lstm,
        },
        "repeat_copy": {"ntm": dict(ntm, memory_size=32, **rmsprop), "dnc": dnc, "lstm": lstm},
        "associative_recall": {"ntm": dict(ntm, **rmsprop), "dnc": dnc, "lstm": lstm},
        "priority_sort": {"ntm": ntm, "dnc": dnc, "lstm": lstm},
    }
    assert [task.name for task in spec.FAMILY.tasks] == list(expected) == list(RECIPES)
    for task in spec.FAMILY.tasks:
        assert task.models == spec.MODELS == ("ntm", "dnc", "lstm")
        for model in task.models:
            # the same values in the same order (run.json records them)
            assert list(task.preset(model).items()) == list(expected[task.name][model].items())
        assert task.preset("ntm") is not task.presets["ntm"]  # a copy the caller may change
    assert spec.MODEL_DEFAULTS == {"ntm": ntm, "dnc": dnc, "lstm": lstm}

"""The CLI, the example and the benchmark of each family train the same model.

For each family, the model ``keras-adl train TASK`` builds (the call of the recipe's ``train``),
the example's ``build_model(parse_args([]))`` and the benchmark's ``build_model(parse_args(…))``
have the same architecture (``get_config()``), optimizer (learning rate, clip norm), loss and
XLA setting. A script's declared departures (``OVERRIDES``) are compared against the recipe
built with them, and must all be recipe settings. Models are built, never trained.
"""

import importlib.util
import os

import keras
import numpy as np
import pytest

from keras_adl import recipes
from keras_adl.recipes import memory, sequences, vision
from keras_adl.recipes.documents.tasks import RECIPES as DOCUMENTS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_script(relative_path):
    path = os.path.join(ROOT, relative_path)
    name = "script_" + relative_path.replace("/", "_")[:-3]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def summary(build, *args, **kwargs):
    """What must agree between two compiled models. Layer names carry session counters, so
    each model is built in a fresh session."""
    keras.backend.clear_session()
    model = build(*args, **kwargs)
    loss = model.loss.get_config() if hasattr(model.loss, "get_config") else model.loss
    return {
        "model": model.get_config(),
        "optimizer": model.optimizer.get_config(),
        "loss": loss,
        "jit_compile": model.jit_compile,
    }


def assert_same(actual, expected):
    for key in expected:
        assert actual[key] == expected[key], key


def assert_recipe_settings(overrides, recipe, task, model_name):
    assert overrides and set(overrides) <= set(recipe.settings(task, model_name))


def default_model(recipe, task):
    return recipe.task(task).models[0]


# -- sequences -------------------------------------------------------------------------------


@pytest.mark.slow  # builds full-size models, 5-13 s; make test keeps its 8 minutes
def test_sequences_cli_example_and_benchmark_agree():
    recipe, task = sequences.RECIPE, "dates"
    model_name = default_model(recipe, task)
    cli = summary(recipe.build_model, task, model_name, jit_compile=True)  # as recipe.train

    example = load_script("examples/seq2seq_dates.py")
    assert (example.TASK, example.MODEL) == (task, model_name)
    assert_same(summary(example.build_model, example.parse_args([])), cli)

    # The benchmark reverses strings of its own 26 letters: the recipe's `pairs` build with
    # the dates settings. That build, at the dates vocabularies, is the CLI's model...
    from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB

    benchmark = load_script("benchmarks/attention_vs_length.py")
    assert benchmark.SETTINGS_OF == task and benchmark.MODELS[0] == model_name
    dates_settings = recipe.settings(task, model_name)
    assert_same(
        summary(
            recipe.build_model,
            "pairs",
            model_name,
            len(SOURCE_VOCAB),
            len(TARGET_VOCAB),
            **dates_settings,
        ),
        cli,
    )
    # ... and at the benchmark's vocabulary, the benchmark's model.
    size = len(benchmark.VOCAB)
    assert_same(
        summary(benchmark.build_model, benchmark.parse_args([])),
        summary(recipe.build_model, "pairs", model_name, size, size, **dates_settings),
    )
    assert set(benchmark.SMOKE) - {"train", "epochs"} <= set(dates_settings)


# -- memory ----------------------------------------------------------------------------------


@pytest.mark.slow  # builds full-size models, 5-13 s; make test keeps its 8 minutes
def test_memory_cli_example_and_benchmarks_agree():
    recipe, task = memory.RECIPE, "copy"
    model_name = default_model(recipe, task)
    cli = summary(recipe.build_model, task, model_name, jit_compile=True)

    example = load_script("examples/ntm_copy.py")
    assert (example.TASK, example.MODEL) == (task, model_name)
    assert_recipe_settings(example.OVERRIDES, recipe, task, model_name)
    assert_same(
        summary(example.build_model, example.parse_args([])),
        summary(recipe.build_model, task, model_name, **example.OVERRIDES),
    )
    assert_same(summary(example.build_model, example.parse_args(["--recipe"])), cli)

    copy_benchmark = load_script("benchmarks/memory_copy.py")
    args = copy_benchmark.parse_args([])
    assert args.task == task and args.cells[0] == model_name
    assert copy_benchmark.batch_size(args, model_name) == recipe.task(task).batch_size_of(
        model_name
    )
    assert_same(summary(copy_benchmark.build_model, args), cli)

    speed_benchmark = load_script("benchmarks/memory_speed.py")
    assert speed_benchmark.TASK == task
    assert_same(summary(speed_benchmark.build_model, speed_benchmark.parse_args([])), cli)
    assert_recipe_settings(speed_benchmark.SMOKE_OVERRIDES, recipe, task, model_name)


def test_memory_benchmark_set_reaches_the_memory_cells_only():
    benchmark = load_script("benchmarks/memory_copy.py")
    args = benchmark.parse_args(
        ["--cells", "dnc", "--set", "num_read_heads=2", "controller_units=8", "--memory-size", "8"]
    )
    assert args.set == [("num_read_heads", 2), ("controller_units", 8)]
    dnc = benchmark.build_model(args, "dnc")
    heads = [layer.cell.num_read_heads for layer in dnc.layers if hasattr(layer, "cell")]
    assert heads == [2]
    lstm = benchmark.build_model(args, "lstm")  # --set is the memory cells'
    assert lstm.count_params() == memory.RECIPE.build_model("copy", "lstm").count_params()
    with pytest.raises(ValueError, match="unknown setting.*num_heads"):
        benchmark.build_model(benchmark.parse_args(["--set", "num_heads=1"]), "ntm")


def test_memory_benchmark_clip_and_warmup(capsys):
    benchmark = load_script("benchmarks/memory_copy.py")
    small = ["--memory-size", "8", "--set", "controller_units=8"]
    plain = benchmark.build_model(benchmark.parse_args(small), "ntm").optimizer
    assert plain.global_clipnorm == memory.CLIPNORM
    args = benchmark.parse_args(
        ["--task", "priority_sort", "--clipnorm", "10", "--warmup-sequences", "3200"] + small
    )
    optimizer = benchmark.build_model(args, "ntm").optimizer
    assert optimizer.global_clipnorm == 10.0
    peak = memory.RECIPE.settings("priority_sort", "ntm")["learning_rate"]
    schedule = optimizer._learning_rate  # 3200 sequences = 100 steps of 32, then constant
    rates = [float(schedule(step)) for step in (0, 50, 100, 1000)]
    np.testing.assert_allclose(rates, [0.0, peak / 2, peak, peak], rtol=1e-6)
    args = benchmark.parse_args(["--warmup-sequences", "3200", "--learning-rate", "1e-3"] + small)
    optimizer = benchmark.build_model(args, "dnc").optimizer
    assert optimizer.global_clipnorm == memory.CLIPNORM
    assert float(optimizer._learning_rate(10_000)) == pytest.approx(1e-3)
    # the warm-up counts the cell's own batches (on recall the DNC's 16, the NTM's 2), and a
    # rate given by --set survives the re-compilation
    rate = ["--memory-size", "8", "--set", "learning_rate=1e-3", "controller_units=8"]
    args = benchmark.parse_args(
        ["--task", "associative_recall", "--warmup-sequences", "3200"] + rate
    )
    schedule = benchmark.build_model(args, "dnc").optimizer._learning_rate  # 200 steps of 16
    np.testing.assert_allclose([float(schedule(s)) for s in (100, 200)], [5e-4, 1e-3], rtol=1e-6)
    optimizer = benchmark.build_model(args, "ntm").optimizer  # the recipe's RMSProp, 1600 steps
    assert isinstance(optimizer, keras.optimizers.RMSprop)
    np.testing.assert_allclose(
        [float(optimizer._learning_rate(s)) for s in (800, 1600)], [5e-4, 1e-3], rtol=1e-6
    )
    args = benchmark.parse_args(["--clipnorm", "10"] + rate)
    optimizer = benchmark.build_model(args, "ntm").optimizer
    assert float(optimizer.learning_rate) == pytest.approx(1e-3)
    assert optimizer.global_clipnorm == 10.0
    for bad, message in (
        (
            ["--task", "associative_recall", "--cells", "dnc", "ntm", "--clipnorm", "10"],
            "on associative_recall, ntm trains with RMSProp",
        ),
        (["--set", "optimizer=sgd"], "--set optimizer must be one of ['adam', 'rmsprop']"),
        (["--clipnorm", "0"], "--clipnorm must be positive; received 0.0"),
        (["--warmup-sequences", "0"], "--warmup-sequences must be at least 1; received 0"),
        (["--warmup-sequences", "10", "--tail-rate", "0.3", "2"], "cannot follow"),
        (["--optimizer", "rmsprop", "--clipnorm", "10"], "clips each gradient"),
    ):
        with pytest.raises(SystemExit):
            benchmark.parse_args(bad)
        assert message in capsys.readouterr().err


def test_memory_controller_and_write_heads_are_recipe_settings():
    benchmark = load_script("benchmarks/memory_copy.py")
    args = benchmark.parse_args(
        [
            "--set",
            "controller=dense",
            "num_write_heads=2",
            "controller_units=8",
            "--memory-size",
            "8",
        ]
    )
    for cell in ("ntm", "dnc"):
        assert memory.RECIPE.settings("copy", cell)["controller"] == "lstm"
        assert memory.RECIPE.settings("copy", cell)["num_write_heads"] == 1
        model = benchmark.build_model(args, cell)
        (layer,) = [layer for layer in model.layers if hasattr(layer, "cell")]
        assert (layer.cell.controller, layer.cell.num_write_heads) == ("dense", 2)
        assert "controller_h" not in layer.cell.state_names  # a feed-forward controller
    # converged = < 0.1 bit errors per sequence on every task (issue 19's criterion)
    assert benchmark.parse_args(["--task", "associative_recall"]).criterion == "bit_errors"


def test_recall_batches_dnc_16_ntm_2_everywhere(monkeypatch, tmp_path):
    recall = memory.RECIPE.task("associative_recall")
    assert recall.batch_size_of("dnc") == 16
    assert recall.batch_size_of("ntm") == 2
    assert recall.batch_size_of("lstm") == recall.batch_size == 32
    for task in ("copy", "repeat_copy", "priority_sort"):
        assert memory.RECIPE.task(task).batch_size_of("dnc") == 32
    benchmark = load_script("benchmarks/memory_copy.py")
    args = benchmark.parse_args(["--task", "associative_recall"])
    assert [benchmark.batch_size(args, cell) for cell in memory.MEMORY_MODELS] == [2, 16, 32]
    args = benchmark.parse_args(["--task", "associative_recall", "--batch-size", "8"])
    assert benchmark.batch_size(args, "dnc") == 8

    # the Python API (and so the CLI, which calls it) resolves the model's batch size
    seen = []

    def train(run):
        seen.append((run.model, run.batch_size))
        raise ValueError("stopped before building")

    monkeypatch.setattr(memory.RECIPE, "train", train)
    for model, batch in (("dnc", None), ("ntm", None), ("dnc", 8)):
        with pytest.raises(ValueError, match="stopped before building"):
            recipes.train("associative_recall", str(tmp_path / model), model, batch_size=batch)
    assert seen == [("dnc", 16), ("ntm", 2), ("dnc", 8)]


def test_dnc_reads_with_one_head_on_copy_and_four_elsewhere():
    def heads(task, model_name):
        small = dict(memory_size=4, controller_units=4)
        model = memory.RECIPE.build_model(task, model_name, jit_compile=False, **small)
        return [layer.cell.num_read_heads for layer in model.layers if hasattr(layer, "cell")]

    assert heads("copy", "dnc") == [1]
    for task in ("repeat_copy", "associative_recall", "priority_sort"):
        assert heads(task, "dnc") == [4]
    assert heads("associative_recall", "ntm") == [1]


def test_memory_learning_rate_depends_on_the_task_for_the_memory_cells_only():
    def rate(task, model_name):
        small = {} if model_name == "lstm" else dict(memory_size=4, controller_units=4)
        model = memory.RECIPE.build_model(task, model_name, jit_compile=False, **small)
        return float(model.optimizer.learning_rate.numpy())

    for cell in ("ntm", "dnc"):
        assert rate("copy", cell) == pytest.approx(memory.TASK_LEARNING_RATES["copy"])
    assert rate("associative_recall", "dnc") == pytest.approx(memory.MEMORY_LEARNING_RATE)
    assert rate("associative_recall", "ntm") == pytest.approx(1e-4)  # NTM_TASK_SETTINGS
    assert rate("repeat_copy", "ntm") == pytest.approx(1e-4)
    assert rate("repeat_copy", "dnc") == pytest.approx(memory.MEMORY_LEARNING_RATE)
    model = memory.RECIPE.build_model("repeat_copy", "ntm", jit_compile=False, controller_units=4)
    assert isinstance(model.optimizer, keras.optimizers.RMSprop)
    assert [layer.cell.memory_size for layer in model.layers if hasattr(layer, "cell")] == [32]
    assert rate("priority_sort", "ntm") == pytest.approx(memory.MEMORY_LEARNING_RATE)
    assert rate("copy", "lstm") == pytest.approx(memory.SETTINGS["lstm"]["learning_rate"])


# -- vision ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def digit_size():
    (train_x, _), _ = vision.load_digits(None)  # as recipe.train, without --data
    return int(train_x.shape[1])


@pytest.mark.slow  # builds full-size models, 5-13 s; make test keeps its 8 minutes
def test_vision_ram_cli_example_and_benchmark_agree(digit_size):
    recipe, task = vision.RECIPE, "translated_digits"
    model_name = default_model(recipe, task)
    cli = summary(recipe.build_model, task, model_name, digit_size, jit_compile=True)

    example = load_script("examples/ram_digits.py")
    args = example.parse_args([])
    assert example.TASK == task and example.MODELS[args.policy] == model_name
    assert args.epochs == recipe.task(task).epochs
    assert_same(summary(example.build_model, args), cli)

    benchmark = load_script("benchmarks/ram_digits.py")
    args = benchmark.parse_args([])
    assert benchmark.SETTINGS[args.settings[0]][0] == task
    assert_same(summary(benchmark.build_model, args), cli)


def test_vision_benchmark_overrides_reach_the_model(digit_size):
    benchmark = load_script("benchmarks/ram_digits.py")
    args = benchmark.parse_args(
        ["--set", "num_scales=3", "location_std=0.05", "policy_gradient_to_core=true", "--decay"]
    )
    assert args.set == [
        ("num_scales", 3),
        ("location_std", 0.05),
        ("policy_gradient_to_core", True),
    ]
    args.total_steps = 100
    model = benchmark.build_model(args, "cluttered", "ram", 0, digit_size)
    layer = model.get_layer("recurrent_attention")
    assert (layer.num_scales, layer.location_std, layer.policy_gradient_to_core) == (3, 0.05, True)
    schedule = keras.optimizers.schedules.deserialize(model.optimizer.get_config()["learning_rate"])
    assert isinstance(schedule, keras.optimizers.schedules.CosineDecay)
    assert float(schedule(0)) == pytest.approx(1e-3)  # the cluttered task's rate, decayed
    assert float(schedule(100)) == pytest.approx(1e-5)  # to 1% of it over the run
    # --set is the RAM's; the baselines take --baseline-set; both keep the task's schedule
    args = benchmark.parse_args(["--set", "learning_rate=0.01", "--baseline-set", "units=32"])
    args.total_steps = 50
    mlp = benchmark.build_model(args, "translated", "mlp", 0, digit_size)
    assert [layer.units for layer in mlp.layers if hasattr(layer, "units")] == [32, 32, 10]
    schedule = keras.optimizers.schedules.deserialize(mlp.optimizer.get_config()["learning_rate"])
    assert float(schedule(0)) == pytest.approx(3e-3) and float(schedule(50)) == pytest.approx(3e-5)
    ram = benchmark.build_model(args, "translated", "ram", 0, digit_size)
    schedule = keras.optimizers.schedules.deserialize(ram.optimizer.get_config()["learning_rate"])
    assert float(schedule(0)) == pytest.approx(0.01)
    # the translated task's decay removed: a constant rate
    args = benchmark.parse_args(
        ["--baseline-set", "learning_rate=0.001", "learning_rate_decay=none"]
    )
    mlp = benchmark.build_model(args, "translated", "mlp", 0, digit_size)
    assert float(mlp.optimizer.learning_rate) == pytest.approx(1e-3)
    with pytest.raises(ValueError, match="unknown setting.*num_scale"):
        benchmark.build_model(
            benchmark.parse_args(["--set", "num_scale=2"]), "translated", "ram", 0, digit_size
        )
    with pytest.raises(SystemExit):
        benchmark.parse_args(["--set", "num_scales"])


@pytest.mark.slow  # builds full-size models; make test keeps its 8 minutes
def test_vision_dram_cli_example_and_benchmark_agree(digit_size):
    recipe, task = vision.RECIPE, "digit_strips_glimpses"
    model_name = default_model(recipe, task)
    cli = summary(recipe.build_model, task, model_name, digit_size, jit_compile=True)

    example = load_script("examples/dram_strips.py")
    args = example.parse_args([])
    assert example.TASK == task and example.MODELS[args.policy] == model_name
    # the example's declared departure, its epochs, sets the length of the rate's decay
    steps = example.EPOCHS * (vision.SKLEARN_TRAIN_DIGITS // recipe.task(task).batch_size)
    cli_at_example_epochs = summary(
        recipe.build_model, task, model_name, digit_size, jit_compile=True, total_steps=steps
    )
    assert_same(summary(example.build_model, args), cli_at_example_epochs)
    assert cli_at_example_epochs["optimizer"] != cli["optimizer"]

    benchmark = load_script("benchmarks/dram_strips.py")
    args = benchmark.parse_args([])
    assert benchmark.TASK == task
    assert_same(summary(benchmark.build_model, args), cli)
    # with --data, strips of 28-pixel items (the run's length sets the decay's)
    assert_same(
        summary(benchmark.build_model, args, steps=4000, digit_size=28),
        summary(recipe.build_model, task, model_name, 28, jit_compile=True, total_steps=4000),
    )


def test_dram_benchmark_sets_tuples_and_the_glimpse_convolutions(digit_size):
    benchmark = load_script("benchmarks/dram_strips.py")
    args = benchmark.parse_args(
        [
            "--set",
            "glimpse_filters=4,6",
            "units=8",
            "glimpse_output_units=8",
            "context_filters=2,2,2",
        ]
    )
    assert args.set[0] == ("glimpse_filters", (4, 6))
    model = benchmark.build_model(args, digit_size=digit_size)
    layer = model.get_layer("deep_recurrent_attention")
    assert layer.glimpse_filters == (4, 6) and layer.context_filters == (2, 2, 2)
    assert [conv.filters for conv in layer.glimpse_network.convs] == [4, 6]
    assert vision.RECIPE.settings("digit_strips_glimpses", "dram")["glimpse_filters"] == ()
    args = benchmark.parse_args(["--set", "glimpse_filters=()"])
    assert args.set == [("glimpse_filters", ())]


@pytest.mark.slow  # builds full-size models, 5-13 s; make test keeps its 8 minutes
def test_vision_captioning_cli_example_and_benchmark_agree(digit_size):
    recipe, task = vision.RECIPE, "digit_strips"
    model_name = default_model(recipe, task)
    cli = summary(recipe.build_model, task, model_name, digit_size, jit_compile=True)

    example = load_script("examples/caption_digits.py")
    assert (example.TASK, example.MODEL) == (task, model_name)
    assert_same(summary(example.build_model, example.parse_args([])), cli)

    benchmark = load_script("benchmarks/captioning.py")
    assert (benchmark.TASK, benchmark.MODEL) == (task, model_name)
    assert_same(summary(benchmark.build_model, benchmark.parse_args([])), cli)
    assert_same(
        summary(benchmark.build_model, benchmark.parse_args([]), digit_size=28),
        summary(recipe.build_model, task, model_name, 28, jit_compile=True),
    )


# -- documents -------------------------------------------------------------------------------


@pytest.mark.slow  # builds full-size models, 5-13 s; make test keeps its 8 minutes
def test_documents_cli_example_and_benchmark_agree():
    task = DOCUMENTS["needle"]
    model_name = task.spec.models[0]
    # As the task's train: its documents and their tokenizer give the vocabulary.
    documents = task.documents(None, task.spec.samples)
    tokenizer = task.tokenizer(documents.train_docs)
    cli = summary(
        task.build_model,
        model_name,
        tokenizer.vocabulary_size,
        len(documents.class_names),
        jit_compile=True,
    )

    example = load_script("examples/han_documents.py")
    args = example.parse_args([])
    assert args.task == task.name and example.MODEL == model_name
    assert_same(summary(example.build_model, args), cli)

    benchmark = load_script("benchmarks/han.py")
    assert benchmark.MODEL == model_name
    assert_same(summary(benchmark.build_model, benchmark.parse_args([])), cli)
    assert benchmark.QUICK_OVERRIDES
    assert set(benchmark.QUICK_OVERRIDES) <= set(task.spec.preset(model_name))


def test_memory_benchmark_curriculum_grows_copy_lengths_and_recall_items():
    benchmark = load_script("benchmarks/memory_copy.py")
    full = {
        task: benchmark.GENERATORS[task](1, seed=0)[0].shape[1]
        for task in ("copy", "associative_recall")
    }
    recall = benchmark.Curriculum("associative_recall", 3, seed=0)
    x, y, w = recall.batch(64)
    assert x.shape[1] == y.shape[1] == w.shape[1] == full["associative_recall"]
    assert set(recall.sizes(x, w)) == {2, 3}  # item counts 2..L
    xv, _, wv = benchmark.GENERATORS["associative_recall"](200, seed=1)
    assert set(recall.sizes(xv, wv)) == {2, 3, 4, 5, 6}
    copy = benchmark.Curriculum("copy", 5, seed=0)
    x, y, w = copy.batch(64)
    assert x.shape[1] == full["copy"] and max(copy.sizes(x, w)) == 5
    # Repeat copy: lengths and repeat counts 1..L, padded to the full 1-10 x 1-10 episode;
    # an episode's size is the larger of its length and its repeat count.
    repeat = benchmark.Curriculum("repeat_copy", 3, seed=0)
    x, y, w = repeat.batch(64)
    assert x.shape[1] == benchmark.GENERATORS["repeat_copy"](1, seed=0)[0].shape[1] == 112
    assert set(repeat.sizes(x, w)) == {1, 2, 3}
    one = [benchmark.repeat_copy_batch(1, n, n, r, r, seed=0) for n, r in ((2, 7), (6, 3))]
    assert [int(repeat.sizes(a[0], a[2])[0]) for a in one] == [7, 6]

    xv, yv, wv = benchmark.GENERATORS["associative_recall"](64, seed=1)
    items = xv[:, :, -2].sum(-1)

    class RightUpTo:  # answers the held-out episodes of at most `most` items right
        def __init__(self, most):
            self.most = most

        def predict(self, x, batch_size=None, verbose=0):
            right = (items <= self.most)[:, None, None]
            return np.where((yv > 0.5) == right, 1.0, -1.0)

    recall.update(RightUpTo(2), xv, yv, wv)  # the 3-item episodes wrong: L stays
    assert recall.length == 3 and recall.short_errors > 0.5
    recall.update(RightUpTo(3), xv, yv, wv)  # every episode of <= 3 items right: L grows
    assert (recall.length, recall.short_errors) == (4, 0.0)
    for _ in range(5):
        recall.update(RightUpTo(6), xv, yv, wv)
    assert recall.length == 6  # never beyond the task's largest episodes
    copy_batch_padded = benchmark.copy_batch(4, 1, 5, seed=np.random.default_rng(0))
    padded = [
        np.pad(a, [(0, 0), (0, full["copy"] - a.shape[1])] + [(0, 0)] * (a.ndim - 2))
        for a in copy_batch_padded
    ]
    for got, want in zip(benchmark.Curriculum("copy", 5, seed=0).batch(4), padded):
        np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="start.*2..6.*received 1"):
        benchmark.Curriculum("associative_recall", 1)
    assert (
        benchmark.parse_args(["--task", "associative_recall", "--curriculum", "3"]).curriculum == 3
    )
    assert benchmark.parse_args(["--task", "repeat_copy", "--curriculum", "3"]).curriculum == 3
    for task, start in (
        ("repeat_copy", 11),
        ("priority_sort", 3),
        ("associative_recall", 1),
        ("associative_recall", 7),
        ("copy", 21),
    ):
        with pytest.raises(SystemExit):
            benchmark.parse_args(["--task", task, "--curriculum", str(start)])


def test_memory_benchmark_tail_rate_drops_adams_rate_once():
    benchmark = load_script("benchmarks/memory_copy.py")
    recipe_rate = memory.RECIPE.settings("copy", "ntm")["learning_rate"]
    small = [
        "--cells",
        "ntm",
        "--memory-size",
        "4",
        "--set",
        "controller_units=8",
        "memory_width=4",
    ]
    small += ["--max-sequences", "192", "--eval-every", "2", "--no-jit"]

    def rate(model):
        return float(keras.ops.convert_to_numpy(model.optimizer.learning_rate))

    model, result = benchmark.run(
        "ntm", 0, benchmark.parse_args(small + ["--tail-rate", "0.3", "1e9"])
    )
    # Below 1e9 bit errors at the first evaluation (64 sequences): dropped there, and only there
    # (three evaluations).
    assert result["rate_dropped_at"] == 64 and result["converged_at"] is None
    assert rate(model) == pytest.approx(0.3 * recipe_rate)
    # A level the untrained model never reaches: no drop.
    model, result = benchmark.run(
        "ntm", 0, benchmark.parse_args(small + ["--tail-rate", "0.3", "1e-6"])
    )
    assert result["rate_dropped_at"] is None
    assert rate(model) == pytest.approx(recipe_rate)
    for bad in (["0", "2"], ["1.5", "2"], ["0.3", "0"], ["-1", "2"]):
        with pytest.raises(SystemExit):
            benchmark.parse_args(["--tail-rate", *bad])


def test_memory_init_is_a_recipe_setting():
    benchmark = load_script("benchmarks/memory_copy.py")
    args = benchmark.parse_args(["--set", "memory_init=learned", "--memory-size", "8"])
    for cell in ("ntm", "dnc"):
        assert memory.RECIPE.settings("copy", cell)["memory_init"] == "constant"
        (layer,) = [la for la in benchmark.build_model(args, cell).layers if hasattr(la, "cell")]
        assert layer.cell.memory_init == "learned"


def test_pretraining_benchmark_linear_probe_trains_the_classifier_alone(capsys):
    import tensorflow as tf

    from keras_adl.recipes.pretraining import RECIPE as PRETRAINING

    benchmark = load_script("benchmarks/pretraining.py")
    model = PRETRAINING.build_model(
        "finetune",
        "bert",
        50,
        num_classes=3,
        total_steps=10,
        jit_compile=False,
        model_dim=8,
        num_heads=2,
        intermediate_dim=16,
        num_layers=1,
    )
    ids = np.random.default_rng(0).integers(1, 50, (16, 64)).astype("int32")
    inputs = {k: ids if k == "token_ids" else np.zeros_like(ids) for k in model.input}
    labels = np.random.default_rng(1).integers(0, 3, 16)
    data = tf.data.Dataset.from_tensor_slices((inputs, labels)).batch(8).repeat()
    flags = [v.trainable for v in model.weights]
    before = [v.numpy().copy() for v in model.weights]
    benchmark.linear_probe(model, data, steps=2, epochs=1)
    changed = [v.path for v, b in zip(model.weights, before) if not np.array_equal(v.numpy(), b)]
    assert changed == ["classifier/kernel", "classifier/bias"]
    assert [v.trainable for v in model.weights] == flags  # the embedding's output bias too
    assert not model.optimizer.built  # the recipe's schedule starts at the fine-tuning
    facts = benchmark.train_for(model, data, minutes=10, steps_cap=4, report_every=2)
    assert facts["steps"] == 4
    assert capsys.readouterr().out.count("over the last 2 steps") == 2


def test_pretraining_benchmark_refuses_fewer_than_one_window(capsys):
    benchmark = load_script("benchmarks/pretraining.py")
    with pytest.raises(SystemExit):
        benchmark.main(["--windows", "0"])
    assert "--windows must be 1 or more windows; received 0" in capsys.readouterr().err


def test_memory_benchmark_optimizer():
    """The recipe's optimiser per cell (RMSProp for the NTM on recall, at batch 2), and
    --optimizer replacing it at that optimiser's own default rate; evaluations every 25 steps
    and at least 400 sequences."""
    benchmark = load_script("benchmarks/memory_copy.py")
    small = ["--memory-size", "8", "--set", "controller_units=8"]
    args = benchmark.parse_args(["--task", "associative_recall"] + small)
    model = benchmark.build_model(args, "ntm")
    optimizer = model.optimizer
    assert isinstance(optimizer, keras.optimizers.RMSprop)
    assert (optimizer.rho, optimizer.momentum, optimizer.clipvalue) == (0.95, 0.9, 10.0)
    assert optimizer.global_clipnorm is None
    assert float(optimizer.learning_rate) == pytest.approx(1e-4)
    assert benchmark.batch_size(args, "ntm") == 2
    assert [benchmark.eval_every(args, b) for b in (32, 16, 8, 1)] == [25, 25, 50, 400]
    assert model.loss.name == "sequence_bit_cross_entropy"
    x, y, w = benchmark.GENERATORS["associative_recall"](4, seed=0)
    model.train_on_batch(x, y, sample_weight=w)  # the clipped RMSProp step runs
    assert int(model.optimizer.iterations) == 1
    adam = benchmark.build_model(
        benchmark.parse_args(["--task", "associative_recall", "--optimizer", "adam"] + small)
    ).optimizer
    assert isinstance(adam, keras.optimizers.Adam)
    assert float(adam.learning_rate) == pytest.approx(memory.MEMORY_LEARNING_RATE)
    args = benchmark.parse_args(small + ["--optimizer", "rmsprop"])  # copy: Adam 5e-3 otherwise
    assert isinstance(benchmark.build_model(args, "dnc").optimizer, keras.optimizers.RMSprop)
    assert benchmark.learning_rate(args, "dnc") == pytest.approx(1e-4)
    args = benchmark.parse_args(small + ["--optimizer", "rmsprop", "--learning-rate", "3e-4"])
    assert float(benchmark.build_model(args, "ntm").optimizer.learning_rate) == pytest.approx(3e-4)
    # --set optimizer= is the memory cells' setting, as --optimizer; the LSTM keeps Adam
    args = benchmark.parse_args(["--task", "associative_recall", "--set", "optimizer=adam"])
    assert benchmark.optimizer_of(args, "ntm") == "adam"
    assert benchmark.learning_rate(args, "ntm") == pytest.approx(memory.MEMORY_LEARNING_RATE)
    assert benchmark.optimizer_of(args, "lstm") == "adam"
    args = benchmark.parse_args(["--optimizer", "rmsprop"])
    assert isinstance(benchmark.build_model(args, "lstm").optimizer, keras.optimizers.RMSprop)
    assert benchmark.learning_rate(args, "lstm") == pytest.approx(1e-4)

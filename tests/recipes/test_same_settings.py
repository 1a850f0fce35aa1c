"""The CLI, the example and the benchmark of each family train the same model.

For each family, the model ``keras-adl train TASK`` builds (the call of the recipe's ``train``),
the example's ``build_model(parse_args([]))`` and the benchmark's ``build_model(parse_args(…))``
have the same architecture (``get_config()``), optimizer (learning rate, clip norm), loss and
XLA setting. A script's declared departures (``OVERRIDES``) are compared against the recipe
built with them, and must all be recipe settings. Models are built, never trained.
"""

import keras
import pytest

from keras_adl.recipes.documents.tasks import RECIPES as DOCUMENTS
from keras_adl.recipes.memory.tasks import RECIPES as MEMORY
from keras_adl.recipes.sequences.tasks import RECIPES as SEQUENCES
from keras_adl.recipes.vision.data import load_digits
from keras_adl.recipes.vision.spec import SKLEARN_TRAIN_DIGITS
from keras_adl.recipes.vision.tasks import RECIPES as VISION
from tests.scripts import load_script


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
    task = SEQUENCES["dates"]
    model_name = task.spec.models[0]
    cli = summary(task.build_model, model_name, jit_compile=True)  # as the task's build

    example = load_script("examples/seq2seq_dates.py")
    assert (example.TASK, example.MODEL) == (task.name, model_name)
    assert_same(summary(example.build_model, example.parse_args([])), cli)

    # The benchmark reverses strings of its own 26 letters: the `pairs` build with the dates
    # preset. That build, at the dates vocabularies, is the CLI's model...
    from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB

    benchmark = load_script("benchmarks/attention_vs_length.py")
    assert benchmark.SETTINGS_OF == task.name and benchmark.MODELS[0] == model_name
    dates_settings = task.spec.preset(model_name)
    pairs = SEQUENCES["pairs"]
    assert_same(
        summary(
            pairs.build_model,
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
        summary(pairs.build_model, model_name, size, size, **dates_settings),
    )
    assert set(benchmark.SMOKE) - {"train", "epochs"} <= set(dates_settings)


# -- memory ----------------------------------------------------------------------------------


@pytest.mark.slow  # builds full-size models, 5-13 s; make test keeps its 8 minutes
def test_memory_cli_example_and_benchmarks_agree():
    task = MEMORY["copy"]
    model_name = task.spec.models[0]
    cli = summary(task.build_model, model_name, jit_compile=True)

    example = load_script("examples/ntm_copy.py")
    assert (example.TASK, example.MODEL) == (task.name, model_name)
    assert example.OVERRIDES
    assert set(example.OVERRIDES) <= set(task.spec.preset(model_name))
    assert_same(
        summary(example.build_model, example.parse_args([])),
        summary(task.build_model, model_name, **example.OVERRIDES),
    )
    assert_same(summary(example.build_model, example.parse_args(["--recipe"])), cli)

    copy_benchmark = load_script("benchmarks/memory_copy.py")
    args = copy_benchmark.parse_args([])
    assert args.task == task.name and args.cells[0] == model_name
    assert copy_benchmark.batch_size(args, model_name) == task.spec.batch_size_of(model_name)
    assert_same(summary(copy_benchmark.build_model, args), cli)

    speed_benchmark = load_script("benchmarks/memory_speed.py")
    assert speed_benchmark.TASK == task.name
    assert_same(summary(speed_benchmark.build_model, speed_benchmark.parse_args([])), cli)
    assert speed_benchmark.SMOKE_OVERRIDES
    assert set(speed_benchmark.SMOKE_OVERRIDES) <= set(task.spec.preset(model_name))


# -- vision ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def digit_size():
    (train_x, _), _ = load_digits(None)  # as the task's data, without --data
    return int(train_x.shape[1])


@pytest.mark.slow  # builds full-size models, 5-13 s; make test keeps its 8 minutes
def test_vision_ram_cli_example_and_benchmark_agree(digit_size):
    task = "translated_digits"
    recipe = VISION[task]
    model_name = recipe.spec.models[0]
    cli = summary(recipe.build_model, model_name, digit_size, jit_compile=True)

    example = load_script("examples/ram_digits.py")
    args = example.parse_args([])
    assert example.TASK == task and example.MODELS[args.policy] == model_name
    assert args.epochs == recipe.spec.epochs
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
    task = "digit_strips_glimpses"
    recipe = VISION[task]
    model_name = recipe.spec.models[0]
    cli = summary(recipe.build_model, model_name, digit_size, jit_compile=True)

    example = load_script("examples/dram_strips.py")
    args = example.parse_args([])
    assert example.TASK == task and example.MODELS[args.policy] == model_name
    # the example's declared departure, its epochs, sets the length of the rate's decay
    steps = example.EPOCHS * (SKLEARN_TRAIN_DIGITS // recipe.spec.batch_size)
    cli_at_example_epochs = summary(
        recipe.build_model, model_name, digit_size, jit_compile=True, total_steps=steps
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
        summary(recipe.build_model, model_name, 28, jit_compile=True, total_steps=4000),
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
    assert VISION["digit_strips_glimpses"].settings("dram")["glimpse_filters"] == ()
    args = benchmark.parse_args(["--set", "glimpse_filters=()"])
    assert args.set == [("glimpse_filters", ())]


@pytest.mark.slow  # builds full-size models, 5-13 s; make test keeps its 8 minutes
def test_vision_captioning_cli_example_and_benchmark_agree(digit_size):
    task = "digit_strips"
    recipe = VISION[task]
    model_name = recipe.spec.models[0]
    cli = summary(recipe.build_model, model_name, digit_size, jit_compile=True)

    example = load_script("examples/caption_digits.py")
    assert (example.TASK, example.MODEL) == (task, model_name)
    assert_same(summary(example.build_model, example.parse_args([])), cli)

    benchmark = load_script("benchmarks/captioning.py")
    assert (benchmark.TASK, benchmark.MODEL) == (task, model_name)
    assert_same(summary(benchmark.build_model, benchmark.parse_args([])), cli)
    assert_same(
        summary(benchmark.build_model, benchmark.parse_args([]), digit_size=28),
        summary(recipe.build_model, model_name, 28, jit_compile=True),
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

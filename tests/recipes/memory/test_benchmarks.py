"""benchmarks/memory_copy.py trains the recipe's models: its flags reach the presets' settings
(``--set``, ``--optimizer``, ``--clipnorm``, ``--warmup-sequences``, ``--tail-rate``) and its
curriculum grows the tasks' episodes."""

import keras
import numpy as np
import pytest

from keras_adl.recipes.memory import spec
from keras_adl.recipes.memory.tasks import RECIPES
from tests.scripts import load_script


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
    assert lstm.count_params() == RECIPES["copy"].build_model("lstm").count_params()
    with pytest.raises(ValueError, match="unknown setting.*num_heads"):
        benchmark.build_model(benchmark.parse_args(["--set", "num_heads=1"]), "ntm")


def test_memory_benchmark_clip_and_warmup(capsys):
    benchmark = load_script("benchmarks/memory_copy.py")
    small = ["--memory-size", "8", "--set", "controller_units=8"]
    plain = benchmark.build_model(benchmark.parse_args(small), "ntm").optimizer
    assert plain.global_clipnorm == spec.CLIPNORM
    args = benchmark.parse_args(
        ["--task", "priority_sort", "--clipnorm", "10", "--warmup-sequences", "3200"] + small
    )
    optimizer = benchmark.build_model(args, "ntm").optimizer
    assert optimizer.global_clipnorm == 10.0
    peak = spec.PRIORITY_SORT.preset("ntm")["learning_rate"]
    schedule = optimizer._learning_rate  # 3200 sequences = 100 steps of 32, then constant
    rates = [float(schedule(step)) for step in (0, 50, 100, 1000)]
    np.testing.assert_allclose(rates, [0.0, peak / 2, peak, peak], rtol=1e-6)
    args = benchmark.parse_args(["--warmup-sequences", "3200", "--learning-rate", "1e-3"] + small)
    optimizer = benchmark.build_model(args, "dnc").optimizer
    assert optimizer.global_clipnorm == spec.CLIPNORM
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
        assert spec.COPY.preset(cell)["controller"] == "lstm"
        assert spec.COPY.preset(cell)["num_write_heads"] == 1
        model = benchmark.build_model(args, cell)
        (layer,) = [layer for layer in model.layers if hasattr(layer, "cell")]
        assert (layer.cell.controller, layer.cell.num_write_heads) == ("dense", 2)
        assert "controller_h" not in layer.cell.state_names  # a feed-forward controller
    # converged = < 0.1 bit errors per sequence on every task (issue 19's criterion)
    assert benchmark.parse_args(["--task", "associative_recall"]).criterion == "bit_errors"


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


@pytest.mark.slow  # ~20 s: six tiny NTM runs of the benchmark, as the other benchmarks' smoke tests
def test_memory_benchmark_tail_rate_drops_adams_rate_once():
    benchmark = load_script("benchmarks/memory_copy.py")
    recipe_rate = spec.COPY.preset("ntm")["learning_rate"]
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
        assert spec.COPY.preset(cell)["memory_init"] == "constant"
        (layer,) = [la for la in benchmark.build_model(args, cell).layers if hasattr(la, "cell")]
        assert layer.cell.memory_init == "learned"


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
    assert float(adam.learning_rate) == pytest.approx(spec.MEMORY_LEARNING_RATE)
    args = benchmark.parse_args(small + ["--optimizer", "rmsprop"])  # copy: Adam 5e-3 otherwise
    assert isinstance(benchmark.build_model(args, "dnc").optimizer, keras.optimizers.RMSprop)
    assert benchmark.learning_rate(args, "dnc") == pytest.approx(1e-4)
    args = benchmark.parse_args(small + ["--optimizer", "rmsprop", "--learning-rate", "3e-4"])
    assert float(benchmark.build_model(args, "ntm").optimizer.learning_rate) == pytest.approx(3e-4)
    # --set optimizer= is the memory cells' setting, as --optimizer; the LSTM keeps Adam
    args = benchmark.parse_args(["--task", "associative_recall", "--set", "optimizer=adam"])
    assert benchmark.optimizer_of(args, "ntm") == "adam"
    assert benchmark.learning_rate(args, "ntm") == pytest.approx(spec.MEMORY_LEARNING_RATE)
    assert benchmark.optimizer_of(args, "lstm") == "adam"
    args = benchmark.parse_args(["--optimizer", "rmsprop"])
    assert isinstance(benchmark.build_model(args, "lstm").optimizer, keras.optimizers.RMSprop)
    assert benchmark.learning_rate(args, "lstm") == pytest.approx(1e-4)

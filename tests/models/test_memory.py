import keras
import numpy as np
import pytest

from keras_adl.data.algorithmic import copy_batch
from keras_adl.models.memory import addressing_model, memory_sequence_model
from keras_adl.recipes.memory.build import compile_memory_model
from keras_adl.recipes.memory.spec import COPY
from tests.harness import np_

TINY = dict(controller_units=16, memory_size=12, memory_width=6)


# The NTM's case (~7 s) is slow: make test trains the NTM builder in its copy learning test.
@pytest.mark.parametrize("cell", [pytest.param("ntm", marks=pytest.mark.slow), "dnc", "lstm"])
def test_builder_shapes_and_a_train_step(cell):
    # Without XLA here: the copy learning test compiles the NTM model with XLA, and the cell
    # harnesses (tests/layers) compile NTM and DNC cells with XLA.
    kwargs = TINY if cell != "lstm" else dict(lstm_units=16, lstm_layers=2)
    model = compile_memory_model(
        memory_sequence_model(5, 4, cell=cell, **kwargs), jit_compile=False
    )
    x, y, w = copy_batch(4, 1, 3, bits=4, seed=0)
    logits = model.predict(x, verbose=0)
    assert logits.shape == (4, 7, 4)
    # The step reports the per-sequence loss and bit errors of the answer steps (its forward
    # pass is the one before the update).
    logs = model.train_on_batch(x, y, sample_weight=w, return_dict=True)
    p = 1 / (1 + np.exp(-logits.astype("float64")))
    nats = -(y * np.log(p) + (1 - y) * np.log(1 - p)).sum(-1)
    wrong = ((logits > 0) != (y > 0.5)).sum(-1)
    assert logs["loss"] == pytest.approx((nats * w).sum(-1).mean(), rel=1e-4)
    assert logs["bit_errors"] == pytest.approx((wrong * w).sum(-1).mean(), rel=1e-6)


@pytest.mark.slow  # ~5 s
def test_addressing_model_shares_the_trained_function():
    model = compile_memory_model(
        memory_sequence_model(5, 4, cell="dnc", num_read_heads=2, **TINY), jit_compile=False
    )
    x, y, w = copy_batch(8, 1, 3, bits=4, seed=1)
    model.train_on_batch(x, y, sample_weight=w)
    plot_model = addressing_model(model)
    outputs = plot_model(x)
    np.testing.assert_allclose(np_(outputs["logits"]), np_(model(x)), atol=1e-5)
    assert tuple(outputs["read_weights"].shape) == (8, 7, 2, 12)
    assert tuple(outputs["write_weights"].shape) == (8, 7, 1, 12)
    with pytest.raises(ValueError, match="cell='ntm' or 'dnc'"):
        addressing_model(memory_sequence_model(5, 4, cell="lstm", lstm_units=8, lstm_layers=1))


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_keras_file_round_trip_of_a_compiled_model(tmp_path):
    model = compile_memory_model(memory_sequence_model(5, 4, **TINY), jit_compile=False)
    x, y, w = copy_batch(4, 1, 3, bits=4, seed=2)
    model.train_on_batch(x, y, sample_weight=w)
    path = str(tmp_path / "ntm.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path)
    np.testing.assert_allclose(
        reloaded.predict(x, verbose=0), model.predict(x, verbose=0), atol=1e-6
    )
    # The compiled loss and metrics come back too.
    logs = reloaded.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
    assert set(logs) >= {"loss", "bit_errors", "bits_per_sequence"}


def test_bad_builder_arguments():
    with pytest.raises(ValueError, match="`cell` must be one of"):
        memory_sequence_model(5, 4, cell="gru")
    with pytest.raises(ValueError, match="`input_dim` must be a positive integer"):
        memory_sequence_model(0, 4)
    with pytest.raises(ValueError, match="needs a memory cell"):
        memory_sequence_model(5, 4, cell="lstm", return_addressing=True)
    with pytest.raises(ValueError, match="`sparse_links` is a DNC option"):
        memory_sequence_model(5, 4, cell="ntm", sparse_links=4)
    with pytest.raises(ValueError, match="`stop_usage_gradient` is a DNC option"):
        memory_sequence_model(5, 4, cell="lstm", stop_usage_gradient=False)
    model = memory_sequence_model(5, 4, cell="lstm", lstm_units=4, lstm_layers=1)
    with pytest.raises(ValueError, match=r"`optimizer` must be one of \['adam', 'rmsprop'\]"):
        compile_memory_model(model, optimizer="sgd")
    with pytest.raises(TypeError, match="received <class .*SGD.*> of type type"):
        compile_memory_model(model, optimizer=keras.optimizers.SGD)  # the class, not an instance


def test_dnc_options_reach_the_cell():
    model = memory_sequence_model(
        5,
        4,
        cell="dnc",
        memory_size=16,
        memory_width=4,
        controller_units=8,
        sparse_links=4,
        stop_usage_gradient=False,
    )
    cell = model.get_layer("memory").cell
    assert (cell.sparse_links, cell.stop_usage_gradient) == (4, False)
    default = memory_sequence_model(5, 4, cell="dnc", memory_size=16, memory_width=4)
    assert default.get_layer("memory").cell.stop_usage_gradient is True


def _train_copy(cell, steps, learning_rate, max_length, seed=0, **kwargs):
    keras.utils.set_random_seed(seed)
    model = memory_sequence_model(9, 8, cell=cell, **kwargs)
    compile_memory_model(model, learning_rate=learning_rate)
    from keras_adl.data.algorithmic import task_dataset

    data = task_dataset("copy", 32, seed=seed, min_length=1, max_length=max_length)
    model.fit(data, steps_per_epoch=steps, epochs=1, shuffle=False, verbose=0)
    x, y, w = copy_batch(256, 1, max_length, seed=1000)
    return model, model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)


@pytest.mark.slow  # a learning test, ~27 s (make test-slow)
def test_ntm_learns_to_copy_short_sequences():
    """NTM (LSTM-64 controller, 16 × 8 memory), copy lengths 1–5, 1000 steps of 32 sequences
    at Adam 5e-3: below 0.25 bit errors per sequence (chance is 12; seeds 0–3 reached ≤ 0.05
    within 900 steps when this bound was set)."""
    _, logs = _train_copy("ntm", 1000, 5e-3, 5, controller_units=64, memory_size=16, memory_width=8)
    assert logs["bit_errors"] < 0.25, logs


@pytest.mark.slow
def test_ntm_copy_lengths_1_to_20_at_the_reliable_rate():
    """The paper's configuration at the recipe's copy rate (Adam 5e-3), 1000 steps (32k
    sequences): the NTM has found the copy algorithm (below 0.5 bit errors per sequence, chance
    is ~33) and copies length 50, never seen in training, with < 10% wrong bits (chance is 50%).

    At the anchors' 1e-3 the NTM converged on 3 of 5 seeds within 100k sequences
    (benchmarks/RESULTS.md), and this test at 1e-3 failed in CI (31 bit errors after 48k) although
    seed 0 had converged by 28.8k in the benchmark: XLA on CPU is not bit-deterministic, and at
    1e-3 that decides whether the run finds the algorithm. 5e-3 converged on every seed tried
    (median 11.2k over 5 seeds, at most 16.8k sequences: twice that budget here).
    """
    model, logs = _train_copy("ntm", 1000, COPY.preset("ntm")["learning_rate"], 20)
    assert logs["bit_errors"] < 0.5, logs
    x, y, w = copy_batch(64, 50, 50, seed=3)
    longer = model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
    assert longer["bit_errors"] / (50 * 8) < 0.1, longer

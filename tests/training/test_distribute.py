import os

import keras
import pytest
import tensorflow as tf

from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB, date_arrays
from keras_adl.models import attention_seq2seq
from keras_adl.training.distribute import get_strategy
from tests.mirrored import assert_mirrored_fit_matches_one_device, two_cpus

HERE = os.path.dirname(os.path.abspath(__file__))


def _build():
    model = attention_seq2seq(len(SOURCE_VOCAB), len(TARGET_VOCAB), 8, 16)
    # jit stays off: XLA under MirroredStrategy on logical CPUs fails on this stack.
    model.compile(
        optimizer=keras.optimizers.SGD(0.2),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    return model


@pytest.mark.slow  # the fast suite checks mirrored == one device in test_multi_worker.py
def test_mirrored_fit_on_two_logical_cpus_matches_one_device():
    # Same data and initial weights: per-epoch loss and final weights agree to 1e-4
    # (float reassociation of the cross-replica sum). Dates targets all have 11 real tokens, so
    # each replica's masked mean equals the global one.
    data = date_arrays(256, seed=5)
    x = {"source": data["source"], "decoder_input": data["decoder_input"]}
    history = assert_mirrored_fit_matches_one_device(
        _build,
        lambda m: m.fit(x, data["target"], batch_size=64, epochs=2, shuffle=False, verbose=0),
    )
    assert history.history["loss"][1] < history.history["loss"][0]


def test_strategy_resolution():
    gpus = len(tf.config.list_logical_devices("GPU"))
    assert get_strategy("auto").num_replicas_in_sync == (gpus if gpus >= 2 else 1)
    assert get_strategy("default").num_replicas_in_sync == 1
    custom = tf.distribute.OneDeviceStrategy("/cpu:0")
    assert get_strategy(custom) is custom
    with pytest.raises(ValueError, match="`strategy` must be 'auto', 'mirrored', 'multi_worker'"):
        get_strategy("tpu")


def test_mirrored_strategy_is_shared_per_device_set():
    # A second MirroredStrategy over the same devices breaks collective all-reduce in TF 2.21
    # ("Shape mismatch in the collective instance"): get_strategy hands out one per device set.
    a = two_cpus()
    assert get_strategy("mirrored", devices=["/cpu:0", "/cpu:1"]) is a
    assert get_strategy("mirrored", devices=["/cpu:0"]) is not a


def _recall_run(tmp_path, batch_size, strategy):
    from keras_adl.training.run import Run

    return Run(
        task="associative_recall",
        model="ntm",
        epochs=1,
        batch_size=batch_size,
        samples=4,
        out=str(tmp_path),
        strategy=strategy,
    )


def test_a_run_refuses_a_batch_smaller_than_its_replicas(tmp_path):
    """A batch of 1 under two replicas: one line naming the batch and the way out, not an
    empty replica."""
    from keras_adl.recipes import RecipeError

    strategy = two_cpus()
    with pytest.raises(RecipeError, match="--batch-size 1 is smaller than the 2 replicas"):
        _recall_run(tmp_path, 1, strategy).get_strategy()
    assert _recall_run(tmp_path, 2, strategy).get_strategy() is strategy
    assert _recall_run(tmp_path, 1, "default").get_strategy().num_replicas_in_sync == 1


def test_the_batch_check_counts_a_workers_own_replicas(tmp_path, monkeypatch):
    """Under several workers ``batch_size`` is each worker's: 2 workers with one replica each
    train a batch of 1 per worker (2 in all)."""
    from keras_adl.training import run

    strategy = two_cpus()
    monkeypatch.setattr(run, "worker_info", lambda s: (0, 2, True))  # 2 × 1 replica
    assert _recall_run(tmp_path, 1, strategy).get_strategy() is strategy

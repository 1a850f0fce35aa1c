"""benchmarks/pretraining.py: the linear probe trains the classifier alone, and the script
refuses fewer than one window; its models are the family's (`RECIPES[...].build_model`)."""

import numpy as np
import pytest

from keras_adl.recipes.pretraining.tasks import RECIPES
from tests.scripts import load_script


def test_pretraining_benchmark_linear_probe_trains_the_classifier_alone(capsys):
    import tensorflow as tf

    benchmark = load_script("benchmarks/pretraining.py")
    model = RECIPES["finetune"].build_model(
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

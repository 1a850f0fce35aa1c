"""`import keras_adl` registers every class a saved model can hold: `.keras` files load in a
fresh process that imports only keras, numpy and keras_adl."""

import inspect
import os
import subprocess
import sys
import textwrap

import keras
import numpy as np

import keras_adl
from keras_adl import layers, metrics, models
from keras_adl.recipes._compile import compile_for_training
from keras_adl.recipes.memory.build import compile_memory_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASES = (keras.layers.Layer, keras.losses.Loss, keras.metrics.Metric)  # keras.Model is a Layer


def _public_classes():
    """Every public Layer/Model/Loss/Metric class of keras_adl.layers, .models and .metrics."""
    found = {}
    for module in (layers, models, metrics):
        names = getattr(module, "__all__", None) or [
            n for n in dir(module) if not n.startswith("_")
        ]
        for name in names:
            obj = getattr(module, name)
            if (
                inspect.isclass(obj)
                and issubclass(obj, BASES)
                and obj.__module__.startswith("keras_adl")
            ):
                found[name] = obj
    return found


def test_every_public_class_is_registered():
    classes = _public_classes()
    expected = {
        "BahdanauAttention",
        "DNCCell",
        "NTMCell",
        "RecurrentAttention",
        "RecurrentAttentionModel",
        "SequenceBitCrossEntropy",
        "BitErrorsPerSequence",
        "BitsPerSequence",
    }
    assert expected <= set(classes), expected - set(classes)
    from keras_adl.training.sparse_adam import SparseAdam

    classes["SparseAdam"] = SparseAdam  # the word2vec recipe's optimizer, saved with its models
    from keras_adl.training.divergence import ScaledSchedule

    classes["ScaledSchedule"] = ScaledSchedule  # a run's schedule under --learning-rate
    for name, cls in classes.items():
        assert keras.saving.get_registered_object("keras_adl>" + name) is cls, name
        assert keras.saving.get_registered_name(cls) == "keras_adl>" + name, name


def _families():
    """One small compiled model per family, compiled as the project compiles it, and an input."""
    rng = np.random.default_rng(0)
    sparse_ce = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    seq2seq = compile_for_training(
        models.attention_seq2seq(12, 9, embedding_dim=4, units=4), sparse_ce, 3e-3, False
    )
    source = rng.integers(1, 12, (2, 5)).astype("int32")
    source[1, 3:] = 0
    target = rng.integers(1, 9, (2, 4)).astype("int32")
    seq2seq_input = {"source": source, "decoder_input": target}

    memory = compile_memory_model(
        models.memory_sequence_model(
            5, 3, cell="dnc", controller_units=8, memory_size=6, memory_width=4, num_read_heads=2
        ),
        jit_compile=False,
    )
    memory_input = rng.random((2, 6, 5)).astype("float32")

    ram = models.recurrent_attention_model(
        (12, 12, 1),
        3,
        num_glimpses=2,
        patch_size=4,
        glimpse_units=4,
        location_units=4,
        glimpse_output_units=8,
        units=8,
        seed=0,
    )
    ram.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=False)
    ram_input = rng.random((2, 12, 12, 1)).astype("float32")

    from keras_adl.training.divergence import ScaledSchedule

    # A run given --learning-rate saves its schedule scaled.
    scaled = ScaledSchedule(keras.optimizers.schedules.CosineDecay(1e-3, 100), 0.5)
    scaled_rate = compile_for_training(
        models.attention_seq2seq(12, 9, embedding_dim=4, units=4), sparse_ce, scaled, False
    )

    han = compile_for_training(
        models.han_classifier(20, 3, embedding_dim=4, units=4, encoder_units=2),
        sparse_ce,
        2e-3,
        False,
    )
    ids = rng.integers(1, 20, (2, 3, 4)).astype("int32")
    ids[0, 2] = 0
    return {
        "seq2seq": (seq2seq, seq2seq_input),
        "memory": (memory, memory_input),
        "ram": (ram, ram_input),
        "han": (han, ids),
        "scaled_rate": (scaled_rate, seq2seq_input),
    }


def _arrays(value):
    """A model's input or output as a flat ``{key: array}``."""
    if isinstance(value, dict):
        return {k: keras.ops.convert_to_numpy(v) for k, v in value.items()}
    return {"": keras.ops.convert_to_numpy(value)}


LOAD = textwrap.dedent("""
    import os, sys
    import keras
    import numpy as np
    import keras_adl

    directory = sys.argv[1]

    def arrays(prefix):
        files = sorted(f for f in os.listdir(directory) if f.startswith(prefix + "."))
        return {f[len(prefix) + 1:-len(".npy")]: np.load(os.path.join(directory, f))
                for f in files}

    def as_call_input(values):
        return values[""] if list(values) == [""] else values

    for family in sys.argv[2:]:
        model = keras.models.load_model(os.path.join(directory, family + ".keras"))
        assert model.optimizer is not None, family
        outputs = model(as_call_input(arrays(family + "_in")), training=False)
        outputs = outputs if isinstance(outputs, dict) else {"": outputs}
        expected = arrays(family + "_out")
        assert set(outputs) == set(expected), (family, set(outputs), set(expected))
        for key, value in expected.items():
            np.testing.assert_allclose(keras.ops.convert_to_numpy(outputs[key]), value,
                                       atol=1e-6, err_msg=f"{family} {key}")
        if family == "memory":
            # Imported only now: the import alone would register them.
            from keras_adl.metrics import (
                BitErrorsPerSequence, BitsPerSequence, SequenceBitCrossEntropy)

            assert isinstance(model.loss, SequenceBitCrossEntropy), type(model.loss)
            x = arrays(family + "_in")[""]
            y = (np.random.default_rng(0).random(expected[""].shape) > 0.5).astype("float32")
            model.evaluate(x, y, sample_weight=np.ones(y.shape[:2], "float32"), verbose=0)
            kinds = {type(m) for group in model.metrics for m in getattr(group, "metrics", [group])}
            assert {BitErrorsPerSequence, BitsPerSequence} <= kinds, kinds
        if family == "scaled_rate":
            from keras_adl.training.divergence import ScaledSchedule

            assert isinstance(model.optimizer._learning_rate, ScaledSchedule)
        print("loaded", family, type(model).__name__)
""")


def test_saved_models_load_after_import_keras_adl(tmp_path):
    families = _families()
    for family, (model, inputs) in families.items():
        model.save(str(tmp_path / f"{family}.keras"))
        for kind, values in (("in", inputs), ("out", model(inputs, training=False))):
            for key, array in _arrays(values).items():
                np.save(tmp_path / f"{family}_{kind}.{key}.npy", array)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow")
    result = subprocess.run(
        [sys.executable, "-c", LOAD, str(tmp_path), *families],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "loaded ram RecurrentAttentionModel" in result.stdout
    assert result.stdout.count("loaded ") == len(families)
    assert keras_adl.__version__

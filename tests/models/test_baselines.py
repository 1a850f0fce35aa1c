"""The RAM paper's whole-image baselines: `whole_image_mlp` and `whole_image_convnet`, and
their place in the vision recipe (build, evaluation, tuning, export)."""

import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.data.image_sources import load_sklearn_digits
from keras_adl.data.translated_digits import TranslatedDigits, translate_digits
from keras_adl.models import whole_image_convnet, whole_image_mlp
from keras_adl.recipes.vision.serving import make_classifier_serving_fn
from keras_adl.recipes.vision.spec import BASELINE_MODELS
from keras_adl.recipes.vision.tasks import RECIPES


def test_mlp_has_the_papers_two_hidden_layers_and_a_softmax():
    model = whole_image_mlp((60, 60, 1), 10)
    dense = [layer for layer in model.layers if isinstance(layer, keras.layers.Dense)]
    assert [layer.units for layer in dense] == [256, 256, 10]
    assert [layer.activation.__name__ for layer in dense[:2]] == ["relu", "relu"]
    assert dense[0].kernel.shape == (3600, 256)  # every pixel of the canvas
    images = np.random.default_rng(0).random((3, 60, 60, 1)).astype("float32")
    probabilities = keras.ops.convert_to_numpy(model(images))
    assert probabilities.shape == (3, 10) and probabilities.dtype == np.float32
    np.testing.assert_allclose(probabilities.sum(-1), 1.0, rtol=1e-5)


def test_convnet_matches_its_formula():
    model = whole_image_convnet((32, 32, 1), 4, filters=2, kernel_size=6, strides=3, units=5)
    conv, hidden, classifier = (model.get_layer(n) for n in ("conv", "hidden", "classifier"))
    assert conv.output.shape == (None, 9, 9, 2)  # (32 − 6) / 3 + 1
    images = np.random.default_rng(1).random((2, 32, 32, 1)).astype("float32")
    kernel, bias = (keras.ops.convert_to_numpy(w) for w in conv.weights)
    patches = np.stack(
        [
            np.stack([images[:, 3 * i : 3 * i + 6, 3 * j : 3 * j + 6, :] for j in range(9)], 1)
            for i in range(9)
        ],
        1,
    )  # [B, 9, 9, 6, 6, 1]
    features = np.maximum(np.einsum("bijhwc,hwcf->bijf", patches, kernel) + bias, 0)
    w1, b1 = (keras.ops.convert_to_numpy(w) for w in hidden.weights)
    w2, b2 = (keras.ops.convert_to_numpy(w) for w in classifier.weights)
    logits = np.maximum(features.reshape(2, -1) @ w1 + b1, 0) @ w2 + b2
    expected = np.exp(logits - logits.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(model(images)), expected, atol=1e-5)


@pytest.mark.parametrize(
    "build, kwargs, message",
    [
        (whole_image_mlp, dict(image_shape=(60, 60)), r"`image_shape` must have rank 3"),
        (whole_image_mlp, dict(units=0), r"`units` must be a positive integer; received 0"),
        (whole_image_mlp, dict(num_layers=1.5), r"`num_layers` must be a positive integer"),
        (whole_image_convnet, dict(image_shape=(8, 8, 1)), r"`kernel_size` must be at most"),
        (whole_image_convnet, dict(strides=0), r"`strides` must be a positive integer"),
        (whole_image_convnet, dict(num_classes=-1), r"`num_classes` must be a positive integer"),
    ],
)
def test_bad_arguments_are_named(build, kwargs, message):
    arguments = {"image_shape": (60, 60, 1), "num_classes": 10, **kwargs}
    with pytest.raises(ValueError, match=message):
        build(**arguments)


def test_gradients_reach_every_weight_and_the_keras_file_round_trips(tmp_path):
    images = np.random.default_rng(2).random((4, 32, 32, 1)).astype("float32")
    labels = np.array([0, 1, 2, 3])
    for model in (whole_image_mlp((32, 32, 1), 4, units=8), whole_image_convnet((32, 32, 1), 4)):
        with tf.GradientTape() as tape:
            loss = keras.losses.sparse_categorical_crossentropy(labels, model(images))
        gradients = tape.gradient(loss, model.trainable_weights)
        assert all(g is not None and np.any(g.numpy() != 0) for g in gradients)
        path = str(tmp_path / f"{model.name}.keras")
        model.save(path)
        np.testing.assert_allclose(
            keras.saving.load_model(path)(images).numpy(), model(images).numpy(), atol=1e-6
        )


def test_recipe_convnet_learns_translated_digits_evaluates_and_exports(tmp_path):
    """The recipe's convnet on its translated-digit canvases: it learns (seeded, 8 epochs on
    1400 digits), the recipe's evaluation gives its held-out error only, and the exported
    SavedModel answers as the model does."""
    keras.utils.set_random_seed(0)
    images, labels = load_sklearn_digits(16)
    translated = RECIPES["translated_digits"]
    model = translated.build_model("convnet", 16, jit_compile=False)
    assert model.input.shape == (None, 32, 32, 1) and model.get_layer("conv").filters == 8
    data = TranslatedDigits(images[:1400], labels[:1400], batch_size=64, canvas_size=32, seed=0)
    model.fit(data, epochs=8, verbose=0)
    metrics = translated.figures(model, "convnet", (images[1500:], labels[1500:]), tmp_path, 16)
    assert set(metrics) == {"held_out_error"}
    assert not os.path.exists(os.path.join(tmp_path, "glimpses.png"))  # no glimpses to draw
    assert metrics["held_out_error"] < 0.6  # chance is 0.9

    from keras_adl.training.export import export_serving_fn

    export_dir = str(tmp_path / "export")
    export_serving_fn(model, export_dir, make_classifier_serving_fn(model))
    canvases, _, _ = translate_digits(images[:5], labels[:5], 32, rng=0)
    served = tf.saved_model.load(export_dir).signatures["serving_default"](
        images=tf.constant(canvases)
    )
    np.testing.assert_allclose(served["probabilities"].numpy(), model(canvases).numpy(), atol=1e-5)
    np.testing.assert_array_equal(served["classes"].numpy(), model(canvases).numpy().argmax(-1))


def test_recipe_baselines_read_each_tasks_canvas():
    for task in ("translated_digits", "cluttered_digits", "cluttered_digits_100"):
        canvas = RECIPES[task].layout.of(28)["canvas_size"]
        for name in BASELINE_MODELS:
            model = RECIPES[task].build_model(name, 28, jit_compile=False, total_steps=10)
            assert model.input.shape == (None, canvas, canvas, 1)
            rate = model.optimizer.get_config()["learning_rate"]
            if task == "translated_digits":  # the task's schedule, the RAM's too
                rate = keras.optimizers.schedules.deserialize(rate)
                assert (float(rate(0)), float(rate(10))) == pytest.approx((3e-3, 3e-5))
            else:
                assert rate == pytest.approx(1e-3)
    assert RECIPES["cluttered_digits_100"].layout.of(28)["canvas_size"] == 100
    assert RECIPES["cluttered_digits_100"].layout.of(28)["num_clutter"] == 8

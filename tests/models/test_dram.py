import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.models import (
    DeepRecurrentAttentionModel,
    deep_recurrent_attention_model,
    rewards_to_go,
)
from tests.harness import np_
from tests.models import glimpse_model_checks

SMALL = dict(
    patch_size=4,
    num_scales=2,
    glimpse_units=8,
    location_units=8,
    glimpse_output_units=16,
    units=16,
    context_filters=(4, 4, 4),
    seed=1,
)


def _data(batch=8, symbols=2, classes=5):
    rng = np.random.default_rng(0)
    return (
        rng.random((batch, 16, 32, 1)).astype("float32"),
        rng.integers(0, classes, (batch, symbols)).astype("int32"),
    )


def _model(**kwargs):
    kwargs = dict(SMALL, **kwargs)
    return deep_recurrent_attention_model(
        (16, 32, 1), 5, num_symbols=2, glimpses_per_symbol=2, **kwargs
    )


def test_rewards_to_go_sum_the_symbol_and_every_later_one():
    rewards = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]], "float32")
    expected = np.array([[2, 2, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], "float32")
    np.testing.assert_array_equal(np_(rewards_to_go(rewards, 2)), expected)
    np.testing.assert_array_equal(np_(rewards_to_go(rewards, 1)), [[2, 1, 1], [1, 1, 0]])


def test_hybrid_loss_matches_its_formula_with_ignored_symbols():
    images, labels = _data()
    labels[:, 1] = np.where(np.arange(8) % 2 == 0, 0, labels[:, 1])  # class 0: padding
    model = _model(ignore_class=0)
    outputs = model(images, training=True)
    cross_entropy, reinforce, baseline = (np_(t) for t in model.hybrid_loss(labels, outputs))
    logits = np_(outputs["logits"]).astype("float64")
    log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    weights = (labels != 0).astype("float64")
    picked = np.take_along_axis(log_softmax, labels[..., None], -1)[..., 0]
    np.testing.assert_allclose(cross_entropy, -(picked * weights).sum(-1), rtol=1e-5)
    correct = (logits.argmax(-1) == labels) * weights
    returns = np.repeat(np.cumsum(correct[:, ::-1], -1)[:, ::-1], 2, axis=1)
    advantage = returns - np_(outputs["baselines"])
    np.testing.assert_allclose(
        reinforce, -(np_(outputs["log_probs"]) * advantage).sum(-1), rtol=1e-5, atol=1e-6
    )
    np.testing.assert_allclose(baseline, (advantage**2).mean(-1), rtol=1e-5)


def test_ignored_symbols_change_no_term():
    """Changing the logits of a padded symbol changes neither the loss nor the rewards."""
    images, labels = _data()
    labels[:, 1] = 0
    model = _model(ignore_class=0)
    outputs = {k: np_(v) for k, v in model(images, training=True).items()}
    other = dict(outputs, logits=outputs["logits"].copy())
    other["logits"][:, 1] = np.random.default_rng(5).normal(size=other["logits"][:, 1].shape) * 9
    for a, b in zip(model.hybrid_loss(labels, outputs), model.hybrid_loss(labels, other)):
        np.testing.assert_allclose(np_(a), np_(b), rtol=1e-6)


def test_reinforce_trains_the_emission_network_only_and_the_cross_entropy_the_rest():
    images, labels = _data()
    model = _model()
    with tf.GradientTape(persistent=True) as tape:
        terms = [tf.reduce_mean(t) for t in model.hybrid_loss(labels, model(images, training=True))]
    weights = model.trainable_weights
    cross_entropy, reinforce, baseline = (
        dict(zip([w.path for w in weights], tape.gradient(t, weights))) for t in terms
    )

    def nonzero(g):
        return g is not None and bool(np.any(np_(g) != 0))

    for path in cross_entropy:
        assert nonzero(reinforce[path]) == ("location_network" in path), path
        assert nonzero(baseline[path]) == ("/baseline/" in path), path
        policy_side = "location_network" in path or "/baseline/" in path
        assert nonzero(cross_entropy[path]) != policy_side, path


@pytest.mark.portable
@pytest.mark.slow  # ~6 s; make test fits the RAM (its learning test) and checks DRAM's rule
def test_fit_reports_both_accuracies_and_evaluate_the_loss():
    images, labels = _data(32)
    model = _model()
    model.compile(optimizer=keras.optimizers.Adam(1e-2))  # XLA: the layer's harness
    history = model.fit(images, labels, batch_size=16, epochs=2, verbose=0)
    assert set(history.history) == {
        "loss",
        "cross_entropy",
        "reinforce",
        "baseline_mse",
        "accuracy",
        "sequence_accuracy",
    }
    assert all(np.isfinite(v).all() for v in history.history.values())
    result = model.evaluate(images, labels, verbose=0, return_dict=True)
    assert set(result) == {"loss", "accuracy", "sequence_accuracy"}
    outputs = model.predict(images, verbose=0)
    tokens = outputs["probabilities"].argmax(-1)
    assert result["sequence_accuracy"] == pytest.approx(np.mean(np.all(tokens == labels, -1)))
    assert result["accuracy"] == pytest.approx(np.mean(tokens == labels), abs=1e-6)


@pytest.mark.slow  # ~5 s; make test keeps the layer harness's .keras round trip
def test_round_trips_through_keras_and_saved_model(tmp_path):
    images, _ = _data()
    model = _model(ignore_class=0, glimpse_filters=(3,))  # the convolutional "what" path too
    first = model.predict(images, verbose=0)
    path = str(tmp_path / "dram.keras")
    model.save(path)
    reloaded = keras.saving.load_model(path)
    assert isinstance(reloaded, DeepRecurrentAttentionModel) and reloaded.ignore_class == 0
    assert reloaded.glimpses_per_symbol == 2
    again = reloaded.predict(images, verbose=0)
    for key in ("probabilities", "locations"):
        np.testing.assert_allclose(again[key], first[key], atol=1e-6)
    export = str(tmp_path / "saved")
    model.export(export, format="tf_saved_model", verbose=False)
    served = tf.saved_model.load(export)
    out = served.serve(tf.constant(images))
    np.testing.assert_allclose(np_(out["probabilities"]), first["probabilities"], atol=1e-5)
    np.testing.assert_allclose(np_(out["locations"]), first["locations"], atol=1e-5)


@pytest.mark.slow  # make test keeps the layer's mixed-precision check
def test_mixed_precision_predicts_as_float32_and_fits():
    glimpse_model_checks.check_mixed_precision(_model, *_data(16))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(image_shape=(16, 32)), "`image_shape` must have rank 3"),
        (dict(num_classes=0), "`num_classes`"),
        (dict(ignore_class=5), r"`ignore_class` must be None or a class id in \[0, 5\)"),
        (dict(num_symbols=0), "`num_symbols`"),
    ],
)
def test_bad_arguments(kwargs, message):
    args = dict(image_shape=(16, 32, 1), num_classes=5, num_symbols=2)
    args.update(kwargs)
    with pytest.raises(ValueError, match=message):
        deep_recurrent_attention_model(**args, **SMALL)


def test_labels_of_the_wrong_shape_are_a_clear_error():
    images, labels = _data()
    model = _model()
    model.compile(optimizer="adam")
    with pytest.raises(ValueError, match=r"needs integer class ids `y` of shape \[B, 2\]"):
        model.fit(images, labels[:, 0], epochs=1, verbose=0)
    with pytest.raises(ValueError, match="received none"):
        model.fit(images, epochs=1, verbose=0)


@pytest.mark.slow  # about a minute
def test_learns_to_read_two_digit_strips_left_to_right():
    """DRAM on strips of 2 of sklearn's digits (16×32), one glimpse of 2 scales per symbol
    (2 digits, then END) and a 4×8 context view: held-out exact match far above chance (1%),
    and the glimpse for digit 2 right of the glimpse for digit 1."""
    from keras_adl.conventions import PAD
    from keras_adl.data.digit_strips import (
        CAPTION_VOCAB_SIZE,
        DigitStrips,
        caption_arrays,
        digit_strips,
    )
    from keras_adl.data.image_sources import load_sklearn_digits
    from keras_adl.recipes.vision.evaluate import exact_match, reading_order

    keras.utils.set_random_seed(0)
    images, labels = load_sklearn_digits(16)
    model = deep_recurrent_attention_model(
        (16, 32, 1),
        CAPTION_VOCAB_SIZE,
        num_symbols=3,
        glimpses_per_symbol=1,
        ignore_class=PAD,
        patch_size=8,
        num_scales=2,
        glimpse_units=32,
        location_units=32,
        glimpse_output_units=64,
        units=64,
        context_size=(4, 8),
        context_filters=(8, 8, 8),
        seed=0,
    )
    model.compile(optimizer=keras.optimizers.Adam(2e-3), jit_compile=True)
    data = DigitStrips(images[:1400], labels[:1400], 64, 2, seed=0, teacher_forcing=False)
    model.fit(data, epochs=30, verbose=0)
    strips, captions, _ = digit_strips(images[1400:], labels[1400:], 300, 2, rng=123)
    _, targets = caption_arrays(captions)
    outputs = model.predict(strips, verbose=0)
    assert exact_match(outputs["probabilities"].argmax(-1), targets) > 0.6
    assert reading_order(outputs["locations"], 1, num_symbols=2) > 0.8


@pytest.mark.slow  # full-size recipe model, ~6 s; make test keeps the builder's SavedModel round trip
def test_recipe_export_reads_like_the_model_and_captions_stop_at_end(tmp_path):
    from keras_adl.recipes.vision.serving import dram_captions, make_dram_serving_fn
    from keras_adl.recipes.vision.tasks import RECIPES
    from keras_adl.training.export import export_serving_fn

    model = RECIPES["digit_strips_glimpses"].build_model("dram", 16, jit_compile=False)
    strips = np.random.default_rng(0).random((2, 16, 48, 1)).astype("float32")
    export_dir = str(tmp_path / "export")
    export_serving_fn(model, export_dir, make_dram_serving_fn(model))
    loaded = tf.saved_model.load(export_dir)
    out = loaded.signatures["serving_default"](images=tf.constant(strips))
    expected = model.predict(strips, verbose=0)
    np.testing.assert_allclose(out["probabilities"].numpy(), expected["probabilities"], atol=1e-5)
    np.testing.assert_allclose(out["locations"].numpy(), expected["locations"], atol=1e-5)
    np.testing.assert_array_equal(
        out["tokens"].numpy(), expected["probabilities"].argmax(-1).astype("int32")
    )
    # Tokens 3..12 are the digits 0..9, 2 is END, 0 is PAD: nothing from END on.
    tokens = tf.constant([[10, 2, 8, 4], [3, 4, 5, 2], [2, 5, 5, 5], [0, 12, 2, 3]])
    captions = dram_captions(tokens).numpy().tolist()
    assert captions == [b"7", b"0 1 2", b"", b"9"]

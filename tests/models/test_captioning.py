import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.conventions import END, START
from keras_adl.data.digit_strips import (
    CAPTION_VOCAB_SIZE,
    DigitStrips,
    caption_arrays,
    digit_strips,
)
from keras_adl.data.image_sources import load_sklearn_digits
from keras_adl.models import (
    caption_attention,
    caption_beam_search,
    caption_greedy_decode,
    show_attend_tell,
)
from keras_adl.ops import doubly_stochastic_penalty
from keras_adl.recipes.vision.evaluate import alignment_hit_rate, exact_match
from keras_adl.recipes.vision.serving import export_captioning, make_captioning_serving_fn
from tests.harness import np_

VOCAB = CAPTION_VOCAB_SIZE  # PAD, START, END and the digits 0..9 as tokens 3..12
MAX_LENGTH = 4  # 3 digits + END
IMAGE_SHAPE = (16, 48, 1)
FILTERS = (8, 16, 32)  # three 2x2 poolings: a 2 x 6 grid of L = 12 regions
GRID_WIDTH = 6


def _compile(model, learning_rate=1e-2, jit_compile=True):
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0),
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    return model


def _features_model(**kwargs):
    return show_attend_tell(VOCAB, feature_shape=(10, 6), embedding_dim=8, units=16, **kwargs)


def _features_inputs(batch=3, steps=5, seed=0):
    rng = np.random.default_rng(seed)
    decoder_input = rng.integers(3, VOCAB, (batch, steps)).astype("int32")
    decoder_input[:, 0] = START
    return {
        "features": rng.normal(size=(batch, 10, 6)).astype("float32"),
        "decoder_input": decoder_input,
    }


@pytest.fixture(scope="module")
def digits():
    images, labels = load_sklearn_digits(size=16)
    order = np.random.default_rng(0).permutation(len(images))
    return images[order[:1400]], labels[order[:1400]], images[order[1400:]], labels[order[1400:]]


def _image_model():
    return show_attend_tell(
        VOCAB,
        image_shape=IMAGE_SHAPE,
        embedding_dim=16,
        units=32,
        encoder_filters=FILTERS,
        regularization=1.0,
    )


@pytest.fixture(scope="module")
def trained(digits):
    # The learning test (slow, about 20 s on 2 cores; the vision family's fast learning test is
    # RAM's): 3-digit strips from 1400 training digits, 10 epochs of 43 steps,
    # λ = 1, Adam 1e-2; held-out strips are drawn from the other 397 digit images. Measured
    # over seeds 0-5: token accuracy 0.86-0.99, exact match 0.63-0.96, alignment 1.00.
    train_images, train_labels, test_images, test_labels = digits
    keras.utils.set_random_seed(0)
    model = _compile(_image_model())
    model.fit(DigitStrips(train_images, train_labels, batch_size=32, seed=0), epochs=10, verbose=0)
    strips, captions, spans = digit_strips(test_images, test_labels, 200, rng=1)
    decoder_input, targets = caption_arrays(captions)
    return model, {
        "strips": strips,
        "captions": captions,
        "spans": spans,
        "decoder_input": decoder_input,
        "targets": targets,
    }


@pytest.fixture(scope="module")
def untrained(digits):
    # Decoding and export must agree with the teacher-forced model for any weights.
    _, _, test_images, test_labels = digits
    keras.utils.set_random_seed(0)
    strips, _, _ = digit_strips(test_images, test_labels, 64, rng=1)
    return _image_model(), strips


def test_shapes_in_image_and_feature_modes():
    model = show_attend_tell(VOCAB, image_shape=IMAGE_SHAPE, embedding_dim=8, units=16)
    assert model.get_layer("encoder").output.shape[1:] == (48, 64)  # 4 x 12 regions, default
    logits = model(
        {"image": np.zeros((2, *IMAGE_SHAPE), "float32"), "decoder_input": np.ones((2, 5), "int32")}
    )
    assert tuple(logits.shape) == (2, 5, VOCAB)
    model = _features_model(position_embedding=False)
    assert tuple(model(_features_inputs()).shape) == (3, 5, VOCAB)
    tokens, attention, score = caption_beam_search(model, _features_inputs()["features"], 6, 3)
    assert (np_(tokens).shape, np_(attention).shape, np_(score).shape) == ((3, 6), (3, 6, 10), (3,))


def test_keras_round_trip_gives_identical_logits_and_decoding(tmp_path):
    for model, inputs in (
        (
            show_attend_tell(
                VOCAB,
                image_shape=(8, 24, 1),
                embedding_dim=8,
                units=16,
                encoder_filters=(4, 8),
                dropout=0.2,
            ),
            {
                "image": np.random.default_rng(0).random((2, 8, 24, 1), "float32"),
                "decoder_input": np.array([[1, 4, 5], [1, 7, 0]], "int32"),
            },
        ),
        (_features_model(), _features_inputs()),
    ):
        path = os.path.join(tmp_path, f"{model.name}_{len(inputs['decoder_input'][0])}.keras")
        model.save(path)
        reloaded = keras.saving.load_model(path)
        np.testing.assert_array_equal(np_(reloaded(inputs)), np_(model(inputs)))
        images = next(v for k, v in inputs.items() if k != "decoder_input")
        np.testing.assert_array_equal(
            np_(caption_greedy_decode(reloaded, images, 5)[0]),
            np_(caption_greedy_decode(model, images, 5)[0]),
        )


def test_the_state_is_carried_between_steps_and_the_decoder_is_causal():
    model = _features_model()
    inputs = _features_inputs()
    logits = np_(model(inputs))
    changed = {**inputs, "decoder_input": inputs["decoder_input"].copy()}
    changed["decoder_input"][:, 1] = np.where(changed["decoder_input"][:, 1] == 4, 5, 4)
    other = np_(model(changed))
    np.testing.assert_array_equal(other[:, :1], logits[:, :1])
    # Step 3 sees step 1's token only through the recurrent state.
    assert np.all(np.abs(other[:, 3] - logits[:, 3]).max(-1) > 1e-4)
    later = {**inputs, "decoder_input": inputs["decoder_input"].copy()}
    later["decoder_input"][:, 3] = np.where(later["decoder_input"][:, 3] == 4, 5, 4)
    np.testing.assert_array_equal(np_(model(later))[:, :3], logits[:, :3])


def test_the_regularizer_in_the_model_is_lambda_times_the_masked_penalty():
    model = _features_model(regularization=2.0)
    inputs = _features_inputs()
    inputs["decoder_input"][1, 3:] = 0  # caption 1 has 3 real steps, then padding
    inputs["decoder_input"][2, 2:] = 0
    model(inputs)
    attention = np_(caption_attention(model, inputs))
    np.testing.assert_allclose(attention.sum(-1), 1.0, rtol=1e-5)
    mask = inputs["decoder_input"] != 0
    expected = 2.0 * float(np.mean(np_(doubly_stochastic_penalty(attention, mask))))
    assert len(model.losses) == 1
    assert float(model.losses[0]) == pytest.approx(expected, rel=1e-5)
    # The padded steps do not count (with them, the value would differ).
    unmasked = 2.0 * float(np.mean(np_(doubly_stochastic_penalty(attention))))
    assert abs(unmasked - expected) > 1e-3
    # And it enters the loss `evaluate` reports: λ = 2 vs λ = 0 with the same weights.
    plain = _features_model(regularization=0.0)
    plain.set_weights(model.get_weights())
    targets = np.where(mask, np.roll(inputs["decoder_input"], -1, axis=1), 0)
    losses = [
        _compile(m).evaluate(inputs, targets, batch_size=3, verbose=0)[0] for m in (model, plain)
    ]
    assert losses[0] - losses[1] == pytest.approx(expected, rel=1e-4)


@pytest.mark.slow  # ~4 s; make test keeps the layers' mixed-precision checks
def test_mixed_float16_trains_without_nan():
    keras.config.set_dtype_policy("mixed_float16")
    model = _compile(_features_model(dropout=0.1), jit_compile=False)
    inputs = _features_inputs(batch=4)
    targets = np.roll(inputs["decoder_input"], -1, axis=1)
    loss = model.train_on_batch(inputs, targets)[0]
    assert np.isfinite(loss)
    assert keras.backend.standardize_dtype(model.losses[0].dtype) == "float32"
    tokens, attention, score = caption_greedy_decode(model, inputs["features"], 5)
    assert np.all(np.isfinite(np_(attention))) and np.all(np.isfinite(np_(score)))


@pytest.mark.slow
def test_learns_digit_strips_and_aligns(trained):
    model, test = trained
    tokens, attention, _ = caption_greedy_decode(model, test["strips"], MAX_LENGTH)
    tokens = np_(tokens)
    token_accuracy = float(np.mean(tokens[:, :3] == test["targets"][:, :3]))
    assert token_accuracy >= 0.8
    assert exact_match(tokens, test["targets"]) >= 0.5
    assert np.mean(tokens[:, 3] == END) >= 0.99
    # Step t attends to digit t, both teacher-forced and while decoding.
    teacher = np_(
        caption_attention(model, {"image": test["strips"], "decoder_input": test["decoder_input"]})
    )
    for alpha in (teacher, np_(attention)):
        hit = alignment_hit_rate(alpha, test["spans"], test["captions"], GRID_WIDTH, 48)
        assert hit >= 0.95
    # Beam search of width 4 is never worse than greedy on the held-out likelihood.
    greedy_score = np_(caption_greedy_decode(model, test["strips"], MAX_LENGTH)[2])
    score = np_(caption_beam_search(model, test["strips"], MAX_LENGTH, beam_width=4)[2])
    assert np.all(score >= greedy_score - 1e-4)


def test_greedy_decoding_agrees_with_teacher_forcing_and_beam_search(untrained):
    model, strips = untrained
    greedy, greedy_attention, greedy_score = caption_greedy_decode(model, strips, MAX_LENGTH)
    greedy = np_(greedy)
    # Fed its own outputs, the teacher-forced model's argmax reproduces the greedy tokens, and
    # its attention equals the decoding attention, up to the first </s> (padding after it).
    decoder_input = np.concatenate([np.full((64, 1), START), greedy[:, :-1]], 1)
    inputs = {"image": strips, "decoder_input": decoder_input}
    emitted = np.cumsum(np.cumsum(greedy == END, 1), 1) <= 1
    assert not emitted.all() and np.any(greedy[:, :3] == END)  # some captions end early
    np.testing.assert_array_equal(np_(model(inputs)).argmax(-1)[emitted], greedy[emitted])
    np.testing.assert_allclose(
        np_(caption_attention(model, inputs))[emitted], np_(greedy_attention)[emitted], atol=1e-5
    )
    one, _, one_score = caption_beam_search(model, strips, MAX_LENGTH, beam_width=1)
    np.testing.assert_array_equal(np_(one), greedy)
    np.testing.assert_allclose(np_(one_score), np_(greedy_score), rtol=1e-5, atol=1e-5)
    tokens, attention, score = caption_beam_search(model, strips, MAX_LENGTH, beam_width=4)
    assert np.mean(np_(score) >= np_(greedy_score) - 1e-4) >= 0.9
    np.testing.assert_allclose(np_(attention)[np_(tokens) != 0].sum(-1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("beam_width", [1, 3])
def test_exported_saved_model_matches_the_in_memory_functions(untrained, tmp_path, beam_width):
    model, strips = untrained
    strips = strips[:8]
    export_dir = str(tmp_path / "captioning")
    export_captioning(model, export_dir, MAX_LENGTH, beam_width)
    served = tf.saved_model.load(export_dir).signatures["serving_default"](
        images=tf.constant(strips)
    )
    if beam_width == 1:
        tokens, attention, score = caption_greedy_decode(model, strips, MAX_LENGTH)
    else:
        tokens, attention, score = caption_beam_search(model, strips, MAX_LENGTH, beam_width)
    np.testing.assert_array_equal(served["tokens"].numpy(), np_(tokens))
    np.testing.assert_allclose(served["attention"].numpy(), np_(attention), atol=1e-5)
    np.testing.assert_allclose(served["log_likelihood"].numpy(), np_(score), atol=1e-4)
    expected = [" ".join(str(t - 3) for t in row if t >= 3) for row in np_(tokens)]
    assert [c.decode() for c in served["caption"].numpy()] == expected


def test_serving_fn_compiles_and_renders_token_strings():
    model = _features_model()
    features = _features_inputs(batch=2)["features"]
    words = ["<pad>", "<s>", "</s>"] + [f"w{i}" for i in range(10)]
    serve = make_captioning_serving_fn(model, 5, beam_width=2, token_strings=words)
    out = serve(tf.constant(features))
    tokens = np_(caption_beam_search(model, features, 5, beam_width=2)[0])
    np.testing.assert_array_equal(out["tokens"].numpy(), tokens)
    expected = [" ".join(words[t] for t in row if t > END) for row in tokens]
    assert [c.decode() for c in out["caption"].numpy()] == expected

    @tf.function(jit_compile=True, input_signature=[tf.TensorSpec((None, 10, 6), tf.float32)])
    def decode(features):
        return (
            caption_greedy_decode(model, features, 5)[0],
            caption_beam_search(model, features, 5, beam_width=2)[0],
        )

    greedy, beam = decode(tf.constant(features))
    np.testing.assert_array_equal(np_(greedy), np_(caption_greedy_decode(model, features, 5)[0]))
    np.testing.assert_array_equal(np_(beam), tokens)
    with pytest.raises(
        ValueError,
        match="`token_strings` must hold one string per token id "
        "\\(13 for this model\\); received 2",
    ):
        make_captioning_serving_fn(model, 5, token_strings=["a", "b"])
    with pytest.raises(ValueError, match="pass `token_strings`"):
        make_captioning_serving_fn(_features_model_vocab(20), 5)


def _features_model_vocab(vocab):
    return show_attend_tell(vocab, feature_shape=(10, 6), embedding_dim=8, units=16)


def test_bad_arguments():
    with pytest.raises(ValueError, match="give exactly one of `image_shape` and `feature_shape`"):
        show_attend_tell(VOCAB)
    with pytest.raises(ValueError, match="give exactly one"):
        show_attend_tell(VOCAB, image_shape=IMAGE_SHAPE, feature_shape=(10, 6))
    with pytest.raises(
        ValueError,
        match="`image_shape` must be a tuple of 3 positive integers; received \\(16, 48\\)",
    ):
        show_attend_tell(VOCAB, image_shape=(16, 48))
    with pytest.raises(ValueError, match="`feature_shape` must be a tuple of 2 positive"):
        show_attend_tell(VOCAB, feature_shape=(10, 0))
    with pytest.raises(ValueError, match="too small for 3 2x2 poolings"):
        show_attend_tell(VOCAB, image_shape=(4, 48, 1), encoder_filters=(4, 4, 4))
    with pytest.raises(ValueError, match="`encoder_filters` must be a tuple of positive"):
        show_attend_tell(VOCAB, image_shape=IMAGE_SHAPE, encoder_filters=(8, -1))
    with pytest.raises(ValueError, match="`regularization` must be a non-negative float"):
        _features_model(regularization=-0.5)
    with pytest.raises(ValueError, match="`dropout` must be a float in \\[0, 1\\)"):
        _features_model(dropout=1.0)
    with pytest.raises(ValueError, match="show_attend_tell: `units` must be a positive integer"):
        show_attend_tell(VOCAB, feature_shape=(10, 6), units=0)
    model = _features_model()
    with pytest.raises(ValueError, match="`beam_width` must be a positive integer"):
        caption_beam_search(model, _features_inputs()["features"], 4, beam_width=0)
    with pytest.raises(ValueError, match="`inputs` must hold 'features' for this model"):
        caption_attention(model, {"image": np.zeros((1, 10, 6)), "decoder_input": [[1]]})
    with pytest.raises(TypeError, match="`inputs` must be a dict"):
        caption_attention(model, np.zeros((1, 10, 6)))

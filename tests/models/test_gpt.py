"""GPT: cached generation equals recomputing the whole prefix, prompts of several lengths in
one batch, the sampling filters, saving, and learning a planted rule."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.conventions import END
from keras_adl.data.pretraining import lm_windows, pack_for_lm
from keras_adl.models.gpt import (
    attention_weights,
    compile_classifier,
    compile_lm,
    filter_logits,
    generate,
    gpt_classifier,
    gpt_lm,
)
from tests.harness import np_

SIZES = dict(sequence_length=14, model_dim=16, num_heads=2, intermediate_dim=32)


def _uncached(model, prompt, max_length):
    sequence = [END] + list(prompt)
    while len(sequence) < max_length + 1:
        logits = np_(model(np.array([sequence], "int32")))[0, -1]
        sequence.append(int(logits.argmax()))
    out = sequence[1:]
    if END in out[len(prompt) :]:
        stop = out.index(END, len(prompt))
        out = out[: stop + 1] + [0] * (len(out) - stop - 1)
    return out


def test_cached_greedy_generation_equals_recomputing_the_prefix():
    keras.utils.set_random_seed(1)
    model = gpt_lm(30, dropout=0.0, **SIZES)
    prompts = np.array([[5, 6, 7, 0], [8, 0, 0, 0], [9, 10, 11, 12]], "int32")
    cached = np_(generate(model, prompts, 12))
    for row, prompt in zip(cached, prompts):
        prompt = [int(p) for p in prompt if p]
        assert row.tolist() == _uncached(model, prompt, 12)
        assert row[: len(prompt)].tolist() == prompt
    # Traced and compiled: the same tokens.
    compiled = tf.function(lambda p: generate(model, p, 12), jit_compile=True)
    np.testing.assert_array_equal(np_(compiled(tf.constant(prompts))), cached)


def test_sampling_filters_and_top_k_one_is_greedy():
    logits = np.array([[2.0, 1.0, 0.5, -1.0]], "float32")
    assert (np_(filter_logits(logits, top_k=2)) > -1e8).tolist() == [[True, True, False, False]]
    # p = softmax: 0.61, 0.22, 0.14, 0.03 — the nucleus of 0.7 holds the first two.
    assert (np_(filter_logits(logits, top_p=0.7)) > -1e8).tolist() == [[True, True, False, False]]
    assert (np_(filter_logits(logits, top_p=0.5)) > -1e8).tolist() == [[True, False, False, False]]
    np.testing.assert_allclose(np_(filter_logits(logits, temperature=2.0)), logits / 2, rtol=1e-6)
    keras.utils.set_random_seed(2)
    model = gpt_lm(30, dropout=0.0, **SIZES)
    prompts = np.array([[5, 6], [7, 0]], "int32")
    greedy = np_(generate(model, prompts, 10))
    sampled = np_(generate(model, prompts, 10, temperature=1.0, top_k=1, seed=3))
    np.testing.assert_array_equal(sampled, greedy)
    free = np_(generate(model, np.array([[5, 6]] * 8, "int32"), 10, temperature=1.5, seed=4))
    assert len({tuple(r) for r in free}) > 1  # sampling varies across rows
    with pytest.raises(ValueError, match="`max_length` must be at most the model's"):
        generate(model, prompts, 20)


@pytest.mark.slow  # ~10 s; the family's learning test in the fast suite is BERT's planted rule
# (tests/models/test_bert.py); this file checks GPT's generation and pooling without training
def test_learns_a_planted_rule_and_round_trips(tmp_path):
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    # Documents count up from a random start: after a prefix, every next id is determined.
    documents = [list(range(s, s + 8)) for s in rng.integers(5, 22, 600)]
    inputs, targets = lm_windows(documents, 13)
    model = compile_lm(gpt_lm(30, dropout=0.0, **SIZES), learning_rate=5e-3)
    model.fit(inputs, targets, batch_size=32, epochs=8, verbose=0)
    held_in, held_out = lm_windows([list(range(s, s + 8)) for s in (7, 12, 15, 20)] * 4, 13)
    figures = model.evaluate(held_in, held_out, verbose=0, return_dict=True)
    assert figures["perplexity"] < 3.0, figures  # a uniform guess: 30
    out = np_(generate(model, np.array([[9, 10, 11]], "int32"), 8))[0]
    assert out.tolist()[:8] == [9, 10, 11, 12, 13, 14, 15, 16]
    model.save(tmp_path / "gpt.keras")
    restored = keras.saving.load_model(tmp_path / "gpt.keras")
    np.testing.assert_allclose(np_(restored(held_in[:2])), np_(model(held_in[:2])), rtol=1e-5)


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_classifier_reads_the_last_real_token_and_learns_with_the_lm_loss(tmp_path):
    """The class depends on the first piece; the classifier must carry it to the closing
    [SEP] through causal attention. The auxiliary LM loss trains the shared LM."""
    keras.utils.set_random_seed(5)
    rng = np.random.default_rng(5)
    lengths = rng.integers(2, 9, 256)
    labels = rng.integers(0, 3, 256)
    texts = [[5 + int(c)] + list(rng.integers(8, 30, n - 1)) for c, n in zip(labels, lengths)]
    token_ids, next_ids = (np_(t) for t in pack_for_lm(texts, 12))
    lm = gpt_lm(30, dropout=0.0, **dict(SIZES, sequence_length=12))
    model = gpt_classifier(lm, 3, dropout=0.0)
    model = compile_classifier(model, lm_loss_weight=0.5, learning_rate=3e-3)
    # The pooled vector is the last decoder's state at the closing [SEP]: the logits equal
    # the classifier on that state.
    hidden = keras.Model(lm.input, lm.get_layer("decoder_1").output)  # the default 2 layers
    last = (token_ids > 0).sum(1) - 1
    states = np_(hidden(token_ids[:4]))[np.arange(4), last[:4]]
    expected = np_(model.get_layer("classifier")(states))
    np.testing.assert_allclose(np_(model(token_ids[:4])["classes"]), expected, rtol=1e-4, atol=1e-5)
    lm_before = np_(lm(token_ids[:4]))
    targets = {"classes": labels, "lm": next_ids}
    history = model.fit(token_ids, targets, batch_size=32, epochs=12, verbose=0)
    assert history.history["classes_accuracy"][-1] > 0.9  # chance: 1/3
    assert not np.allclose(np_(lm(token_ids[:4])), lm_before)  # the LM is shared and trained
    model.save(tmp_path / "classifier.keras")
    restored = keras.saving.load_model(tmp_path / "classifier.keras")
    np.testing.assert_allclose(
        np_(restored(token_ids[:8])["classes"]), np_(model(token_ids[:8])["classes"]), rtol=1e-4
    )
    assert sorted(gpt_classifier(lm, 3, lm_loss=False).output) == ["classes"]
    with pytest.raises(ValueError, match="must be a `gpt_lm` model"):
        gpt_classifier(keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)]), 3)
    weights = np_(attention_weights(lm, token_ids[:2]))
    assert weights.shape == (2, 2, 2, 12, 12)  # layers, batch, heads, queries, keys
    np.testing.assert_array_equal(np.triu(weights, 1), 0.0)  # causal


def test_classifier_on_a_reloaded_lm_reads_the_last_real_token(tmp_path):
    # The fast check of the pooling (the learning test is slow): on an LM reloaded in a fresh
    # session, the logits are the classifier on the decoder's state at each row's last real
    # token. (The pooling is a named layer, so it cannot clash with automatic operation names
    # a reloaded model was saved with, as `keras.ops` calls could.)
    keras.backend.clear_session()
    keras.utils.set_random_seed(6)
    sizes = dict(SIZES, sequence_length=8, num_layers=1)
    gpt_lm(30, dropout=0.0, **sizes).save(tmp_path / "lm.keras")
    keras.backend.clear_session()
    lm = keras.saving.load_model(tmp_path / "lm.keras")
    model = gpt_classifier(lm, 3, dropout=0.0, lm_loss=False)
    token_ids = np.array([[2, 7, 9, 2, 0, 0, 0, 0], [2, 5, 6, 8, 9, 11, 12, 2]], "int32")
    states = np_(keras.Model(lm.input, lm.get_layer("decoder_0").output)(token_ids))
    expected = np_(model.get_layer("classifier")(states[[0, 1], [3, 7]]))
    np.testing.assert_allclose(np_(model(token_ids)["classes"]), expected, rtol=1e-4, atol=1e-5)


def test_classifier_needs_the_padding_mask():
    class DropsTheMask(keras.layers.Layer):
        def call(self, x):
            return x

    token_ids = keras.Input((8,), dtype="int32")
    embedded = keras.layers.Embedding(30, 16, mask_zero=True, name="embedding")(token_ids)
    with pytest.warns(UserWarning, match="destroy the mask"):
        unmasked = keras.Model(token_ids, DropsTheMask(name="decoder_0")(embedded))
    with pytest.raises(ValueError, match="must carry the padding mask"):
        gpt_classifier(unmasked, 3)

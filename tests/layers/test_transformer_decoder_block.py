import keras
import numpy as np
import pytest

from keras_adl.layers import TransformerDecoderBlock
from tests.harness import np_, run_layer_test

TARGET = np.random.RandomState(0).rand(2, 6, 8).astype("float32")
SOURCE = np.random.RandomState(1).rand(2, 5, 12).astype("float32")


@pytest.mark.portable
def test_full_harness_encoder_decoder():
    run_layer_test(
        TransformerDecoderBlock,
        {"num_heads": 2, "intermediate_dim": 16, "dropout": 0.1},
        {"inputs": TARGET, "encoder_outputs": SOURCE},
        (2, 6, 8),
        expected_num_trainable_weights=20,
        full=True,
    )


def test_harness_encoder_decoder_norm_first():
    run_layer_test(
        TransformerDecoderBlock,
        {"num_heads": 2, "intermediate_dim": 16, "dropout": 0.1, "norm_first": True},
        {"inputs": TARGET, "encoder_outputs": SOURCE},
        (2, 6, 8),
        expected_num_trainable_weights=20,
    )


def test_harness_decoder_only():
    run_layer_test(
        TransformerDecoderBlock,
        {"num_heads": 2, "intermediate_dim": 16},
        TARGET,
        (2, 6, 8),
        expected_num_trainable_weights=12,
    )


def test_causality():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    changed = TARGET.copy()
    changed[:, 4:] = 7.0
    a, b = np_(block(TARGET, SOURCE)), np_(block(changed, SOURCE))
    np.testing.assert_allclose(a[:, :4], b[:, :4], atol=1e-5)
    assert not np.allclose(a[:, 4:], b[:, 4:])


def test_encoder_padding_changes_nothing_and_gets_zero_weight():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    out, scores = block(TARGET, SOURCE, encoder_padding_mask=mask, return_attention_scores=True)
    changed = SOURCE.copy()
    changed[~mask] = -9.0
    np.testing.assert_allclose(
        np_(block(TARGET, changed, encoder_padding_mask=mask)), np_(out), atol=1e-5
    )
    cross = np_(scores["cross_attention"])
    assert np.all(cross[0, :, :, 3:] == 0)
    np.testing.assert_allclose(cross.sum(-1), 1.0, rtol=1e-5)
    self_w = np_(scores["self_attention"])
    assert np.all(np.triu(np.ones((6, 6)), 1)[None, None].astype(bool) <= (self_w == 0))


def test_decoder_padding_changes_no_unpadded_output():
    tokens = keras.Input((None,), dtype="int32")
    source = keras.Input((None, 12))
    x = keras.layers.Embedding(30, 8, mask_zero=True)(tokens)
    model = keras.Model([tokens, source], TransformerDecoderBlock(2, 16)(x, source))
    a = np.array([[3, 4, 0], [5, 0, 0]])
    b = np.array([[3, 4, 0, 0, 0], [5, 0, 0, 0, 0]])
    ya, yb = np_(model([a, SOURCE])), np_(model([b, SOURCE]))
    np.testing.assert_allclose(ya[0, :2], yb[0, :2], atol=1e-5)
    np.testing.assert_allclose(ya[1, :1], yb[1, :1], atol=1e-5)


@pytest.mark.parametrize("norm_first", [False, True])
def test_cached_incremental_decoding_equals_full_call(norm_first):
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16, norm_first=norm_first)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    full = np_(block(TARGET, SOURCE, encoder_padding_mask=mask))
    cache = block.initial_cache(2, 6)
    memory = block.precompute_cross_attention(SOURCE)
    outputs = []
    for t in range(6):
        out, cache = block(
            TARGET[:, t : t + 1],
            cross_attention_cache=memory,
            encoder_padding_mask=mask,
            cache=cache,
            cache_index=t,
        )
        outputs.append(np_(out))
    np.testing.assert_allclose(np.concatenate(outputs, 1), full, rtol=1e-5, atol=1e-5)


def test_cached_step_compiles_with_xla():
    import tensorflow as tf

    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    block(TARGET, SOURCE)
    memory = block.precompute_cross_attention(SOURCE)

    @tf.function(jit_compile=True)
    def step(x, cache, index):
        return block(x, cross_attention_cache=memory, cache=cache, cache_index=index)

    cache = block.initial_cache(2, 6)
    outputs = []
    for t in range(6):
        out, cache = step(TARGET[:, t : t + 1], cache, tf.constant(t))
        outputs.append(np_(out))
    np.testing.assert_allclose(np.concatenate(outputs, 1), np_(block(TARGET, SOURCE)), atol=1e-4)
    assert step.experimental_get_tracing_count() == 1


def test_bad_input():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    with pytest.raises(
        ValueError, match=r"batch sizes of `inputs` and `encoder_outputs` must match"
    ):
        block(TARGET, SOURCE[:1])
    decoder_only = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    decoder_only(TARGET)
    with pytest.raises(ValueError, match="built without them"):
        decoder_only(TARGET, SOURCE)
    with pytest.raises(
        ValueError, match=r"`encoder_outputs` must have rank 3; received shape \(2, 12\)"
    ):
        TransformerDecoderBlock(num_heads=2, intermediate_dim=16)(TARGET, SOURCE[:, 0])


def test_sublayers_start_from_different_weights():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=8)
    block(TARGET, TARGET)
    kernels = [
        block.self_attention.output_dense.kernel,
        block.cross_attention.query_dense.kernel,
        block.cross_attention.output_dense.kernel,
        block.ffn_intermediate.kernel,
        block.ffn_output.kernel,
    ]
    arrays = [np_(k) for k in kernels]
    for i in range(len(arrays)):
        for j in range(i + 1, len(arrays)):
            assert not np.allclose(arrays[i], arrays[j]), (kernels[i].path, kernels[j].path)


def test_left_padded_prompt_through_cache_equals_full_call():
    # A prompt chunk with padding is written through the cache in one call; later steps must not
    # attend to its padded slots, exactly as in the full masked call.
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    mask = np.array([[False, False, True, True, True, True], [True] * 6])
    full = np_(block(TARGET, SOURCE, padding_mask=mask))
    memory = block.precompute_cross_attention(SOURCE)
    cache = block.initial_cache(2, 6)
    prompt, cache = block(
        TARGET[:, :3],
        cross_attention_cache=memory,
        padding_mask=mask[:, :3],
        cache=cache,
        cache_index=0,
    )
    steps = [np_(prompt)]
    for t in range(3, 6):
        out, cache = block(
            TARGET[:, t : t + 1], cross_attention_cache=memory, cache=cache, cache_index=t
        )
        steps.append(np_(out))
    got = np.concatenate(steps, 1)
    np.testing.assert_allclose(got[mask], full[mask], rtol=1e-5, atol=1e-5)


def test_cache_errors():
    block = TransformerDecoderBlock(num_heads=2, intermediate_dim=16)
    with pytest.raises(ValueError, match="must be built"):
        block.initial_cache(2, 4)
    with pytest.raises(ValueError, match="must be built"):
        block.precompute_cross_attention(SOURCE)
    block(TARGET, SOURCE)
    memory = block.precompute_cross_attention(SOURCE)
    with pytest.raises(ValueError, match=r"overflows a cache of 4 steps"):
        block(
            TARGET[:, :2],
            cross_attention_cache=memory,
            cache=block.initial_cache(2, 4),
            cache_index=3,
        )
    with pytest.raises(ValueError, match=r"`cache` must be the \(keys, values, valid\) tuple"):
        block(
            TARGET[:, :1],
            cross_attention_cache=memory,
            cache=block.initial_cache(2, 4)[:2],
            cache_index=0,
        )

"""A model using every attention layer exports to a SavedModel that reproduces its outputs."""

import keras
import numpy as np
import tensorflow as tf

from keras_adl.layers import (
    BahdanauAttention,
    LuongAttention,
    MultiHeadCrossAttention,
    MultiHeadSelfAttention,
    PositionalEncoding,
    TransformerDecoderBlock,
    TransformerEncoderBlock,
)


def test_saved_model_reproduces_outputs(tmp_path):
    source = keras.Input((None,), dtype="int32", name="source")
    target = keras.Input((None,), dtype="int32", name="target")
    embed = keras.layers.Embedding(30, 16, mask_zero=True)
    x = PositionalEncoding()(embed(source))
    x = TransformerEncoderBlock(num_heads=2, intermediate_dim=32)(x)
    x = MultiHeadSelfAttention(num_heads=2)(x)
    y = PositionalEncoding()(embed(target))
    y = TransformerDecoderBlock(num_heads=2, intermediate_dim=32)(y, x)
    y = MultiHeadCrossAttention(num_heads=2)(y, x)
    bahdanau, weights = BahdanauAttention(8)(y, x, return_attention_scores=True)
    luong = LuongAttention("general")(y, x)
    model = keras.Model([source, target], [bahdanau + luong, weights])

    src = np.array([[3, 4, 5, 0], [6, 7, 0, 0]], "int32")
    tgt = np.array([[1, 2, 0], [8, 9, 2]], "int32")
    expected = model([src, tgt])
    model.export(str(tmp_path), format="tf_saved_model", verbose=False)
    reloaded = tf.saved_model.load(str(tmp_path))
    served = reloaded.serve([tf.constant(src), tf.constant(tgt)])
    for got, want in zip(served, expected):
        np.testing.assert_allclose(got.numpy(), keras.ops.convert_to_numpy(want), atol=1e-5)
    # The source mask survived export: padded source steps got zero weight.
    assert np.all(served[1].numpy()[1, :, 2:] == 0)

"""The papers' math as pure `keras.ops` functions (no weights, no state)."""

from keras_adl.ops.attention import (
    additive_scores,
    causal_mask,
    dot_scores,
    large_negative,
    masked_softmax,
    merge_heads,
    merge_masks,
    scaled_dot_product_attention,
    split_heads,
    weighted_sum,
)

__all__ = [
    "additive_scores",
    "causal_mask",
    "dot_scores",
    "large_negative",
    "masked_softmax",
    "merge_heads",
    "merge_masks",
    "scaled_dot_product_attention",
    "split_heads",
    "weighted_sum",
]

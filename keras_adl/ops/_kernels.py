"""The backends' own attention paths behind `scaled_dot_product_attention` (private).

The one module of `ops/` that calls a backend directly. Each path computes exactly
``softmax(scale · Q Kᵀ, masked) V`` with the library's semantics (a boolean mask broadcastable
to ``[B, H, S, T]``, an optional causal flag, zeros for a fully masked row) and returns ``None``
where it does not apply, so the caller keeps its composed ops:

- TensorFlow has no fused attention: `_blocked_tensorflow` walks the queries in blocks, so the
  forward and backward passes hold one ``[B, H, block, T]`` block of scores at a time instead of
  ``[B, H, S, T]``: memory linear in T (Rabe & Staats 2021, chunked over queries). A block spans
  every key, so its softmax is exact without FlashAttention's running max and sum; the gradient
  recomputes each block's softmax from Q and K rather than storing it, and takes the softmax
  gradient's row sums from ``rowsum(dO ∘ O)`` (Dao 2023).
- JAX: ``jax.nn.dot_product_attention`` asked by name for cuDNN's fused kernel on a GPU
  (float16/bfloat16, head size ≤ 128; cuDNN refuses a keys-only mask ``[B, 1, 1, T]``); the
  composed ops elsewhere, which beat ``jax.nn``'s XLA composition.
- PyTorch: ``torch.nn.functional.scaled_dot_product_attention`` (flash, memory-efficient, or
  the CPU's flash kernel, as PyTorch chooses).

References:
    - Rabe & Staats (2021). Self-attention Does Not Need O(n²) Memory. arXiv:2112.05682.
    - Dao (2023). FlashAttention-2: Faster Attention with Better Parallelism and Work
      Partitioning. arXiv:2307.08691.
"""

import keras
from keras import ops

from keras_adl.type_aliases import DType

# The running backend's own library, for its own attention path (the others need not be
# installed); the backend is chosen once, when Keras is imported.
if keras.backend.backend() == "tensorflow":
    import tensorflow as tf
elif keras.backend.backend() == "jax":
    import jax
elif keras.backend.backend() == "torch":
    import torch

# TensorFlow takes the blocked path once one head-batched score tensor [B, H, S, T] would hold
# this many elements (1 GiB in float32). The composed ops are faster on a CPU at every length
# (≈1.25×: the blocked gradient recomputes each block's softmax) but hold O(T²) memory.
BLOCKED_MIN_SCORES = 2**28
# Query rows per block: a block's scores are [B, H, QUERY_BLOCK, T] (float32); 256 measured
# faster than 128 and 512 at T = 2k (benchmarks/attention_memory.py --query-block).
QUERY_BLOCK = 256
# Blocks in flight at once outside XLA (TensorFlow's default is 10, i.e. 10 blocks of memory).
PARALLEL_BLOCKS = 1


def large_negative(dtype: DType) -> float:
    """A large negative number that ``dtype`` can hold, used to mask logits.

    ``float16`` cannot hold ``-1e9`` (it overflows to ``-inf`` and softmax of a row of ``-inf``
    is NaN), so the value depends on the dtype.

    Args:
        dtype: a dtype name or object.

    Returns:
        A Python float.

    Example:

    >>> large_negative("float16"), large_negative("float32")
    (-30000.0, -1000000000.0)
    """
    dtype = keras.backend.standardize_dtype(dtype)
    if dtype == "float16":
        return -3.0e4
    return -1.0e9


def backend_attention(query, key, value, mask, scale, causal, composed=None):
    """The backend's exact path for rank-4 inputs, or ``None`` where the composed ops apply.

    Args:
        query, key, value: ``[B, H, S, dk]``, ``[B, H, T, dk]``, ``[B, H, T, dv]``.
        mask: ``None`` or a boolean tensor broadcastable to ``[B, H, S, T]``.
        scale: float multiplying the scores.
        causal: whether query ``i`` sees only keys ``j ≤ i``.
        composed: optional callable giving the composed ops' result; on TensorFlow, where a
            size is unknown until run time, the graph chooses between it and the blocked path
            by the size of the scores.
    """
    if any(len(x.shape) != 4 for x in (query, key, value)):
        return None
    if mask is not None and len(mask.shape) != 4:
        return None
    backend = keras.backend.backend()
    if backend != "tensorflow" and not isinstance(scale, (int, float)):
        return None  # the fused kernels take a Python float
    if backend == "tensorflow":
        return _tensorflow(query, key, value, mask, scale, causal, composed)
    if backend == "jax":
        return _fused_jax(query, key, value, mask, scale, causal)
    if backend == "torch":
        return _fused_torch(query, key, value, mask, scale, causal)
    return None


def _tensorflow(query, key, value, mask, scale, causal, composed):
    """The blocked path for large score tensors; decided in the graph if a size is unknown."""
    if query.shape[2] is not None and query.shape[2] <= QUERY_BLOCK:
        return None  # one block: the composed ops with an extra softmax in the gradient
    sizes = [query.shape[0], query.shape[1], query.shape[2], key.shape[2]]
    if None not in sizes:
        if sizes[0] * sizes[1] * sizes[2] * sizes[3] < BLOCKED_MIN_SCORES:
            return None
        return _blocked_tensorflow(query, key, value, mask, scale, causal)
    if composed is None:
        return None
    batch, heads, length = tf.unstack(tf.shape(query, out_type=tf.int64)[:3])
    scores = batch * heads * length * tf.shape(key, out_type=tf.int64)[2]
    return tf.cond(
        tf.logical_and(length > QUERY_BLOCK, scores >= BLOCKED_MIN_SCORES),
        lambda: _blocked_tensorflow(query, key, value, mask, scale, causal),
        composed,
    )


def _row_has_keys(mask, causal, query_length):
    """``[..., S | 1, 1]`` boolean: whether a query row can attend to any key, or ``None``."""
    if mask is None:
        return None
    if causal:  # only where cuDNN took a mask with the causal flag: the mask is [.., S, T]
        rows = ops.arange(query_length, dtype="int32")[:, None]
        cols = ops.arange(mask.shape[-1], dtype="int32")[None, :]
        mask = ops.logical_and(mask, cols <= rows)
    return ops.any(mask, axis=-1, keepdims=True)


def _zero_empty_rows(context, mask, causal, query_length):
    """Zeroes the context of rows with no key, whatever the kernel put there."""
    has_keys = _row_has_keys(mask, causal, query_length)
    if has_keys is None:
        return context
    return ops.where(has_keys, context, ops.zeros_like(context))


def _fused_jax(query, key, value, mask, scale, causal):
    if query.shape[-1] != value.shape[-1] or not _cudnn_eligible(query):
        # XLA's composed attention (what jax.nn picks unless asked) is slower than ours and
        # holds more memory: 0.57× at T = 2k on a CPU (benchmarks/attention_memory.py).
        return None
    swap = lambda x: jax.numpy.swapaxes(x, 1, 2)  # noqa: E731  [B, H, T, d] ↔ [B, T, H, d]
    try:
        context = jax.nn.dot_product_attention(
            swap(query),
            swap(key),
            swap(value),
            mask=mask,
            scale=scale,
            is_causal=causal,
            implementation="cudnn",
        )
    except (NotImplementedError, ValueError, RuntimeError):
        return None  # refused at trace time, e.g. a keys-only mask [B, 1, 1, T]
    return _zero_empty_rows(swap(context), mask, causal, query.shape[2])


def _cudnn_eligible(query):
    """Whether cuDNN's fused attention may take ``query``: a GPU, 16-bit floats, d ≤ 128."""
    dtype = keras.backend.standardize_dtype(query.dtype)
    head = query.shape[-1]
    if jax.default_backend() != "gpu" or dtype not in ("float16", "bfloat16"):
        return False
    # cuDNN's flash attention needs an Ampere or later NVIDIA GPU (as Keras checks); a ROCm
    # device has no compute capability.
    capability = getattr(jax.devices()[0], "compute_capability", None)
    try:
        recent = capability is not None and float(capability) >= 8.0
    except ValueError:
        recent = False
    return recent and head is not None and head <= 128 and head % 8 == 0


def _fused_torch(query, key, value, mask, scale, causal):
    length = query.shape[2]
    if mask is not None:
        mask = ops.cast(mask, "bool")
        if causal:
            # PyTorch takes a mask or the causal flag, not both.
            rows = torch.arange(length, device=mask.device)[:, None]
            cols = torch.arange(key.shape[2], device=mask.device)[None, :]
            mask = torch.logical_and(mask, cols <= rows)
        # A finite fill keeps a fully masked row finite (zeroed below), where -inf gives NaN.
        bias = torch.zeros((), dtype=query.dtype, device=mask.device)
        fill = torch.tensor(large_negative(query.dtype), dtype=query.dtype, device=mask.device)
        attn_mask = torch.where(mask, bias, fill)
    else:
        attn_mask = None
    context = torch.nn.functional.scaled_dot_product_attention(
        query.contiguous(),
        key.contiguous(),
        value.contiguous(),
        attn_mask=attn_mask,
        is_causal=causal and mask is None,
        scale=scale,
    )
    return _zero_empty_rows(context, mask, False, length)  # the mask holds the causal part


def _blocked_tensorflow(query, key, value, mask, scale, causal):
    """TensorFlow's attention over blocks of ``QUERY_BLOCK`` query rows, its gradient
    recomputing each block's softmax (the module docstring)."""
    dtype = query.dtype
    length = tf.shape(query)[2]
    blocks = (length + QUERY_BLOCK - 1) // QUERY_BLOCK
    to_blocks, from_blocks = _block_reshapes(length, blocks)
    keep = _block_mask(mask, causal, length, tf.shape(key)[2], to_blocks)

    @tf.custom_gradient
    def attend(query, key, value):
        scaled = to_blocks(query * tf.cast(scale, dtype))

        def weights(index):
            """The block's attention weights ``[B, H, QUERY_BLOCK, T]`` (float32)."""
            return _block_weights(scaled[index], key, keep(index))

        context_blocks = _blocked_forward(weights, value, blocks)

        def grad(upstream):
            d_queries, d_key, d_value = _blocked_backward(
                weights, to_blocks(upstream), context_blocks, scaled, key, value, scale, blocks
            )
            d_query = from_blocks(d_queries)
            return d_query, tf.cast(d_key, key.dtype), tf.cast(d_value, value.dtype)

        return from_blocks(context_blocks), grad

    return attend(query, key, value)


def _block_reshapes(length, blocks):
    """``(to_blocks, from_blocks)``: ``[b, h, S, n] → [blocks, b, h, QUERY_BLOCK, n]`` (rows
    padded), and the inverse (rows cut back to ``S = length``)."""
    padded = blocks * QUERY_BLOCK

    def to_blocks(x):
        x = tf.pad(x, [[0, 0], [0, 0], [0, padded - tf.shape(x)[2]], [0, 0]])
        shape = tf.shape(x)
        x = tf.reshape(x, [shape[0], shape[1], blocks, QUERY_BLOCK, shape[3]])
        return tf.transpose(x, [2, 0, 1, 3, 4])

    def from_blocks(x):
        x = tf.transpose(x, [1, 2, 0, 3, 4])
        shape = tf.shape(x)
        return tf.reshape(x, [shape[0], shape[1], padded, shape[4]])[:, :, :length]

    return to_blocks, from_blocks


def _block_mask(mask, causal, length, key_length, to_blocks):
    """``keep(index)``: block ``index``'s boolean mask (the given mask and the causal one),
    broadcastable to ``[B, H, QUERY_BLOCK, T]``, or None."""
    if mask is not None and mask.shape[2] is None:
        # Rows unknown until run time ([.., 1, T] or [.., S, T]): broadcast them to S.
        shape = tf.shape(mask)
        mask = tf.broadcast_to(mask, tf.stack([shape[0], shape[1], length, shape[3]]))
    row_mask = mask is not None and mask.shape[2] != 1
    mask_blocks = to_blocks(tf.cast(mask, tf.int8)) if row_mask else None
    columns = tf.range(key_length)[None, :]

    def keep(index):
        parts = []
        if mask is not None:
            parts.append(tf.cast(mask_blocks[index], tf.bool) if row_mask else mask)
        if causal:
            parts.append(columns <= index * QUERY_BLOCK + tf.range(QUERY_BLOCK)[:, None])
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else tf.logical_and(parts[0], parts[1])

    return keep


def _block_weights(scaled_block, key, valid):
    """One block's attention weights ``[B, H, QUERY_BLOCK, T]`` (float32) from its scaled
    queries, the keys and its mask ``valid`` (or None)."""
    logits = tf.cast(tf.matmul(scaled_block, key, transpose_b=True), tf.float32)
    if valid is None:
        return tf.nn.softmax(logits)
    # Masked entries get exactly 0 and a fully masked row all zeros (not uniform).
    fill = large_negative("float32")  # the block's scores are float32
    probabilities = tf.nn.softmax(tf.where(valid, logits, fill))
    return probabilities * tf.cast(valid, tf.float32)


def _blocked_forward(weights, value, blocks):
    """The context of every block, ``[blocks, B, H, QUERY_BLOCK, D]``, one block at a time."""
    dtype = value.dtype

    def forward(index, outputs):
        context = tf.matmul(tf.cast(weights(index), dtype), value)
        return index + 1, outputs.write(index, context)

    _, outputs = tf.while_loop(
        lambda index, _: index < blocks,
        forward,
        (0, tf.TensorArray(dtype, size=blocks)),
        parallel_iterations=PARALLEL_BLOCKS,
    )
    return outputs.stack()


def _blocked_backward(weights, upstream_blocks, context_blocks, scaled, key, value, scale, blocks):
    """The gradients ``(d_query blocks, d_key, d_value)`` (the latter two float32), each
    block's softmax recomputed: one block of scores at a time."""
    dtype = scaled.dtype  # the queries'

    def backward(index, d_queries, d_key, d_value):
        d_out = upstream_blocks[index]
        probabilities = weights(index)  # recomputed: one block of scores at a time
        row = tf.reduce_sum(
            tf.cast(d_out, tf.float32) * tf.cast(context_blocks[index], tf.float32),
            axis=-1,
            keepdims=True,
        )  # rowsum(dO ∘ O) = rowsum(dP ∘ P)
        d_value += tf.cast(
            tf.matmul(tf.cast(probabilities, dtype), d_out, transpose_a=True), tf.float32
        )  # Pᵀ dO
        d_weights = tf.cast(tf.matmul(d_out, value, transpose_b=True), tf.float32)
        d_scores = tf.cast(probabilities * (d_weights - row), dtype)  # P ∘ (dP − rowsum)
        d_query = tf.matmul(d_scores, key) * tf.cast(scale, dtype)
        d_key += tf.cast(tf.matmul(d_scores, scaled[index], transpose_a=True), tf.float32)
        return index + 1, d_queries.write(index, d_query), d_key, d_value

    _, d_queries, d_key, d_value = tf.while_loop(
        lambda index, *_: index < blocks,
        backward,
        (
            0,
            tf.TensorArray(dtype, size=blocks),
            tf.zeros(tf.shape(key), tf.float32),
            tf.zeros(tf.shape(value), tf.float32),
        ),
        parallel_iterations=PARALLEL_BLOCKS,
    )
    return d_queries.stack(), d_key, d_value

"""Attention math as pure ``keras.ops`` functions.

All functions are batch-first and stateless (no weights). Shapes use ``B`` for batch, ``S`` for
query steps, ``T`` for key/memory steps, ``H`` for heads, ``U`` for attention units and ``D`` for
feature sizes. A dimension written ``(S,)`` is optional: the functions accept a single query
step ``[B, D]`` as well as a sequence of queries ``[B, S, D]``.

References:
    - Bahdanau, Cho, Bengio (2014). Neural Machine Translation by Jointly Learning to Align
      and Translate. arXiv:1409.0473.
    - Luong, Pham, Manning (2015). Effective Approaches to Attention-based Neural Machine
      Translation. arXiv:1508.04025.
    - Vaswani et al. (2017). Attention Is All You Need. arXiv:1706.03762.
    - Xu et al. (2015). Show, Attend and Tell: Neural Image Caption Generation with Visual
      Attention. arXiv:1502.03044.
"""

import keras
from keras import ops

from keras_adl.ops._kernels import backend_attention, large_negative
from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_rank, check_same_dim

_LOW_PRECISION = ("float16", "bfloat16")


def masked_softmax(scores: Tensor, mask: Tensor | None = None, axis: int = -1) -> Tensor:
    """Softmax over ``axis`` that gives masked positions exactly zero weight.

    ``α_j = exp(e_j) / Σ_{k unmasked} exp(e_k)`` for unmasked ``j``, and ``α_j = 0`` for masked
    ``j``. A row in which every position is masked returns all zeros (not NaN, not uniform).
    Low-precision scores (``float16``/``bfloat16``) are normalised in ``float32`` and cast back.

    Args:
        scores: float tensor of logits, any shape, e.g. ``[B, S, T]`` or ``[B, H, S, T]``.
        mask: optional boolean (or 0/1) tensor broadcastable to ``scores``; ``True`` marks
            positions that may receive weight.
        axis: the axis to normalise over.

    Returns:
        Tensor of the shape and dtype of ``scores`` whose unmasked entries along ``axis`` sum to
        1 (or 0 for a fully masked row).

    Example:

    >>> w = masked_softmax(ops.zeros((1, 4)), mask=ops.array([[True, True, False, False]]))
    >>> ops.convert_to_numpy(w)
    array([[0.5, 0.5, 0. , 0. ]], dtype=float32)
    """
    dtype = keras.backend.standardize_dtype(scores.dtype)
    if dtype in _LOW_PRECISION:
        scores = ops.cast(scores, "float32")
    if scores.shape[axis] == 1:
        # One position: its weight is 1 (0 if masked). Skips Keras' size-1 softmax warning.
        weights = ops.ones_like(scores)
        if mask is not None:
            weights = weights * ops.cast(mask, weights.dtype)
    elif mask is None:
        weights = ops.softmax(scores, axis=axis)
    else:
        mask = ops.cast(mask, "bool")
        fill = ops.cast(large_negative(scores.dtype), scores.dtype)
        logits = ops.where(mask, scores, fill)
        weights = ops.softmax(logits, axis=axis)
        # Multiplying by the mask zeroes masked entries exactly and turns the uniform weights of
        # a fully masked row into zeros.
        weights = weights * ops.cast(mask, weights.dtype)
    return ops.cast(weights, dtype)


def additive_scores(
    query: Tensor, keys: Tensor, attention_v: Tensor, bias: Tensor | None = None
) -> Tensor:
    """Bahdanau's additive alignment scores ``e_ij = vᵀ tanh(q_i + k_j (+ b))``.

    The inputs are already projected: ``query = W_a s`` and ``keys = U_a h``, so the memory
    projection can be computed once per source sequence (Bahdanau et al. 2014, eq. A.1.2).

    Args:
        query: projected queries, ``[B, U]`` or ``[B, S, U]``.
        keys: projected keys, ``[B, T, U]``.
        attention_v: the scoring vector ``v_a``, ``[U]``.
        bias: optional bias inside the tanh, ``[U]``.

    Returns:
        Scores ``[B, T]`` for a rank-2 query, ``[B, S, T]`` for a rank-3 query.

    Example:

    >>> e = additive_scores(ops.ones((2, 3, 4)), ops.ones((2, 5, 4)), ops.ones((4,)))
    >>> tuple(e.shape)
    (2, 3, 5)
    """
    query, keys, attention_v = (ops.convert_to_tensor(x) for x in (query, keys, attention_v))
    single_step = len(query.shape) == 2
    if single_step:
        query = ops.expand_dims(query, 1)
    hidden = ops.expand_dims(query, 2) + ops.expand_dims(keys, 1)  # [B, S, T, U]
    if bias is not None:
        hidden = hidden + ops.convert_to_tensor(bias)
    # e = vᵀ tanh(W q + U k + b), as a reduction: a rank-4 × rank-1 matmul lowers to a
    # tensordot whose gradient XLA cannot compile inside a loop with dynamic lengths.
    scores = ops.sum(ops.tanh(hidden) * attention_v, axis=-1)
    if single_step:
        scores = ops.squeeze(scores, 1)
    return scores


def dot_scores(query: Tensor, keys: Tensor, scale: float | Tensor | None = None) -> Tensor:
    """Dot-product scores ``e_ij = scale · q_iᵀ k_j`` (Luong "dot"; Vaswani with ``1/sqrt(d)``).

    Args:
        query: ``[..., D]`` (one step per batch entry, e.g. ``[B, D]``) or ``[..., S, D]``
            (e.g. ``[B, S, D]`` or ``[B, H, S, D]``).
        keys: ``[..., T, D]`` with the same leading dims as ``query``.
        scale: optional Python float or scalar tensor multiplying the scores.

    Returns:
        Scores ``[..., T]`` for a single-step query, ``[..., S, T]`` otherwise.

    Example:

    >>> e = dot_scores(ops.ones((2, 3, 4)), ops.ones((2, 5, 4)), scale=0.5)
    >>> float(e[0, 0, 0])
    2.0
    """
    query, keys = ops.convert_to_tensor(query), ops.convert_to_tensor(keys)
    single_step = len(query.shape) == len(keys.shape) - 1
    if single_step:
        query = ops.expand_dims(query, -2)
    if scale is not None:
        # Scaling the (smaller) query rather than the scores saves work and keeps float16 small.
        query = query * ops.cast(scale, query.dtype)
    scores = ops.matmul(query, ops.swapaxes(keys, -1, -2))
    if single_step:
        scores = ops.squeeze(scores, -2)
    return scores


def context_scores(keys: Tensor, context_vector: Tensor) -> Tensor:
    """Scores of every step against a learned context vector: ``e_t = u_tᵀ u_ctx``.

    The "informative word / sentence" query of the Hierarchical Attention Network (Yang et al.
    2016, eq. 6 and 9): ``u_ctx`` is a weight vector, the same for every example, not a
    per-example query.

    Args:
        keys: ``[..., T, U]`` projected hidden states ``u_t = tanh(W h_t + b)``.
        context_vector: ``[U]``.

    Returns:
        Scores ``[..., T]``.

    Example:

    >>> e = context_scores(ops.ones((2, 3, 4)), ops.array([1.0, 0.0, 2.0, 0.0]))
    >>> ops.convert_to_numpy(e[0])
    array([3., 3., 3.], dtype=float32)

    References:
        Yang et al. (2016). Hierarchical Attention Networks for Document Classification,
        eq. 6 and 9. NAACL-HLT.
    """
    where = "context_scores: "
    keys_shape = check_rank("keys", keys, tuple(range(2, 8)), where=where)
    vector_shape = check_rank("context_vector", context_vector, 1, where=where)
    check_same_dim(
        "keys", keys_shape, -1, "context_vector", vector_shape, 0, "The feature sizes", where=where
    )
    keys = ops.convert_to_tensor(keys)
    return ops.sum(keys * ops.cast(context_vector, keys.dtype), axis=-1)  # u_tᵀ u_ctx


def causal_mask(
    query_length: int | Tensor, key_length: int | Tensor, offset: int | Tensor = 0
) -> Tensor:
    """Boolean mask letting query step ``i`` see key steps ``j ≤ i + offset``.

    With a key/value cache, the queries of the current call start at absolute position
    ``offset``; positions of the cache that were not written yet (``j > i + offset``) are masked
    too.

    Args:
        query_length: number of query steps ``S`` (int or scalar tensor).
        key_length: number of key steps ``T`` (int or scalar tensor).
        offset: absolute position of the first query (int or scalar tensor).

    Returns:
        Boolean tensor ``[S, T]``.

    Example:

    >>> ops.convert_to_numpy(causal_mask(2, 3, offset=1))
    array([[ True,  True, False],
           [ True,  True,  True]])
    """
    rows = ops.expand_dims(ops.arange(query_length, dtype="int32"), 1)
    cols = ops.expand_dims(ops.arange(key_length, dtype="int32"), 0)
    return cols <= rows + ops.cast(offset, "int32")


def weighted_sum(weights: Tensor, values: Tensor) -> Tensor:
    """Context vectors ``c_i = Σ_j α_ij v_j``.

    Args:
        weights: ``[..., T]`` (single step) or ``[..., S, T]``.
        values: ``[..., T, D]``.

    Returns:
        ``[..., D]`` or ``[..., S, D]``.

    Example:

    >>> weights = ops.array([[0.25, 0.75]])
    >>> values = ops.array([[[1.0, 0.0], [0.0, 4.0]]])
    >>> ops.convert_to_numpy(weighted_sum(weights, values))
    array([[0.25, 3.  ]], dtype=float32)
    """
    single_step = len(weights.shape) == len(values.shape) - 1
    if single_step:
        weights = ops.expand_dims(weights, -2)
    context = ops.matmul(weights, values)
    if single_step:
        context = ops.squeeze(context, -2)
    return context


def merge_masks(
    query_mask: Tensor | None = None,
    key_mask: Tensor | None = None,
    attention_mask: Tensor | None = None,
    causal: Tensor | None = None,
) -> Tensor | None:
    """Combines padding, attention and causal masks into one ``[B, S, T]`` mask (or ``None``).

    Args:
        query_mask: optional ``[B, S]`` mask of valid query steps.
        key_mask: optional ``[B, T]`` mask of valid key steps.
        attention_mask: optional mask broadcastable to ``[B, S, T]``.
        causal: optional ``[S, T]`` mask, e.g. from `causal_mask`.

    Returns:
        Boolean tensor broadcastable to ``[B, S, T]`` that is ``True`` where every given mask is,
        or ``None`` if no mask was given.

    Example:

    >>> mask = merge_masks(
    ...     query_mask=ops.array([[True, False]]), key_mask=ops.array([[True, True, False]]))
    >>> ops.convert_to_numpy(mask)
    array([[[ True,  True, False],
            [False, False, False]]])
    >>> merge_masks() is None
    True
    """
    parts = []
    if query_mask is not None:
        parts.append(ops.expand_dims(ops.cast(query_mask, "bool"), -1))
    if key_mask is not None:
        parts.append(ops.expand_dims(ops.cast(key_mask, "bool"), -2))
    for extra in (attention_mask, causal):
        if extra is not None:
            parts.append(ops.cast(extra, "bool"))
    if not parts:
        return None
    mask = parts[0]
    for part in parts[1:]:
        mask = ops.logical_and(mask, part)
    return mask


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    mask: Tensor | None = None,
    scale: float | Tensor | None = None,
    causal: bool = False,
) -> Tensor:
    """``softmax(scale · Q Kᵀ, masked) V`` on the fastest exact path the backend has.

        S = scale · Q Kᵀ,   P = masked_softmax(S, mask),   O = P V

    For rank-4 inputs ``[B, H, T, d]`` the backend's own path runs where it has one:
    PyTorch's ``scaled_dot_product_attention``; cuDNN's fused kernel through JAX's
    ``dot_product_attention`` on a GPU in float16/bfloat16; and on TensorFlow, once the scores
    ``[B, H, S, T]`` would take 1 GiB (2²⁸ elements), attention in blocks of 256 queries whose
    forward and backward passes hold one ``[B, H, 256, T]`` block of scores at a time (memory
    O(T) instead of O(T²); Rabe & Staats 2021), recomputing each block's softmax in the backward
    pass. Elsewhere the composed ops run with a custom gradient that uses ``rowsum(dP ∘ P) =
    rowsum(dO ∘ O)`` (the identity FlashAttention relies on), so the softmax gradient
    ``dS = P ∘ (dP − rowsum(dO ∘ O))`` reads the small ``[.., S, d]`` tensors instead of an
    extra pass over the ``[.., S, T]`` score tensor. Every path gives the values and gradients
    of the composed ops (`dot_scores`, `masked_softmax`, `weighted_sum`) to rounding; use those
    when the weights themselves are needed or dropout is applied to them.

    Args:
        query: ``[..., S, dk]`` (e.g. ``[B, H, S, dk]``).
        key: ``[..., T, dk]``.
        value: ``[..., T, dv]``.
        mask: optional boolean, broadcastable to ``[..., S, T]``; fully masked rows give zero
            context.
        scale: optional float multiplying the scores (``1/sqrt(dk)`` for the Transformer).
        causal: if True, query step ``i`` sees only key steps ``j ≤ i`` (combined with
            ``mask``). Unlike a mask from `causal_mask`, the flag costs no ``[S, T]`` tensor
            on TensorFlow's blocked path (an index comparison per block) nor on the fused
            kernels when no ``mask`` is given (PyTorch and cuDNN take the two combined).

    Returns:
        Context ``[..., S, dv]``.

    Example:

    >>> q = k = v = ops.ones((2, 4, 3, 8))
    >>> tuple(scaled_dot_product_attention(q, k, v, scale=8 ** -0.5).shape)
    (2, 4, 3, 8)
    >>> tuple(scaled_dot_product_attention(q, k, v, causal=True).shape)
    (2, 4, 3, 8)

    References:
        - Vaswani et al. (2017). Attention Is All You Need, eq. 1. arXiv:1706.03762.
        - Rabe & Staats (2021). Self-attention Does Not Need O(n²) Memory. arXiv:2112.05682.
        - Dao (2023). FlashAttention-2: Faster Attention with Better Parallelism and Work
          Partitioning. arXiv:2307.08691.
    """

    query, key, value = (ops.convert_to_tensor(x) for x in (query, key, value))
    if mask is not None:
        mask = ops.cast(mask, "bool")
    if scale is None:
        scale = 1.0
    causal = bool(causal)

    def composed():
        combined = mask
        if causal:
            steps = causal_mask(ops.shape(query)[-2], ops.shape(key)[-2])
            combined = merge_masks(attention_mask=mask, causal=steps)
        return _composed_attention(query, key, value, combined, scale)

    fast = backend_attention(query, key, value, mask, scale, causal, composed)
    return composed() if fast is None else fast


def _composed_attention(query, key, value, mask, scale):
    """The composed ops with the custom gradient described in `scaled_dot_product_attention`."""

    @ops.custom_gradient
    def attend(query, key, value):
        scaled = query * ops.cast(scale, query.dtype)
        weights = masked_softmax(ops.matmul(scaled, ops.swapaxes(key, -1, -2)), mask)
        context = ops.matmul(weights, value)

        def grad(*args, upstream=None):
            if upstream is None:
                (upstream,) = args
            d_value = ops.matmul(ops.swapaxes(weights, -1, -2), upstream)  # Pᵀ dO
            d_weights = ops.matmul(upstream, ops.swapaxes(value, -1, -2))  # dO Vᵀ
            row = ops.sum(
                ops.cast(upstream, "float32") * ops.cast(context, "float32"), -1, keepdims=True
            )  # rowsum(dO ∘ O) = rowsum(dP ∘ P)
            d_scores = weights * (d_weights - ops.cast(row, weights.dtype))
            d_query = ops.matmul(d_scores, key) * ops.cast(scale, d_scores.dtype)
            d_key = ops.matmul(ops.swapaxes(d_scores, -1, -2), scaled)
            return d_query, d_key, d_value

        return context, grad

    return attend(query, key, value)


def split_heads(x: Tensor, num_heads: int) -> Tensor:
    """``[B, T, H·d] → [B, H, T, d]``.

    Args:
        x: ``[B, T, H·d]``.
        num_heads: number of heads ``H`` (divides the last dimension).

    Returns:
        ``[B, H, T, d]``: head ``h`` holds features ``h·d … (h+1)·d − 1`` of each step.

    Example:

    >>> x = ops.reshape(ops.arange(8.0), (1, 2, 4))
    >>> ops.convert_to_numpy(split_heads(x, 2))
    array([[[[0., 1.],
             [4., 5.]],
    <BLANKLINE>
            [[2., 3.],
             [6., 7.]]]], dtype=float32)
    """
    batch, length = ops.shape(x)[0], ops.shape(x)[1]
    x = ops.reshape(x, (batch, length, num_heads, x.shape[-1] // num_heads))
    return ops.transpose(x, (0, 2, 1, 3))


def merge_heads(x: Tensor) -> Tensor:
    """``[B, H, T, d] → [B, T, H·d]``.

    Args:
        x: ``[B, H, T, d]``.

    Returns:
        ``[B, T, H·d]``.

    Example:

    >>> x = ops.ones((2, 5, 12))
    >>> tuple(merge_heads(split_heads(x, 3)).shape)
    (2, 5, 12)
    """
    x = ops.transpose(x, (0, 2, 1, 3))
    batch, length = ops.shape(x)[0], ops.shape(x)[1]
    return ops.reshape(x, (batch, length, x.shape[2] * x.shape[3]))


def doubly_stochastic_penalty(attention: Tensor, mask: Tensor | None = None) -> Tensor:
    """Per-example doubly stochastic attention penalty of Show, Attend and Tell (without ``λ``).

        P = Σ_i (1 − Σ_t m_t α_ti)²

    Each step's weights ``α_t`` sum to 1 over the locations ``i`` by the softmax; the penalty
    pushes the weights of each location, summed over the decoding steps, towards 1 as well, so
    that over a caption the model attends to every part of the image (Xu et al. 2015, eq. 14).
    Only real decoder steps count (``m_t = 1``); padded steps are left out of the sum. With
    fewer steps ``T`` than locations ``L`` the penalty cannot reach 0: its minimum is
    ``L (1 − T/L)²``. Computed in ``float32`` whatever the dtype of ``attention``, since it
    becomes a loss term.

    Args:
        attention: ``[B, S, L]`` attention weights of ``S`` decoder steps over ``L`` locations.
        mask: optional ``[B, S]`` boolean (or 0/1) mask of real decoder steps.

    Returns:
        ``float32`` tensor ``[B]``: the penalty of each example.

    Example:

    >>> alpha = ops.array([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]])  # 2 steps, 3 locations
    >>> float(doubly_stochastic_penalty(alpha)[0])  # (1-1)² + (1-1)² + (1-0)²
    1.0
    >>> float(doubly_stochastic_penalty(alpha, mask=ops.array([[True, False]]))[0])
    2.0

    References:
        Xu et al. (2015). Show, Attend and Tell: Neural Image Caption Generation with Visual
        Attention, eq. 14. arXiv:1502.03044.
    """
    where = "doubly_stochastic_penalty: "
    shape = check_rank("attention", attention, 3, where=where)
    attention = ops.cast(attention, "float32")
    if mask is not None:
        mask_shape = check_rank("mask", mask, 2, where=where)
        check_same_dim("attention", shape, 0, "mask", mask_shape, 0, "The batch sizes", where=where)
        check_same_dim("attention", shape, 1, "mask", mask_shape, 1, "The step counts", where=where)
        attention = attention * ops.expand_dims(ops.cast(mask, "float32"), -1)  # m_t α_ti
    coverage = ops.sum(attention, axis=1)  # Σ_t m_t α_ti, [B, L]
    return ops.sum(ops.square(1.0 - coverage), axis=-1)  # Σ_i (1 − Σ_t m_t α_ti)²

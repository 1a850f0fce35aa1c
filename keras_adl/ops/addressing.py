"""Memory addressing of the Neural Turing Machine and the Differentiable Neural Computer.

Pure ``keras.ops`` functions, batch-first and multi-head. Shapes use ``B`` for batch, ``N`` for
memory slots, ``W`` for the memory (word) width, ``H`` for heads (read or write), ``R`` for read
heads and ``S = 2·shift_range + 1`` for the number of allowed shifts. Weightings are
distributions (or sub-distributions) over the ``N`` slots, in the last axis.

The functions compute in the dtype of their inputs; the memory cells call them in ``float32``
(also under ``mixed_float16``), because products of many usages and ``γ``-powers underflow in
``float16``.

What differs from the reference codes (DeepMind's ``dnc/addressing.py``; the NTMs of Collier &
Beel and of pytorch-ntm):

- the cosine puts ``ε`` under the square roots of the norms only (DeepMind also adds it to the
  product of the norms); see `content_addressing`;
- sharpening works in log space with ``ε`` inside the logarithm; see `sharpen`;
- the usage update is differentiable with respect to the previous write weights (DeepMind stops
  that gradient); measured on the copy task, see `update_usage`.

References:
    - Graves, Wayne, Danihelka (2014). Neural Turing Machines. arXiv:1410.5401. (NTM)
    - Graves et al. (2016). Hybrid computing using a neural network with dynamic external
      memory. Nature 538, 471-476. (DNC; equations numbered as in its Methods section.)
"""

from keras import ops

from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_rank, check_same_dim

#: DeepMind's DNC ``_EPSILON``. Used under the square roots of the cosine's norms
#: (`content_addressing`), inside the logarithm of `sharpen`, and as the usage floor of
#: `allocation_weights` (as DeepMind's ``_allocation``).
EPSILON = 1e-6


def _last_dim(name, x, *, where=""):
    n = x.shape[-1]
    if n is None:
        raise ValueError(
            f"{where}the last dimension of `{name}` must be static; received shape "
            f"{tuple(x.shape)}."
        )
    return int(n)


def oneplus(x: Tensor) -> Tensor:
    """``1 + softplus(x)``: maps reals to ``[1, ∞)`` (key strengths, sharpening ``γ``).

    Args:
        x: a tensor.

    Returns:
        A tensor of ``x``'s shape.

    Example:

    >>> float(ops.convert_to_numpy(oneplus(ops.array(0.0))))  # 1 + ln 2
    1.6931471824645996
    """
    return 1.0 + ops.softplus(x)


def content_addressing(
    memory: Tensor, keys: Tensor, strengths: Tensor, epsilon: float = EPSILON
) -> Tensor:
    """Content-based addressing: a softmax over slots of the keys' cosine similarity.

        w^c_h(i) = exp(β_h K[k_h, M_i]) / Σ_j exp(β_h K[k_h, M_j]),
        K[u, v] = u·v / (‖u‖ ‖v‖)                      (NTM eq. 5-6; DNC eq. "C")

    Computed exactly as

        K[k, M_i] = k·M_i / (sqrt(‖k‖² + ε) · sqrt(‖M_i‖² + ε)),

    with ``ε`` under each square root only. The denominator is at least ``ε`` and ``|K| < 1``,
    so zero memory or zero keys give a cosine of 0, uniform weights and finite gradients; the
    softmax subtracts its maximum, so huge strengths stay finite. The reference codes differ
    slightly: DeepMind's DNC (``_vector_norms``, ``CosineWeights``) uses the same norms and
    also adds ``ε`` to their product, ``k·M_i / (sqrt(‖k‖² + ε) sqrt(‖M_i‖² + ε) + ε)``;
    Collier & Beel's NTM uses plain norms, ``k·M_i / (‖k‖ ‖M_i‖ + 1e-8)``; pytorch-ntm adds
    ``1e-16`` to every entry of ``k`` and ``M`` before torch's ``cosine_similarity``. They
    differ only when a norm is near or below ``sqrt(ε) = 1e-3`` (e.g. an empty slot): there
    ours and DeepMind's shrink the cosine towards 0, the NTM codes keep about the true cosine.

    Args:
        memory: ``[B, N, W]``.
        keys: ``[B, H, W]``, one key per head.
        strengths: ``[B, H]``, key strengths ``β ≥ 0``.
        epsilon: added to the squared norms, under the square roots.

    Returns:
        Content weights ``[B, H, N]``; each row sums to 1.

    Example:

    >>> memory = ops.convert_to_tensor([[[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]]])
    >>> w = content_addressing(memory, ops.array([[[0.0, 2.0]]]), ops.array([[50.0]]))
    >>> int(ops.convert_to_numpy(ops.argmax(w, axis=-1))[0, 0])
    1
    """
    where = "content_addressing: "
    m_shape = check_rank("memory", memory, 3, where=where)
    k_shape = check_rank("keys", keys, 3, where=where)
    check_rank("strengths", strengths, 2, where=where)
    check_same_dim("memory", m_shape, 2, "keys", k_shape, 2, "The width W", where=where)
    dot = ops.einsum("bhw,bnw->bhn", keys, memory)
    key_norm = ops.sqrt(ops.sum(ops.square(keys), axis=-1) + epsilon)  # [B, H]
    memory_norm = ops.sqrt(ops.sum(ops.square(memory), axis=-1) + epsilon)  # [B, N]
    cosine = dot / (key_norm[:, :, None] * memory_norm[:, None, :])
    return ops.softmax(strengths[:, :, None] * cosine, axis=-1)


def interpolate(content_weights: Tensor, previous_weights: Tensor, gate: Tensor) -> Tensor:
    """Interpolation with the previous weighting: ``w^g = g w^c + (1 − g) w_{t−1}`` (NTM eq. 7).

    Args:
        content_weights: ``[B, H, N]``.
        previous_weights: ``[B, H, N]``.
        gate: interpolation gates in ``[0, 1]``, ``[B, H]`` (or ``[B, H, 1]``).

    Returns:
        ``[B, H, N]``.

    Example:

    >>> w = interpolate(ops.ones((1, 1, 2)), ops.zeros((1, 1, 2)), ops.array([[0.25]]))
    >>> ops.convert_to_numpy(w)
    array([[[0.25, 0.25]]], dtype=float32)
    """
    where = "interpolate: "
    c_shape = check_rank("content_weights", content_weights, 3, where=where)
    p_shape = check_rank("previous_weights", previous_weights, 3, where=where)
    check_rank("gate", gate, (2, 3), where=where)
    check_same_dim(
        "content_weights",
        c_shape,
        2,
        "previous_weights",
        p_shape,
        2,
        "The number of slots N",
        where=where,
    )
    if len(gate.shape) == 2:
        gate = ops.expand_dims(gate, -1)
    return gate * content_weights + (1.0 - gate) * previous_weights


def circular_shift(weights: Tensor, shift_weights: Tensor) -> Tensor:
    """Rotation of each weighting by a distribution over shifts (NTM eq. 8).

        w̃(i) = Σ_j w(j) s(i − j mod N)

    Index ``k`` of ``shift_weights`` is the shift ``k − R`` (``R = (S − 1) / 2``): with
    ``S = 3``, index 0 moves weight one slot left, index 1 keeps it, index 2 moves it one slot
    right, wrapping around the ``N`` slots. Computed as ``Σ_k s_k · roll(w, k − R)``: ``S`` rolls
    of ``[B, H, N]``, not an ``N × N`` circulant matrix.

    Args:
        weights: ``[B, H, N]``.
        shift_weights: ``[B, H, S]`` with odd ``S``, a distribution over shifts.

    Returns:
        ``[B, H, N]``.

    Example:

    >>> w = ops.convert_to_tensor([[[0.0, 1.0, 0.0, 0.0]]])
    >>> right = ops.convert_to_tensor([[[0.0, 0.0, 1.0]]])
    >>> ops.convert_to_numpy(circular_shift(w, right))
    array([[[0., 0., 1., 0.]]], dtype=float32)
    """
    where = "circular_shift: "
    w_shape = check_rank("weights", weights, 3, where=where)
    s_shape = check_rank("shift_weights", shift_weights, 3, where=where)
    num_shifts = _last_dim("shift_weights", shift_weights, where=where)
    if num_shifts % 2 != 1:
        raise ValueError(
            f"{where}the last dimension of `shift_weights` (shifts −R..R) must be "
            f"odd; received shape {s_shape}."
        )
    del w_shape
    radius = num_shifts // 2
    shifted = 0.0
    for k in range(num_shifts):
        # roll(w, d)[i] = w[i − d]: the weight at slot j moves to slot j + d.
        shifted = shifted + shift_weights[:, :, k : k + 1] * ops.roll(weights, k - radius, axis=-1)
    return shifted


def sharpen(weights: Tensor, gamma: Tensor, epsilon: float = EPSILON) -> Tensor:
    """Sharpening ``w(i) = w̃(i)^γ / Σ_j w̃(j)^γ`` with ``γ ≥ 1`` (NTM eq. 9).

    Computed in log space, ``softmax(γ · log(w̃ + ε))`` ``= (w̃ + ε)^γ / Σ_j (w̃(j) + ε)^γ``, so
    a huge ``γ`` gives a one-hot weighting instead of ``0/0``, and zero weights stay finite.
    The NTM reference codes compute the power directly: Collier & Beel ``w̃^γ / Σ w̃^γ`` (no
    ``ε``), pytorch-ntm ``w̃^γ / (Σ w̃^γ + 1e-16)``.

    Args:
        weights: ``[B, H, N]``, non-negative.
        gamma: ``[B, H]`` (or ``[B, H, 1]``).
        epsilon: added inside the logarithm.

    Returns:
        ``[B, H, N]``, rows summing to 1.

    Example:

    >>> w = sharpen(ops.convert_to_tensor([[[0.2, 0.8]]]), ops.array([[2.0]]))
    >>> [round(float(x), 4) for x in ops.convert_to_numpy(w)[0, 0]]
    [0.0588, 0.9412]
    """
    where = "sharpen: "
    check_rank("weights", weights, 3, where=where)
    check_rank("gamma", gamma, (2, 3), where=where)
    if len(gamma.shape) == 2:
        gamma = ops.expand_dims(gamma, -1)
    return ops.softmax(gamma * ops.log(weights + epsilon), axis=-1)


def erase_and_write(memory: Tensor, weights: Tensor, erase: Tensor, add: Tensor) -> Tensor:
    """The NTM/DNC write: erase then add, for every write head at once (NTM eq. 3-4).

        M ← M ∘ Π_h (1 − w_h e_hᵀ) + Σ_h w_h a_hᵀ

    Args:
        memory: ``[B, N, W]``.
        weights: write weights ``[B, H, N]``.
        erase: erase vectors in ``[0, 1]``, ``[B, H, W]``.
        add: add (write) vectors ``[B, H, W]``.

    Returns:
        The new memory ``[B, N, W]``.

    Example:

    >>> m = erase_and_write(ops.ones((1, 2, 2)), ops.convert_to_tensor([[[1.0, 0.0]]]),
    ...                     ops.ones((1, 1, 2)), ops.convert_to_tensor([[[3.0, 4.0]]]))
    >>> ops.convert_to_numpy(m)
    array([[[3., 4.],
            [1., 1.]]], dtype=float32)
    """
    where = "erase_and_write: "
    m_shape = check_rank("memory", memory, 3, where=where)
    w_shape = check_rank("weights", weights, 3, where=where)
    check_rank("erase", erase, 3, where=where)
    check_rank("add", add, 3, where=where)
    check_same_dim(
        "memory", m_shape, 1, "weights", w_shape, 2, "The number of slots N", where=where
    )
    keep = ops.prod(1.0 - weights[:, :, :, None] * erase[:, :, None, :], axis=1)  # [B, N, W]
    written = ops.einsum("bhn,bhw->bnw", weights, add)
    return memory * keep + written


def read_memory(memory: Tensor, weights: Tensor) -> Tensor:
    """The read vectors ``r_h = Σ_i w_h(i) M_i`` (NTM eq. 2), ``[B, H, W]``.

    Args:
        memory: ``[B, N, W]``.
        weights: read weights ``[B, H, N]``.

    Returns:
        ``[B, H, W]``.

    Example:

    >>> r = read_memory(ops.convert_to_tensor([[[1.0, 2.0], [3.0, 4.0]]]),
    ...                 ops.convert_to_tensor([[[0.5, 0.5]]]))
    >>> ops.convert_to_numpy(r)
    array([[[2., 3.]]], dtype=float32)
    """
    where = "read_memory: "
    m_shape = check_rank("memory", memory, 3, where=where)
    w_shape = check_rank("weights", weights, 3, where=where)
    check_same_dim(
        "memory", m_shape, 1, "weights", w_shape, 2, "The number of slots N", where=where
    )
    return ops.einsum("bhn,bnw->bhw", weights, memory)


def update_usage(
    usage: Tensor, write_weights: Tensor, free_gates: Tensor, read_weights: Tensor
) -> Tensor:
    """The DNC usage vector after the previous write and this step's free gates.

        ψ_t = Π_i (1 − f^i_t w^{r,i}_{t−1})                          (retention)
        u_t = (u_{t−1} + w^w_{t−1} − u_{t−1} ∘ w^w_{t−1}) ∘ ψ_t

    With several write heads, ``w^w`` is their union ``1 − Π_h (1 − w^w_h)``.

    This op is differentiable with respect to the write weights, as the paper's equations
    are. DeepMind's DNC code applies ``stop_gradient`` to them ("Calculation of usage is not
    differentiable with respect to write weights", ``Freeness._build``), and so does
    `DNCCell` by default (``stop_usage_gradient=True``): on the copy task (DNC, LSTM-100,
    memory 32 × 20, 4 read heads, batch 32, benchmarks/RESULTS.md) at Adam 3e-3 over 5 seeds
    the stop-gradient converged no later on every seed (median 20.0k sequences against 21.6k
    with the gradient). At Adam 1e-3, 2 seeds had leaned the other way (first evaluation
    below 0.1 bit errors: 35.2k and 40.0k with the gradient, 35.2k and not within 40k
    without).

    Args:
        usage: ``[B, N]``, in ``[0, 1]``.
        write_weights: the previous step's write weights, ``[B, N]`` or ``[B, H, N]``.
        free_gates: ``[B, R]`` in ``[0, 1]``.
        read_weights: the previous step's read weights ``[B, R, N]``.

    Returns:
        The new usage ``[B, N]``, in ``[0, 1]``.

    Example:

    >>> u = update_usage(ops.zeros((1, 2)), ops.convert_to_tensor([[1.0, 0.0]]),
    ...                  ops.zeros((1, 1)), ops.zeros((1, 1, 2)))
    >>> ops.convert_to_numpy(u)
    array([[1., 0.]], dtype=float32)
    """
    where = "update_usage: "
    check_rank("usage", usage, 2, where=where)
    check_rank("write_weights", write_weights, (2, 3), where=where)
    check_rank("free_gates", free_gates, 2, where=where)
    check_rank("read_weights", read_weights, 3, where=where)
    if len(write_weights.shape) == 3:
        write_weights = 1.0 - ops.prod(1.0 - write_weights, axis=1)
    usage = usage + write_weights - usage * write_weights
    retention = ops.prod(1.0 - free_gates[:, :, None] * read_weights, axis=1)
    return usage * retention


def allocation_weights(usage: Tensor, epsilon: float = EPSILON) -> Tensor:
    """The DNC allocation weighting: free slots first, least used first (DNC eq. "a").

        φ = slots sorted by ascending usage,
        a[φ_j] = (1 − u[φ_j]) Π_{i<j} u[φ_i]

    Usage is first mapped to ``ε + (1 − ε) u`` so that the products have no zero factor (their
    gradient divides by them); ties are sorted lower slot index first (``top_k``'s order), so
    with all usage zero everything goes to slot 0.
    The sort is a ``top_k`` of the free-ness ``1 − u``; the sorted allocation is put back in slot
    order by a scatter to the sorted slots (``O(N log N)`` in all).

    Args:
        usage: ``[B, N]`` in ``[0, 1]`` (``N`` static).
        epsilon: the floor on usage.

    Returns:
        ``[B, N]``, summing to at most 1.

    Example:

    >>> a = allocation_weights(ops.convert_to_tensor([[0.9, 0.1, 0.5]]))
    >>> int(ops.convert_to_numpy(ops.argmax(a, axis=-1))[0])
    1
    """
    where = "allocation_weights: "
    check_rank("usage", usage, 2, where=where)
    num_slots = _last_dim("usage", usage, where=where)
    usage = epsilon + (1.0 - epsilon) * usage
    free = 1.0 - usage
    sorted_free, order = ops.top_k(free, k=num_slots, sorted=True)  # φ: ascending usage
    sorted_usage = 1.0 - sorted_free
    cumulative = ops.cumprod(sorted_usage, axis=-1)
    exclusive = ops.concatenate([ops.ones_like(cumulative[:, :1]), cumulative[:, :-1]], axis=-1)
    sorted_allocation = sorted_free * exclusive
    # a[φ_j] = sorted_allocation[j]: a scatter to the sorted slots, O(N). It compiles under XLA
    # inside a recurrent loop's gradient, and spares the second sort a gather by the inverse
    # permutation (φ's argsort) would need: 7-8% of the DNC's training step with and without
    # XLA (benchmarks/RESULTS.md).
    batch_rows = ops.arange(ops.shape(usage)[0], dtype="int32")[:, None]
    rows = ops.broadcast_to(batch_rows, ops.shape(order))
    positions = ops.stack([rows, ops.cast(order, "int32")], axis=-1)
    return ops.scatter_update(
        ops.zeros_like(usage),
        ops.reshape(positions, (-1, 2)),
        ops.reshape(sorted_allocation, (-1,)),
    )


def update_precedence(precedence: Tensor, write_weights: Tensor) -> Tensor:
    """The DNC precedence weighting ``p_t = (1 − Σ_i w^w_t(i)) p_{t−1} + w^w_t``.

    ``p_t(i)`` is the degree to which slot ``i`` was the last one written; it sums to ≤ 1.

    Args:
        precedence: ``[B, N]``, or ``[B, H, N]`` per write head.
        write_weights: this step's write weights, the shape of ``precedence``.

    Returns:
        The new precedence, the shape of ``precedence``.

    Example:

    >>> p = update_precedence(ops.convert_to_tensor([[1.0, 0.0]]),
    ...                       ops.convert_to_tensor([[0.0, 0.5]]))
    >>> ops.convert_to_numpy(p)
    array([[0.5, 0.5]], dtype=float32)
    """
    where = "update_precedence: "
    p_shape = check_rank("precedence", precedence, (2, 3), where=where)
    w_shape = check_rank("write_weights", write_weights, len(p_shape), where=where)
    check_same_dim(
        "precedence",
        p_shape,
        -1,
        "write_weights",
        w_shape,
        -1,
        "The number of slots N",
        where=where,
    )
    return (1.0 - ops.sum(write_weights, axis=-1, keepdims=True)) * precedence + write_weights


def update_temporal_link(link: Tensor, precedence: Tensor, write_weights: Tensor) -> Tensor:
    """The DNC temporal link matrix: ``L[i, j]`` is the degree to which slot ``i`` was written
    right after slot ``j``.

        L_t[i, j] = (1 − w^w_t[i] − w^w_t[j]) L_{t−1}[i, j] + w^w_t[i] p_{t−1}[j],   L_t[i, i] = 0

    Entries stay in ``[0, 1]`` and rows and columns sum to at most 1.

    Args:
        link: the previous link ``[B, N, N]``, or ``[B, H, N, N]`` per write head.
        precedence: the *previous* precedence ``p_{t−1}``, ``[B, N]`` (or ``[B, H, N]``).
        write_weights: this step's write weights, the shape of ``precedence``.

    Returns:
        The new link, the shape of ``link``, with a zero diagonal.

    Example:

    >>> link = update_temporal_link(ops.zeros((1, 2, 2)), ops.convert_to_tensor([[1.0, 0.0]]),
    ...                             ops.convert_to_tensor([[0.0, 1.0]]))
    >>> ops.convert_to_numpy(link)  # slot 1 was written after slot 0
    array([[[0., 0.],
            [1., 0.]]], dtype=float32)
    """
    where = "update_temporal_link: "
    l_shape = check_rank("link", link, (3, 4), where=where)
    check_rank("precedence", precedence, len(l_shape) - 1, where=where)
    w_shape = check_rank("write_weights", write_weights, len(l_shape) - 1, where=where)
    check_same_dim(
        "link", l_shape, -1, "write_weights", w_shape, -1, "The number of slots N", where=where
    )
    num_slots = _last_dim("link", link, where=where)
    w_i = write_weights[..., :, None]
    w_j = write_weights[..., None, :]
    link = (1.0 - w_i - w_j) * link + w_i * precedence[..., None, :]
    off_diagonal = 1.0 - ops.eye(num_slots, dtype=link.dtype)
    return link * off_diagonal


def directional_read_weights(link: Tensor, read_weights: Tensor, forward: bool) -> Tensor:
    """Forward ``f = L w^r_{t−1}`` or backward ``b = Lᵀ w^r_{t−1}`` read weightings (DNC).

    Forward moves each read head to the slots written right after the ones it read; backward
    to those written right before.

    Args:
        link: ``[B, N, N]``, or ``[B, Hw, N, N]`` with one link matrix per write head.
        read_weights: the previous read weights ``[B, R, N]``.
        forward: ``True`` for ``L w``, ``False`` for ``Lᵀ w``.

    Returns:
        ``[B, R, N]`` for a rank-3 ``link``, ``[B, R, Hw, N]`` for a rank-4 ``link``.

    Example:

    >>> link = ops.convert_to_tensor([[[0.0, 0.0], [1.0, 0.0]]])  # 1 written after 0
    >>> w = ops.convert_to_tensor([[[1.0, 0.0]]])                  # reading slot 0
    >>> ops.convert_to_numpy(directional_read_weights(link, w, forward=True))
    array([[[0., 1.]]], dtype=float32)
    """
    where = "directional_read_weights: "
    l_shape = check_rank("link", link, (3, 4), where=where)
    r_shape = check_rank("read_weights", read_weights, 3, where=where)
    check_same_dim(
        "link", l_shape, -1, "read_weights", r_shape, 2, "The number of slots N", where=where
    )
    per_head = len(l_shape) == 4
    if not per_head:
        link = link[:, None]
    w = read_weights[:, None]  # [B, 1, R, N]
    if forward:  # f[r, i] = Σ_j L[i, j] w[r, j]
        result = ops.swapaxes(ops.matmul(link, ops.swapaxes(w, -1, -2)), -1, -2)
    else:  # b[r, j] = Σ_i w[r, i] L[i, j]
        result = ops.matmul(w, link)  # [B, Hw, R, N]
    result = ops.swapaxes(result, 1, 2)  # [B, R, Hw, N]
    return result if per_head else result[:, :, 0]


# --- The sparse temporal link (DNC Methods, "Sparse link matrix") ----------------------------
#
# The dense link costs O(N²) memory and time per step and write head. The sparse link keeps at
# most K entries per row ``i`` (slot written after): their column indices ``j`` and values. A
# step is O(N·K·log K) (plus O(N log K) for the top-K of the precedence); the directional
# reads are a gather (forward) and a segment sum (backward), O(N·K) each.


def initial_sparse_link(
    batch_size: int | Tensor, num_slots: int, k: int, heads: int | None = None
) -> tuple[Tensor, Tensor]:
    """An empty sparse link: values 0, and in row ``i`` the (distinct) columns ``0 … K−1``.

    Args:
        batch_size: ``B``.
        num_slots: ``N``.
        k: entries kept per row, ``1 ≤ K ≤ N``.
        heads: if given, one link per write head (``[B, Hw, N, K]``).

    Returns:
        ``(values, indices)``, float32 zeros and int32 column indices, ``[B, N, K]`` (or
        ``[B, Hw, N, K]``).

    Example:

    >>> values, indices = initial_sparse_link(1, 3, 2)
    >>> ops.convert_to_numpy(indices).tolist()
    [[[0, 1], [0, 1], [0, 1]]]
    """
    if not 1 <= k <= num_slots:
        raise ValueError(
            f"initial_sparse_link: `k` must be in [1, num_slots={num_slots}]; received {k}."
        )
    shape = (batch_size, num_slots, k) if heads is None else (batch_size, heads, num_slots, k)
    indices = ops.broadcast_to(ops.arange(k, dtype="int32"), shape)
    return ops.zeros(shape, "float32"), indices


def _flatten_heads(x, rank):
    """``[B, Hw, ...]`` → ``[B·Hw, ...]`` when ``x`` has ``rank + 1`` dims (one per head)."""
    if len(x.shape) == rank + 1:
        return ops.reshape(x, (-1,) + tuple(x.shape[2:]))
    return x


def _gather_rows(vector, indices):
    """``out[b, i, k] = vector[b, indices[b, i, k]]`` for ``vector [B, N]``, ``indices [B, N, K]``."""
    n, k = indices.shape[-2], indices.shape[-1]
    flat = ops.take_along_axis(vector, ops.reshape(indices, (-1, n * k)), axis=-1)
    return ops.reshape(flat, (-1, n, k))


def update_sparse_temporal_link(
    values: Tensor, indices: Tensor, precedence: Tensor, write_weights: Tensor
) -> tuple[Tensor, Tensor]:
    """`update_temporal_link` on a link that keeps the ``K`` largest entries of each row.

    The kept entries follow the dense formula,

        L_t[i, j] = (1 − w^w_t[i] − w^w_t[j]) L_{t−1}[i, j] + w^w_t[i] p_{t−1}[j],   L_t[i, i] = 0

    and the new entries ``w^w_t[i] p_{t−1}[j]`` are added only for the ``K`` largest
    ``p_{t−1}[j]`` (as the paper's sparse precedence); each row then keeps the ``K`` largest of
    its (at most ``2K``) candidates. Entries never exceed the dense link's (no entry gains what
    the dense one does not), and for ``K = N`` the result equals the dense update. Columns are
    not capped at ``K`` (the paper also caps them; rows are what the reads gather).

    Args:
        values: the kept entries ``[B, N, K]`` (or ``[B, Hw, N, K]``), in ``[0, 1]``.
        indices: their columns, int (or integer-valued float), distinct within a row, the shape
            of ``values`` (see `initial_sparse_link`).
        precedence: the *previous* precedence ``[B, N]`` (or ``[B, Hw, N]``).
        write_weights: this step's write weights, the shape of ``precedence``.

    Returns:
        ``(values, indices)``, int32 indices, the shapes of the inputs.

    Example:

    >>> v, i = initial_sparse_link(1, 3, 1)
    >>> v, i = update_sparse_temporal_link(v, i, ops.convert_to_tensor([[1.0, 0.0, 0.0]]),
    ...                                    ops.convert_to_tensor([[0.0, 1.0, 0.0]]))
    >>> ops.convert_to_numpy(sparse_link_to_dense(v, i, 3))  # slot 1 was written after slot 0
    array([[[0., 0., 0.],
            [1., 0., 0.],
            [0., 0., 0.]]], dtype=float32)
    """
    where = "update_sparse_temporal_link: "
    v_shape = check_rank("values", values, (3, 4), where=where)
    i_shape = check_rank("indices", indices, len(v_shape), where=where)
    check_rank("precedence", precedence, len(v_shape) - 1, where=where)
    w_shape = check_rank("write_weights", write_weights, len(v_shape) - 1, where=where)
    check_same_dim(
        "values", v_shape, -2, "write_weights", w_shape, -1, "The number of slots N", where=where
    )
    check_same_dim(
        "values", v_shape, -1, "indices", i_shape, -1, "The entries per row K", where=where
    )
    num_slots = _last_dim("write_weights", write_weights, where=where)
    k = _last_dim("values", values, where=where)
    if k > num_slots:
        raise ValueError(
            f"{where}K = {k} entries per row exceeds the number of slots N = {num_slots}."
        )
    out_shape = ops.shape(values)
    values = _flatten_heads(values, 3)
    indices = ops.cast(_flatten_heads(indices, 3), "int32")
    precedence = _flatten_heads(precedence, 2)
    w = _flatten_heads(write_weights, 2)

    # The kept entries decay as the dense ones do.
    w_i = w[:, :, None]  # [B, N, 1]
    kept = (1.0 - w_i - _gather_rows(w, indices)) * values  # [B, N, K]
    # The new entries w_i p_j, for the K largest p_j (the same columns in every row).
    p_top, p_columns = ops.top_k(precedence, k=k, sorted=False)  # [B, K]
    p_columns = ops.cast(p_columns, "int32")
    same = ops.cast(indices[:, :, :, None] == p_columns[:, None, None, :], values.dtype)
    kept = kept + w_i * ops.einsum("bikl,bl->bik", same, p_top)  # columns already kept
    fresh = w_i * p_top[:, None, :]  # [B, N, K]
    already = ops.sum(same, axis=2) > 0  # [B, N, K]: that column is among the kept ones
    # A fresh entry in an already-kept column was added above; rank it below every real entry
    # (all ≥ 0) so that the K chosen columns stay distinct.
    fresh = ops.where(already, -ops.ones_like(fresh), fresh)
    candidates = ops.concatenate([kept, fresh], axis=-1)  # [B, N, 2K]
    columns = ops.concatenate(
        [indices, ops.broadcast_to(p_columns[:, None, :], ops.shape(indices))], axis=-1
    )
    rows = ops.arange(num_slots, dtype="int32")[None, :, None]
    candidates = ops.where(columns == rows, ops.zeros_like(candidates), candidates)
    new_values, chosen = ops.top_k(candidates, k=k, sorted=False)
    new_indices = ops.take_along_axis(columns, ops.cast(chosen, "int32"), axis=-1)
    return ops.reshape(new_values, out_shape), ops.reshape(new_indices, out_shape)


def sparse_directional_read_weights(
    values: Tensor, indices: Tensor, read_weights: Tensor, forward: bool
) -> Tensor:
    """`directional_read_weights` on a sparse link (`update_sparse_temporal_link`).

    Forward ``f[i] = Σ_k values[i, k] w[indices[i, k]]`` is a gather; backward
    ``b[j] = Σ_{i, k: indices[i, k] = j} values[i, k] w[i]`` is a segment sum.

    Args:
        values: ``[B, N, K]``, or ``[B, Hw, N, K]`` with one link per write head.
        indices: their columns, the shape of ``values``.
        read_weights: the previous read weights ``[B, R, N]``.
        forward: ``True`` for ``L w``, ``False`` for ``Lᵀ w``.

    Returns:
        ``[B, R, N]`` for rank-3 ``values``, ``[B, R, Hw, N]`` for rank-4 ``values``.

    Example:

    >>> v, i = initial_sparse_link(1, 2, 1)
    >>> v, i = update_sparse_temporal_link(v, i, ops.convert_to_tensor([[1.0, 0.0]]),
    ...                                    ops.convert_to_tensor([[0.0, 1.0]]))
    >>> w = ops.convert_to_tensor([[[1.0, 0.0]]])  # reading slot 0
    >>> ops.convert_to_numpy(sparse_directional_read_weights(v, i, w, forward=True))
    array([[[0., 1.]]], dtype=float32)
    """
    where = "sparse_directional_read_weights: "
    v_shape = check_rank("values", values, (3, 4), where=where)
    i_shape = check_rank("indices", indices, len(v_shape), where=where)
    r_shape = check_rank("read_weights", read_weights, 3, where=where)
    check_same_dim(
        "values", v_shape, -2, "read_weights", r_shape, 2, "The number of slots N", where=where
    )
    check_same_dim(
        "values", v_shape, -1, "indices", i_shape, -1, "The entries per row K", where=where
    )
    num_slots = _last_dim("read_weights", read_weights, where=where)
    num_reads = _last_dim("read_weights", ops.moveaxis(read_weights, 1, -1), where=where)
    k = _last_dim("values", values, where=where)
    per_head = len(v_shape) == 4
    if not per_head:
        values, indices = values[:, None], indices[:, None]
    heads = int(values.shape[1])
    batch = ops.shape(read_weights)[0]
    entries = heads * num_slots * k
    indices = ops.reshape(ops.cast(indices, "int32"), (-1, 1, entries))  # [B, 1, Hw·N·K]
    if forward:
        gathered = ops.take_along_axis(
            read_weights, ops.broadcast_to(indices, (batch, num_reads, entries)), axis=-1
        )  # [B, R, Hw·N·K]: w[indices[h, i, k]]
        gathered = ops.reshape(gathered, (-1, num_reads, heads, num_slots, k))
        result = ops.sum(values[:, None] * gathered, axis=-1)  # [B, R, Hw, N]
    else:
        # values[h, i, k] w[i], summed into column indices[h, i, k] of (b, r, h).
        contributions = values[:, None] * read_weights[:, :, None, :, None]  # [B, R, Hw, N, K]
        offsets = ops.arange(batch * num_reads * heads, dtype="int32") * num_slots
        segments = ops.reshape(indices, (-1, 1, heads, num_slots * k)) + ops.reshape(
            offsets, (-1, num_reads, heads, 1)
        )
        summed = ops.segment_sum(
            ops.reshape(contributions, (-1,)),
            ops.reshape(segments, (-1,)),
            num_segments=batch * num_reads * heads * num_slots,
        )
        result = ops.reshape(summed, (-1, num_reads, heads, num_slots))
    return result if per_head else result[:, :, 0]


def sparse_link_to_dense(values: Tensor, indices: Tensor, num_slots: int) -> Tensor:
    """The dense link ``[B, (Hw,) N, N]`` holding a sparse link's entries (for inspection and
    tests; O(N²)).

    Args:
        values: ``[B, N, K]`` or ``[B, Hw, N, K]``.
        indices: their columns, the shape of ``values``.
        num_slots: ``N``.

    Returns:
        ``[B, N, N]`` or ``[B, Hw, N, N]``.

    Example:

    >>> v = ops.convert_to_tensor([[[0.0], [0.5]]])  # row 1 holds 0.5 in column 0
    >>> ops.convert_to_numpy(sparse_link_to_dense(v, ops.zeros((1, 2, 1), "int32"), 2))
    array([[[0. , 0. ],
            [0.5, 0. ]]], dtype=float32)
    """
    one_hot = ops.one_hot(ops.cast(indices, "int32"), num_slots, dtype=values.dtype)
    return ops.sum(values[..., None] * one_hot, axis=-2)

"""The restricted views and the unlabelled loss of cross-view training (CVT).

Pure ``keras.ops`` functions, batch-first. Shapes use ``B`` for batch, ``T`` for time steps,
``D`` for the state size of one direction of the encoder's first bidirectional layer and ``C``
for the number of classes of a tagging task.

CVT (Clark et al. 2018, section 3) trains *auxiliary prediction modules* that see restricted
views of the input to agree with the *primary* module, which sees all of it. For sequence
tagging the views are read from the first bidirectional LSTM layer's states (section 3.1):

- ``forward``:  ``h→_t``     (the past and the current token);
- ``backward``: ``h←_t``     (the current token and the future);
- ``future``:   ``h→_{t-1}`` (the past without the current token: the module predicts the
  token's label from what came before it, as a language model would);
- ``past``:     ``h←_{t+1}`` (the future without the current token).

and the unlabelled loss is ``L_CVT = Σ_k KL(p_θ(y | x_i) ‖ p^k_θ(y | x_i))`` over the
auxiliary modules ``k``, the primary's prediction held fixed (section 3, eq. 2 and the text
below it: "we hold the primary module's prediction p_θ(y|x_i) fixed during training").

References:
    - Clark, Luong, Manning, Le (2018). Semi-Supervised Sequence Modeling with Cross-View
      Training. EMNLP. arXiv:1809.08370.
"""

from collections.abc import Mapping, Sequence

from keras import ops

from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_rank, check_same_dim

#: Added to the primary's probabilities inside ``log p`` (``p log p`` is 0 at ``p = 0``).
EPSILON = 1e-7

#: The four views of `restricted_views`, in the paper's order.
VIEW_NAMES = ("forward", "backward", "future", "past")


def _shift(x: Tensor, offset: int) -> Tensor:
    """``y_t = x_{t-offset}`` along axis 1, zeros where ``t - offset`` is out of range."""
    if offset > 0:
        return ops.pad(x[:, :-offset], [[0, 0], [offset, 0]] + [[0, 0]] * (len(x.shape) - 2))
    return ops.pad(x[:, -offset:], [[0, 0], [0, -offset]] + [[0, 0]] * (len(x.shape) - 2))


def restricted_views(
    forward: Tensor, backward: Tensor, mask: Tensor | None = None
) -> dict[str, Tensor]:
    """The four restricted views of CVT from a bidirectional RNN's two directions.

        forward_t  = h→_t
        backward_t = h←_t
        future_t   = h→_{t-1}     (0 at t = 0)
        past_t     = h←_{t+1}     (0 at the last real token of each sequence)

    (Clark et al. 2018, section 3.1: the "forward", "backward", "future" and "past" modules.)

    Padding is assumed on the right (real tokens first, as ``Embedding(mask_zero=True)`` and the
    library's data give). With a ``mask``, the token after the last real one is padding, so
    ``past`` there is the zero vector, never a padding step's state; and every view is zero at
    padding steps, so the values of padded states change nothing.

    Args:
        forward: ``[B, T, D]`` forward states ``h→`` of the first layer.
        backward: ``[B, T, D]`` backward states ``h←`` of the first layer, aligned with the
            tokens (``h←_t`` has read tokens ``T-1 … t``).
        mask: optional ``[B, T]`` boolean mask of real tokens (right-padded).

    Returns:
        ``{"forward", "backward", "future", "past"}``, each ``[B, T, D]`` in the inputs' dtype.

    Example:

    >>> fwd = ops.reshape(ops.arange(1.0, 5.0), (1, 4, 1))   # h→ = 1 2 3 4
    >>> bwd = 10.0 * fwd                                      # h← = 10 20 30 40
    >>> views = restricted_views(fwd, bwd, mask=ops.array([[True, True, True, False]]))
    >>> [[float(v) for v in ops.convert_to_numpy(views[k])[0, :, 0]] for k in VIEW_NAMES]
    [[1.0, 2.0, 3.0, 0.0], [10.0, 20.0, 30.0, 0.0], [0.0, 1.0, 2.0, 0.0], [20.0, 30.0, 0.0, 0.0]]
    """
    shape = check_rank("forward", forward, 3, where="restricted_views: ")
    other = check_rank("backward", backward, 3, where="restricted_views: ")
    for axis, what in ((1, "The time dimensions"), (2, "The state sizes")):
        check_same_dim(
            "forward", shape, axis, "backward", other, axis, what, where="restricted_views: "
        )
    forward, backward = ops.convert_to_tensor(forward), ops.convert_to_tensor(backward)
    views = {
        "forward": forward,
        "backward": backward,
        "future": _shift(forward, 1),  # h→_{t-1}
        "past": _shift(backward, -1),  # h←_{t+1}
    }
    if mask is None:
        return views
    mask = ops.cast(_check_mask(mask, shape), forward.dtype)
    real = mask[..., None]
    next_real = _shift(mask, -1)[..., None]  # is token t+1 real? (0 after the last real one)
    return {
        "forward": forward * real,
        "backward": backward * real,
        "future": views["future"] * real,  # t-1 is real whenever t is (right padding)
        "past": views["past"] * next_real,  # next_real ≤ real
    }


def _check_mask(mask: Tensor, shape: tuple, where: str = "restricted_views: ") -> Tensor:
    """``mask`` as a tensor after checking it is ``[B, T]`` for states of shape ``shape``."""
    mask = ops.convert_to_tensor(mask)
    mask_shape = check_rank("mask", mask, 2, where=where)
    check_same_dim("mask", mask_shape, 1, "states", shape, 1, "The time dimensions", where=where)
    return mask


def cross_view_kl(
    primary_probabilities: Tensor,
    auxiliary_logits: Tensor | Sequence[Tensor] | Mapping[str, Tensor],
    mask: Tensor | None = None,
    epsilon: float = EPSILON,
) -> Tensor:
    """The CVT loss on unlabelled data: the auxiliaries' KL divergence from the fixed primary.

        L = 1/|M| Σ_{(b,t) ∈ M} Σ_k KL(p_{b,t} ‖ q^k_{b,t}),
        KL(p ‖ q) = Σ_c p_c (log(p_c + ε) − log q_c),     q^k = softmax(auxiliary_logits_k)

    (Clark et al. 2018, eq. 2, with ``D = KL``; ``M`` the unmasked tokens.) The primary
    ``p`` passes through ``stop_gradient``: the loss trains the auxiliary modules and, through
    them, the shared encoder, never the primary module. ``log q`` is a ``log_softmax`` of the
    logits (exact and stable, no ``ε`` needed); ``ε`` only keeps ``log p`` finite where a class
    has probability 0. The math is in ``float32`` whatever the inputs' dtype (``mixed_float16``
    probabilities round to 0 and logs underflow), and a batch with no unmasked token gives 0,
    not NaN.

    Args:
        primary_probabilities: ``[B, T, C]`` (or ``[B, C]``) the primary module's softmax ``p``.
        auxiliary_logits: one ``[B, T, C]`` tensor, or a list or dict of them, one per
            auxiliary module ``k``.
        mask: optional boolean mask of the tokens that count (``[B, T]`` for ``[B, T, C]``).
        epsilon: added to ``p`` inside its logarithm.

    Returns:
        A ``float32`` scalar: the sum over modules of the mean KL over unmasked tokens.

    Example:

    >>> p = ops.array([[[0.5, 0.5], [1.0, 0.0]]])
    >>> aux = [ops.zeros((1, 2, 2)), ops.array([[[0.0, 0.0], [100.0, 0.0]]])]
    >>> round(float(cross_view_kl(p, aux)), 4)  # (0 + ln 2) / 2 + 0
    0.3466
    >>> float(cross_view_kl(p, aux, mask=ops.array([[False, False]])))
    0.0
    """
    if isinstance(auxiliary_logits, Mapping):
        auxiliary_logits = list(auxiliary_logits.values())
    elif not isinstance(auxiliary_logits, (list, tuple)):
        auxiliary_logits = [auxiliary_logits]
    if not auxiliary_logits:
        raise ValueError("cross_view_kl: `auxiliary_logits` must hold at least one tensor.")
    shape = check_rank(
        "primary_probabilities", primary_probabilities, (2, 3), where="cross_view_kl: "
    )
    p = ops.stop_gradient(ops.cast(primary_probabilities, "float32"))
    log_p = ops.log(p + epsilon)
    divergence = 0.0
    for logits in auxiliary_logits:
        check_same_dim(
            "primary_probabilities",
            shape,
            -1,
            "auxiliary_logits",
            tuple(logits.shape),
            -1,
            "The number of classes",
            where="cross_view_kl: ",
        )
        log_q = ops.log_softmax(ops.cast(logits, "float32"), axis=-1)
        divergence = divergence + ops.sum(p * (log_p - log_q), axis=-1)  # KL per token
    if mask is None:
        return ops.mean(divergence)
    weights = ops.cast(ops.convert_to_tensor(mask), "float32")
    count = ops.sum(weights)
    return ops.sum(divergence * weights) / ops.maximum(count, 1.0)

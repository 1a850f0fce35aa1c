"""The Deep Recurrent Attention Model (Ba, Mnih & Kavukcuoglu 2015): reads several objects in
sequence, one class per symbol, trained by the hybrid rule of the RAM with per-symbol rewards."""

from typing import Any

import keras
from keras import ops

from keras_adl.layers.deep_recurrent_attention import DeepRecurrentAttention
from keras_adl.models.ram import RecurrentAttentionModel, classifier_outputs
from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_image_shape, check_positive_int


def rewards_to_go(rewards: Tensor, glimpses_per_symbol: int) -> Tensor:
    """The return of each glimpse location: the rewards of its symbol and every later one.

    Location ``k`` (0-based) is chosen before glimpse ``k``, which belongs to symbol
    ``s = k // N``; it can change the answers from symbol ``s`` on, so its return is
    ``R_k = Σ_{s' ≥ s} r_{s'}`` (Ba et al. 2015 sum the per-symbol rewards).

    Args:
        rewards: ``[B, S]`` per-symbol rewards ``r_s``.
        glimpses_per_symbol: ``N``.

    Returns:
        ``[B, S·N]`` returns, in the rewards' dtype.

    Example:

    >>> import numpy as np
    >>> ops.convert_to_numpy(rewards_to_go(np.array([[1.0, 0.0, 1.0]]), 2)).tolist()
    [[2.0, 2.0, 1.0, 1.0, 1.0, 1.0]]
    """
    later = ops.flip(ops.cumsum(ops.flip(rewards, axis=1), axis=1), axis=1)  # Σ_{s' ≥ s} r_s'
    return ops.repeat(later, glimpses_per_symbol, axis=1)


@keras.saving.register_keras_serializable(package="keras_adl")
class DeepRecurrentAttentionModel(RecurrentAttentionModel):
    """A functional model trained with the hybrid loss of the RAM, per symbol.

    Built by `deep_recurrent_attention_model`; its outputs are a dict with ``logits`` and
    ``probabilities`` ``[B, S, K]``, ``locations`` ``[B, S·N, 2]``, ``log_probs`` and
    ``baselines`` ``[B, S·N]``. Labels are integer classes ``[B, S]``; with ``ignore_class``
    set, the symbols labelled with it (padding after an end symbol) count in no term. Per
    example:

        L = −Σ_s log p(y_s | x)                                (cross-entropy of the symbols)
            − Σ_k log π(l_k) · stop_gradient(R_k − b_k)         (REINFORCE, `rewards_to_go`)
            + mean_k (b_k − R_k)²                                (baseline regression)

    with ``r_s = 1`` when symbol ``s`` is right. Training, distribution, mixed precision and
    XLA work as for `RecurrentAttentionModel`. Metrics: ``accuracy`` (per symbol) and
    ``sequence_accuracy`` (every symbol of the example right), beside the loss terms.

    Args:
        *args: the arguments of a functional ``keras.Model`` (inputs and outputs).
        ignore_class: the label of padding symbols, or ``None``.
        **kwargs: the keyword arguments of a functional ``keras.Model``.

    Example:

    >>> model = deep_recurrent_attention_model((16, 32, 1), 11, num_symbols=2,
    ...                                        glimpses_per_symbol=2, units=16,
    ...                                        glimpse_output_units=16)
    >>> isinstance(model, DeepRecurrentAttentionModel)
    True
    >>> outputs = model(ops.zeros((2, 16, 32, 1)), training=True)
    >>> [tuple(term.shape) for term in model.hybrid_loss(ops.array([[3, 4], [1, 2]]), outputs)]
    [(2,), (2,), (2,)]
    """

    def __init__(self, *args, ignore_class=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.ignore_class = ignore_class
        layers = [layer for layer in self.layers if isinstance(layer, DeepRecurrentAttention)]
        self.glimpses_per_symbol = layers[0].glimpses_per_symbol if layers else 1
        self.sequence_accuracy_tracker = keras.metrics.Mean(name="sequence_accuracy")

    def get_config(self):
        return dict(super().get_config(), ignore_class=self.ignore_class)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        ignore_class = config.pop("ignore_class", None)
        model = super().from_config(config, custom_objects)
        model.ignore_class = ignore_class
        return model

    def _symbols(self, labels, logits):
        """``(labels [B, S] int32, weights [B, S] float32, correct [B, S] float32)``."""
        labels = ops.cast(labels, "int32")
        if self.ignore_class is None:
            weights = ops.ones_like(labels, "float32")
        else:
            weights = ops.cast(ops.not_equal(labels, self.ignore_class), "float32")
        predicted = ops.cast(ops.argmax(logits, axis=-1), "int32")
        correct = ops.cast(ops.equal(predicted, labels), "float32") * weights
        return labels, weights, correct

    def hybrid_loss(self, labels, outputs):
        """The three per-example loss terms ``(cross_entropy, reinforce, baseline_mse)``, each
        ``[B]`` float32, for integer ``labels`` ``[B, S]`` and the model's training outputs."""
        logits = ops.cast(outputs["logits"], "float32")
        labels, weights, correct = self._symbols(labels, logits)
        safe = ops.where(weights > 0, labels, ops.zeros_like(labels))  # ignored: any valid id
        per_symbol = keras.losses.sparse_categorical_crossentropy(safe, logits, from_logits=True)
        cross_entropy = ops.sum(per_symbol * weights, axis=-1)
        returns = ops.stop_gradient(rewards_to_go(correct, self.glimpses_per_symbol))  # R_k
        baselines = ops.cast(outputs["baselines"], "float32")
        log_probs = ops.cast(outputs["log_probs"], "float32")
        reinforce = -ops.sum(log_probs * ops.stop_gradient(returns - baselines), axis=-1)
        baseline_mse = ops.mean(ops.square(baselines - returns), axis=-1)
        if not self.learned_policy:
            reinforce = baseline_mse = ops.zeros_like(cross_entropy)
        return cross_entropy, reinforce, baseline_mse

    def _check_labels(self, y, method):
        symbols = self.output["logits"].shape[1]
        if y is None or len(tuple(y.shape)) != 2 or y.shape[1] not in (symbols, None):
            raise ValueError(
                f"DeepRecurrentAttentionModel: `{method}` needs integer class ids `y` of shape "
                f"[B, {symbols}] (one per symbol, not one-hot); received "
                f"{'none' if y is None else f'shape {tuple(y.shape)}'}."
            )

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Training: the total loss, the three terms, the per-symbol and sequence accuracies.
        Evaluation: the loss (the cross-entropy) and the two accuracies."""
        logits = ops.cast(y_pred["logits"], "float32")
        _, weights, correct = self._symbols(y, logits)
        if sample_weight is not None:
            weights = weights * ops.reshape(ops.cast(sample_weight, "float32"), (-1, 1))
        self.accuracy_tracker.update_state(y, y_pred["probabilities"], weights)
        every = ops.cast(ops.all(ops.equal(correct, ops.sign(weights)), axis=-1), "float32")
        self.sequence_accuracy_tracker.update_state(every, sample_weight)
        if getattr(self, "_evaluating", False):
            names = ("loss", "accuracy", "sequence_accuracy")
            return {name: self.get_metrics_result()[name] for name in names}
        terms = self.hybrid_loss(y, y_pred)
        for tracker, term in zip(
            (self.cross_entropy_tracker, self.reinforce_tracker, self.baseline_tracker), terms
        ):
            tracker.update_state(self._mean(term, sample_weight))
        return self.get_metrics_result()


def deep_recurrent_attention_model(
    image_shape: tuple[int, int, int],
    num_classes: int,
    num_symbols: int,
    glimpses_per_symbol: int = 3,
    ignore_class: int | None = None,
    name: str = "deep_recurrent_attention_model",
    **layer_kwargs: Any,
) -> DeepRecurrentAttentionModel:
    """The Deep Recurrent Attention Model (DRAM) of Ba, Mnih & Kavukcuoglu (2015).

    A `keras_adl.layers.DeepRecurrentAttention` layer (context network, glimpse network,
    classification and emission RNNs, Gaussian policy, baseline) and a linear classifier
    shared by every symbol, on the bottom RNN's state after each symbol's glimpses. Training
    is `DeepRecurrentAttentionModel`'s hybrid rule; inference with a learned policy is
    deterministic. For sequences of varying length, give an end class and pad the labels
    after it with ``ignore_class``.

    Args:
        image_shape: ``(H, W, C)``.
        num_classes: ``K``, classes per symbol (with the end and padding classes, if any).
        num_symbols: ``S``, symbols read per image.
        glimpses_per_symbol: ``N``.
        ignore_class: a label that marks padding symbols (ignored by every loss term and
            metric), or ``None``.
        name: model name.
        **layer_kwargs: the other arguments of `DeepRecurrentAttention` (``patch_size``,
            ``num_scales``, ``units``, ``context_downsample``, ``location_std``, ``policy``,
            ``seed``, …).

    Returns:
        A `DeepRecurrentAttentionModel` mapping images ``[B, H, W, C]`` to a dict: ``logits``
        and ``probabilities`` ``[B, S, K]``, ``locations`` ``[B, S·N, 2]`` (``(y, x)`` in
        ``[-1, 1]``), ``log_probs`` and ``baselines`` ``[B, S·N]``. Compile it with an
        optimizer only and fit on ``(images, integer labels [B, S])``.

    Example:

    >>> model = deep_recurrent_attention_model((16, 48, 1), 13, num_symbols=4,
    ...                                        glimpses_per_symbol=2, units=32,
    ...                                        glimpse_output_units=32)
    >>> tuple(model.output["probabilities"].shape), tuple(model.output["locations"].shape)
    ((None, 4, 13), (None, 8, 2))

    References:
        Ba, Mnih, Kavukcuoglu (2015). Multiple Object Recognition with Visual Attention.
        arXiv:1412.7755.
    """
    where = "deep_recurrent_attention_model: "
    image_shape = check_image_shape(image_shape, where=where)
    check_positive_int("num_classes", num_classes, where=where)
    if ignore_class is not None and (
        isinstance(ignore_class, bool)
        or not isinstance(ignore_class, int)
        or not 0 <= ignore_class < num_classes
    ):
        raise ValueError(
            f"{where}`ignore_class` must be None or a class id in [0, {num_classes}); received "
            f"{ignore_class!r}."
        )
    images = keras.Input(image_shape, name="images")
    attention = DeepRecurrentAttention(
        num_symbols=num_symbols,
        glimpses_per_symbol=glimpses_per_symbol,
        name="deep_recurrent_attention",
        **layer_kwargs,
    )(images)
    outputs = classifier_outputs(attention, num_classes)
    return DeepRecurrentAttentionModel(
        inputs=images, outputs=outputs, name=name, ignore_class=ignore_class
    )

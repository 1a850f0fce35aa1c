"""The Recurrent Attention Model (Mnih et al. 2014) and its hybrid REINFORCE training rule."""

import keras
from keras import ops

from keras_adl.layers.recurrent_attention import RecurrentAttention
from keras_adl.utils import check_image_shape, check_positive_int, replica_position


@keras.saving.register_keras_serializable(package="keras_adl")
class RecurrentAttentionModel(keras.Model):
    """A functional model trained with the hybrid loss of Mnih et al. (2014).

    Built by `recurrent_attention_model`; its outputs are a dict with ``logits``,
    ``probabilities``, ``locations``, ``log_probs`` and ``baselines`` (see there). Training
    minimises, per example, the surrogate loss

        L = −log p(y | x)                                  (classification cross-entropy)
            − Σ_t log π(l_t | h_t) · stop_gradient(R − b_t)  (REINFORCE, R = 1 if correct)
            + mean_t (b_t − R)²                            (baseline regression)

    whose gradient is the hybrid rule's: the cross-entropy's gradient, plus the REINFORCE
    estimate ``−Σ_t ∇ log π(l_t | h_t) (R − b_t)`` (the reward and baseline enter as constants),
    plus the baseline regression's. The reward ``R`` is the correctness of the prediction after
    the sampled glimpses. The location network and the baseline both read
    ``stop_gradient(h_t)``: the REINFORCE term trains only the location network, the baseline
    loss only the baseline, and the cross-entropy the glimpse network, the core and the
    classifier.

    The loss is `compute_loss`, so the default ``train_step`` of every Keras backend
    (TensorFlow, JAX, PyTorch) runs the rule, with everything it brings: loss scaling under
    mixed precision, a ``tf.distribute`` strategy (the loss is divided by the replica count, as
    Keras' own losses are), ``steps_per_execution``, XLA. `compute_metrics` reports the three
    terms (``cross_entropy``, ``reinforce``, ``baseline_mse``) and the ``accuracy`` beside
    the total ``loss``.

    Evaluation uses the policy's mean locations (deterministic for a learned policy); its
    ``loss`` is the cross-entropy. Compile with an optimizer only:
    ``model.compile(optimizer="adam")``; losses and metrics are fixed by the paper.

    Args:
        *args: the arguments of a functional ``keras.Model`` (inputs and outputs).
        **kwargs: the keyword arguments of a functional ``keras.Model``.

    Example:

    >>> model = recurrent_attention_model((16, 16, 1), 10, num_glimpses=2, units=16,
    ...                                   glimpse_output_units=16)
    >>> isinstance(model, RecurrentAttentionModel), model.learned_policy
    (True, True)
    >>> outputs = model(ops.zeros((2, 16, 16, 1)), training=True)
    >>> [tuple(term.shape) for term in model.hybrid_loss(ops.array([3, 4]), outputs)]
    [(2,), (2,), (2,)]
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        policies = [layer.policy for layer in self.layers if isinstance(layer, RecurrentAttention)]
        # Only a learned policy has a REINFORCE term and a baseline.
        self.learned_policy = "learned" in policies
        self.cross_entropy_tracker = keras.metrics.Mean(name="cross_entropy")
        self.reinforce_tracker = keras.metrics.Mean(name="reinforce")
        self.baseline_tracker = keras.metrics.Mean(name="baseline_mse")
        self.accuracy_tracker = keras.metrics.SparseCategoricalAccuracy(name="accuracy")

    def hybrid_loss(self, labels, outputs):
        """The three per-example loss terms ``(cross_entropy, reinforce, baseline_mse)``, each
        ``[B]`` float32, for integer ``labels`` ``[B]`` and the model's training outputs."""
        labels = ops.reshape(ops.cast(labels, "int32"), (-1,))
        logits = ops.cast(outputs["logits"], "float32")
        cross_entropy = keras.losses.sparse_categorical_crossentropy(
            labels, logits, from_logits=True
        )
        correct = ops.equal(ops.cast(ops.argmax(logits, axis=-1), "int32"), labels)
        reward = ops.stop_gradient(ops.cast(correct, "float32"))[:, None]  # R, [B, 1]
        baselines = ops.cast(outputs["baselines"], "float32")  # b_t, [B, n−1]
        advantage = ops.stop_gradient(reward - baselines)
        log_probs = ops.cast(outputs["log_probs"], "float32")
        reinforce = -ops.sum(log_probs * advantage, axis=-1)
        baseline_mse = ops.mean(ops.square(baselines - reward), axis=-1)
        if not self.learned_policy or baselines.shape[1] == 0:
            # A random policy has no baseline to fit; one glimpse chooses no location.
            reinforce = baseline_mse = ops.zeros_like(cross_entropy)
        return cross_entropy, reinforce, baseline_mse

    @staticmethod
    def _mean(values, sample_weight):
        if sample_weight is None:
            return ops.mean(values)
        weight = ops.reshape(ops.cast(sample_weight, "float32"), (-1,))
        return ops.sum(values * weight) / ops.maximum(ops.sum(weight), 1e-12)

    @staticmethod
    def _check_labels(y, method):
        if y is None:
            raise ValueError(
                f"RecurrentAttentionModel: `{method}` needs integer class labels `y`; received "
                "none."
            )
        shape = tuple(y.shape)
        if len(shape) not in (1, 2) or (len(shape) == 2 and shape[1] not in (1, None)):
            raise ValueError(
                f"RecurrentAttentionModel: `{method}` needs integer class ids `y` of shape [B] "
                f"(not one-hot); received shape {shape}."
            )

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The hybrid surrogate loss in training (plus any weight regularizers), the
        cross-entropy in evaluation; divided by the replica count under a ``tf.distribute``
        strategy, as Keras' losses are, because replicas' gradients are summed."""
        self._check_labels(y, "fit" if training else "evaluate")
        # Read by `compute_metrics`, which every backend's train and test steps call after
        # this in the same (traced) step; its signature has no `training`.
        self._evaluating = not training
        terms = self.hybrid_loss(y, y_pred)
        cross_entropy, reinforce, baseline_mse = (self._mean(term, sample_weight) for term in terms)
        if not training:
            return _per_replica(cross_entropy)
        loss = cross_entropy + reinforce + baseline_mse
        for extra in self.losses:  # weight regularizers, `add_loss`
            loss = loss + ops.sum(ops.cast(extra, "float32"))
        return _per_replica(loss)

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Training: the total loss, the three terms and the accuracy. Evaluation: the loss
        (the cross-entropy) and the accuracy."""
        self.accuracy_tracker.update_state(y, y_pred["probabilities"], sample_weight)
        if getattr(self, "_evaluating", False):
            return {name: self.get_metrics_result()[name] for name in ("loss", "accuracy")}
        # Recomputed, not kept from `compute_loss`: on JAX that runs inside `jax.grad`'s trace,
        # whose values cannot leave it. The terms are [B]-sized; the cost is negligible.
        terms = self.hybrid_loss(y, y_pred)
        for tracker, term in zip(
            (self.cross_entropy_tracker, self.reinforce_tracker, self.baseline_tracker), terms
        ):
            tracker.update_state(self._mean(term, sample_weight))
        return self.get_metrics_result()


def classifier_outputs(attention, num_classes):
    """The outputs of a glimpse model (RAM, DRAM) from its attention layer's dict: a linear
    ``classifier`` on ``hidden`` (``logits``; float32 ``probabilities``), and the policy's
    ``locations``, ``log_probs`` and ``baselines``."""
    logits = keras.layers.Dense(num_classes, name="classifier")(attention["hidden"])
    probabilities = keras.layers.Softmax(dtype="float32", name="probabilities")(logits)
    return {
        "logits": logits,
        "probabilities": probabilities,
        "locations": attention["locations"],
        "log_probs": attention["log_probs"],
        "baselines": attention["baselines"],
    }


def _per_replica(loss):
    """``loss`` divided by the number of replicas of the ``tf.distribute`` strategy in use
    (1 outside one, and on JAX and PyTorch)."""
    _, replicas = replica_position()
    return loss if replicas == 1 else loss / replicas


def recurrent_attention_model(
    image_shape: tuple[int, int, int],
    num_classes: int,
    num_glimpses: int = 4,
    patch_size: int = 8,
    num_scales: int = 1,
    scale_factor: float = 2.0,
    glimpse_units: int = 128,
    location_units: int = 128,
    glimpse_output_units: int = 256,
    units: int = 256,
    core: str = "lstm",
    location_std: float = 0.1,
    policy: str = "learned",
    policy_gradient_to_core: bool = False,
    seed: int | None = None,
    glimpse_filters: tuple[int, ...] = (),
    name: str = "recurrent_attention_model",
) -> RecurrentAttentionModel:
    """The Recurrent Attention Model (RAM) of Mnih et al. (2014) for image classification.

    A `keras_adl.layers.RecurrentAttention` layer (glimpse network, core RNN, Gaussian location
    policy, baseline) followed by a linear classifier on the last core output ``h_n``. The
    model is a `RecurrentAttentionModel`, whose `train_step` applies the hybrid loss:
    cross-entropy + REINFORCE (reward 1 for a correct class) + baseline MSE. Inference with a
    learned policy is deterministic (the policy's mean locations). ``policy="random"`` gives the paper's
    random-glimpse baseline: the same network, looking at uniformly random locations after the
    first, central glimpse.

    Args:
        image_shape: ``(H, W, C)``.
        num_classes: number of classes.
        num_glimpses: ``n``; this and the arguments up to ``glimpse_filters`` are those of
            `keras_adl.layers.RecurrentAttention`.
        patch_size: the glimpse sensor's patch size.
        num_scales: the glimpse sensor's number of scales.
        scale_factor: the glimpse sensor's factor between scales.
        glimpse_units: the size of ``h_g``.
        location_units: the size of ``h_l``.
        glimpse_output_units: the size of ``g``.
        units: the size of the core state ``h``.
        core: ``"lstm"``, ``"gru"`` or ``"rnn"``.
        location_std: ``σ`` of the Gaussian policy.
        policy: ``"learned"`` or ``"random"``.
        policy_gradient_to_core: let REINFORCE's gradient into the core and glimpse networks.
        seed: seed of the sampling.
        glimpse_filters: filters of 3×3 convolutions on the glimpse before ``h_g``.
        name: model name.

    Returns:
        A `RecurrentAttentionModel` mapping images ``[B, H, W, C]`` to a dict: ``logits`` and
        ``probabilities`` ``[B, num_classes]``, ``locations`` ``[B, n, 2]`` (the glimpse
        centres, ``(y, x)`` in ``[-1, 1]``, for plotting), ``log_probs`` and ``baselines``
        ``[B, n−1]`` (used by the training rule). Compile it with an optimizer only and fit on
        ``(images, integer labels)``.

    Example:

    >>> model = recurrent_attention_model((32, 32, 1), 10, num_glimpses=3, units=32,
    ...                                   glimpse_output_units=32)
    >>> tuple(model.output["locations"].shape)
    (None, 3, 2)

    References:
        Mnih, Heess, Graves, Kavukcuoglu (2014). Recurrent Models of Visual Attention.
        arXiv:1406.6247.
    """
    where = "recurrent_attention_model: "
    image_shape = check_image_shape(image_shape, where=where)
    check_positive_int("num_classes", num_classes, where=where)
    images = keras.Input(image_shape, name="images")
    attention = RecurrentAttention(
        num_glimpses=num_glimpses,
        patch_size=patch_size,
        num_scales=num_scales,
        scale_factor=scale_factor,
        glimpse_units=glimpse_units,
        location_units=location_units,
        glimpse_output_units=glimpse_output_units,
        units=units,
        core=core,
        location_std=location_std,
        policy=policy,
        policy_gradient_to_core=policy_gradient_to_core,
        seed=seed,
        glimpse_filters=glimpse_filters,
        name="recurrent_attention",
    )(images)
    outputs = classifier_outputs(attention, num_classes)
    return RecurrentAttentionModel(inputs=images, outputs=outputs, name=name)

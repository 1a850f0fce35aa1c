"""The losses and metrics saved with models: the memory papers' bit costs and perplexity.

Keras losses and metrics of the memory papers: per-sequence bit costs over the answer phase.
The NTM and DNC papers report, per sequence, the number of wrong output bits ("bit errors per
sequence") and the binary cross-entropy in bits ("cost per sequence"). Both count only the
steps where an answer is expected: pass the task's ``weights`` ``[B, T]`` as ``sample_weight``
and list the metrics under ``weighted_metrics`` (Keras gives ``metrics`` no sample weights). A
``[B]`` sample weight (one per sequence) is accepted too.
Predictions are logits. `Perplexity` is the language models' (ELMo's biLM, GPT).

A family's own figures (NumPy functions of a model's outputs) live with the family, in
``keras_adl/recipes/<family>/evaluate.py``.
"""

import math

import keras
from keras import ops

from keras_adl.conventions import PAD

__all__ = ["BitErrorsPerSequence", "BitsPerSequence", "SequenceBitCrossEntropy", "Perplexity"]


def _per_step_cross_entropy(y_true, y_pred):
    """Σ over bits of the sigmoid cross-entropy (nats) of logits ``y_pred``: ``[B, T]``."""
    y_pred = ops.cast(y_pred, "float32")
    y_true = ops.cast(y_true, "float32")
    # max(x, 0) − x z + log(1 + exp(−|x|)): the stable form for logits.
    ce = ops.relu(y_pred) - y_pred * y_true + ops.log1p(ops.exp(-ops.abs(y_pred)))
    return ops.sum(ce, axis=-1)


@keras.saving.register_keras_serializable(package="keras_adl")
class SequenceBitCrossEntropy(keras.losses.Loss):
    """Sigmoid cross-entropy of logits, summed over bits and answer steps, per sequence.

    With ``sample_weight [B, T]`` (1 on answer steps), the loss is
    ``(1/B) Σ_b Σ_t w_bt Σ_k CE(y_btk, ŷ_btk)`` in nats: the "cost per sequence" the papers
    plot (divide by ``ln 2`` for bits), as in Collier & Beel's recipe (a sum over the sequence
    divided by the batch size).

    Args:
        name: loss name.
        dtype: the loss's dtype (``None``: the Keras default).
        **kwargs: standard loss arguments (``reduction`` is fixed).

    Example:

    >>> loss = SequenceBitCrossEntropy()
    >>> y = ops.ones((2, 3, 4))
    >>> round(float(loss(y, ops.zeros((2, 3, 4)), sample_weight=ops.ones((2, 3)))), 4)
    8.3178
    """

    def __init__(self, name="sequence_bit_cross_entropy", dtype=None, **kwargs):
        kwargs.pop("reduction", None)
        super().__init__(name=name, reduction="sum_over_batch_size", dtype=dtype, **kwargs)

    def call(self, y_true, y_pred):
        per_step = _per_step_cross_entropy(y_true, y_pred)  # [B, T]
        # Keras divides the weighted sum by B·T; scaling by T makes it a per-sequence sum.
        return per_step * ops.cast(ops.shape(per_step)[1], per_step.dtype)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}


class _PerSequenceSum(keras.metrics.Metric):
    """A per-step quantity summed over weighted steps and averaged over sequences."""

    def __init__(self, name, **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.sequences = self.add_variable(shape=(), initializer="zeros", name="sequences")

    def _per_step(self, y_true, y_pred):
        raise NotImplementedError

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = self._per_step(y_true, y_pred)  # [B, T]
        if sample_weight is not None:
            sample_weight = ops.cast(sample_weight, values.dtype)
            if len(sample_weight.shape) == 1:  # one weight per sequence
                sample_weight = ops.expand_dims(sample_weight, -1)
            values = values * sample_weight
        self.total.assign_add(ops.cast(ops.sum(values), self.total.dtype))
        self.sequences.assign_add(ops.cast(ops.shape(values)[0], self.sequences.dtype))

    def result(self):
        return ops.divide_no_nan(self.total, self.sequences)

    def reset_state(self):
        self.total.assign(0.0)
        self.sequences.assign(0.0)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}


@keras.saving.register_keras_serializable(package="keras_adl")
class Perplexity(keras.metrics.Metric):
    """``exp`` of the mean next-token cross-entropy (nats) over the tokens counted: the
    language-model figure. Tokens whose target is ``ignore_id`` (padding, by default) and
    tokens of zero sample weight are not counted; predictions are logits.

    Args:
        name: the metric's name.
        ignore_id: the target id of the tokens not counted.
        **kwargs: standard metric arguments.

    Example:

    >>> metric = Perplexity()
    >>> metric.update_state(ops.array([[1, 0]]), ops.zeros((1, 2, 4)))  # uniform over 4
    >>> round(float(metric.result()), 4)
    4.0
    """

    def __init__(self, name="perplexity", ignore_id=PAD, **kwargs):
        super().__init__(name=name, **kwargs)
        self.ignore_id = ignore_id
        self.total = self.add_variable(shape=(), initializer="zeros", name="total")
        self.count = self.add_variable(shape=(), initializer="zeros", name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true = ops.cast(y_true, "int32")
        losses = keras.losses.sparse_categorical_crossentropy(
            y_true, ops.cast(y_pred, "float32"), from_logits=True
        )
        weights = ops.ones_like(losses)
        if self.ignore_id is not None:
            weights = ops.cast(ops.not_equal(y_true, self.ignore_id), "float32")
        if sample_weight is not None:
            weights = weights * ops.cast(sample_weight, "float32")
        self.total.assign_add(ops.sum(losses * weights))
        self.count.assign_add(ops.sum(weights))

    def result(self):
        return ops.exp(ops.divide_no_nan(self.total, self.count))

    def reset_state(self):
        self.total.assign(0.0)
        self.count.assign(0.0)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype, "ignore_id": self.ignore_id}


@keras.saving.register_keras_serializable(package="keras_adl")
class BitErrorsPerSequence(_PerSequenceSum):
    """Mean number of wrong output bits per sequence (logit > 0 read as 1), on weighted steps.

    Args:
        name: the metric's name.
        **kwargs: standard metric arguments.

    Example:

    >>> m = BitErrorsPerSequence()
    >>> m.update_state(ops.ones((2, 3, 4)), -ops.ones((2, 3, 4)), ops.ones((2, 3)))
    >>> float(m.result())
    12.0
    """

    def __init__(self, name="bit_errors", **kwargs):
        super().__init__(name=name, **kwargs)

    def _per_step(self, y_true, y_pred):
        predicted = ops.cast(ops.cast(y_pred, "float32") > 0, "float32")
        return ops.sum(ops.abs(predicted - ops.cast(y_true, "float32")), axis=-1)


@keras.saving.register_keras_serializable(package="keras_adl")
class BitsPerSequence(_PerSequenceSum):
    """Mean cross-entropy per sequence in bits (nats / ln 2), on weighted steps: the papers' cost.

    Args:
        name: the metric's name.
        **kwargs: standard metric arguments.

    Example:

    >>> m = BitsPerSequence()
    >>> m.update_state(ops.ones((1, 1, 2)), ops.zeros((1, 1, 2)), ops.ones((1, 1)))
    >>> float(m.result())  # two bits at p = 1/2
    2.0
    """

    def __init__(self, name="bits_per_sequence", **kwargs):
        super().__init__(name=name, **kwargs)

    def _per_step(self, y_true, y_pred):
        return _per_step_cross_entropy(y_true, y_pred) / math.log(2.0)


# ---------------------------------------------------------------------- evaluation figures

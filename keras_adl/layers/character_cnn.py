"""ELMo's character-level token encoder: character embeddings, a CNN with max-over-time pooling
that ignores character padding, highway layers and a projection."""

from collections.abc import Sequence
from typing import Any

import keras
from keras import ops

from keras_adl.layers.highway import Highway
from keras_adl.ops.attention import large_negative
from keras_adl.type_aliases import Activation
from keras_adl.utils import check_positive_int, check_rank

_WHERE = "CharacterCNN: "


def _check_filters(filters):
    """``filters`` as a list of ``[width, count]`` lists of positive ints, or a clear error."""
    message = (
        f"{_WHERE}`filters` must be a non-empty sequence of (width, count) pairs of positive "
        f"integers, e.g. ((1, 32), (2, 32)); received {filters!r}."
    )
    if isinstance(filters, (str, bytes)) or not isinstance(filters, (list, tuple)) or not filters:
        raise ValueError(message)
    checked = []
    for pair in filters:
        if isinstance(pair, (str, bytes)) or not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ValueError(message)
        for value in pair:
            if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
                raise ValueError(message)
        checked.append([int(pair[0]), int(pair[1])])
    return checked


@keras.saving.register_keras_serializable(package="keras_adl")
class CharacterCNN(keras.layers.Layer):
    """Encodes each token from its characters (ELMo's token representation).

    For the character ids ``c_1 … c_C`` of a token (``0`` is padding, real characters first):

        e_i   = E[c_i]                                          (character embedding)
        f_k   = max_{valid s} activation(conv_k(e)_s)           (per filter k of width w_k)
        x     = Highway_{num_highway}([f_1; …; f_K])
        out   = W_p x + b_p                                     (projection to output_dim)

    This is the character CNN of ELMo (Peters et al. 2018, section 3.3; Kim et al. 2016)
    with one change: **character padding never changes a token's output**. ELMo's max runs
    over every window, including windows that cover padding, so a token's vector depends on
    how far the batch was padded. Here, with ``L`` the number of non-zero ids of the token, a
    window of width ``w`` starting at ``s`` counts only if ``s + w ≤ L`` (it covers real
    characters only), or if ``s = 0`` and ``L < w`` (a token shorter than the width gets
    exactly its first window). The character axis is zero-padded on the right to the widest
    filter when shorter. A token's output is therefore the same whatever ``C`` and whatever
    the other tokens of the batch.

    A token whose first id is 0 is a padded token: its output is exactly zero and the Keras
    mask ``ids[..., 0] != 0`` marks it.

    Weights: the character table, a kernel and a bias per filter, ``2 · num_highway`` for
    the highway layers (see `Highway`) and the projection's kernel and bias:
    ``1 + 2 · len(filters) + 2 · num_highway + 2`` trainable weights (17 by default).

    Args:
        num_characters: size of the character table, ids ``0 … num_characters - 1`` with 0
            the padding (e.g. 256 byte values, begin/end-of-word markers and padding).
        character_dim: ``E``, the size of a character embedding.
        filters: ``(width, count)`` pairs, one 1-D convolution each; the pooled features are
            concatenated (``Σ count`` of them).
        num_highway: the number of highway layers (0 for none).
        output_dim: the size of a token's vector.
        activation: applied to the convolutions before the max.
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: int ``[B, T, C]`` character ids of each token.

    Returns:
        ``[B, T, output_dim]``, exactly zero at padded tokens, with the Keras mask ``[B, T]``
        ``inputs[..., 0] != 0``.

    Example:

    >>> cnn = CharacterCNN(num_characters=50, character_dim=4, filters=((1, 4), (3, 8)),
    ...                    num_highway=1, output_dim=6)
    >>> ids = ops.array([[[5, 6, 7, 0], [9, 0, 0, 0], [0, 0, 0, 0]]], dtype="int32")
    >>> out = cnn(ids)
    >>> tuple(out.shape), [bool(m) for m in cnn.compute_mask(ids)[0]]
    ((1, 3, 6), [True, True, False])
    >>> [float(v) for v in out[0, 2]]
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]

    References:
        Peters et al. (2018). Deep contextualized word representations, section 3.3.
        NAACL-HLT. arXiv:1802.05365.
        Kim, Jernite, Sontag, Rush (2016). Character-Aware Neural Language Models. AAAI.
        Srivastava, Greff, Schmidhuber (2015). Highway Networks. arXiv:1505.00387.
    """

    def __init__(
        self,
        num_characters: int = 259,
        character_dim: int = 16,
        filters: Sequence[Sequence[int]] = ((1, 32), (2, 32), (3, 64), (4, 128), (5, 256)),
        num_highway: int = 2,
        output_dim: int = 128,
        activation: Activation = "relu",
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.num_characters = check_positive_int("num_characters", num_characters, where=_WHERE)
        self.character_dim = check_positive_int("character_dim", character_dim, where=_WHERE)
        self.filters = _check_filters(filters)
        if isinstance(num_highway, bool) or not isinstance(num_highway, int) or num_highway < 0:
            raise ValueError(
                f"{_WHERE}`num_highway` must be an int >= 0; received {num_highway!r}."
            )
        self.num_highway = num_highway
        self.output_dim = check_positive_int("output_dim", output_dim, where=_WHERE)
        self.activation = keras.activations.get(activation)
        self.max_width = max(width for width, _ in self.filters)
        self.num_features = sum(count for _, count in self.filters)
        self.supports_masking = True

        self.character_embedding = keras.layers.Embedding(
            self.num_characters,
            self.character_dim,
            dtype=self.dtype_policy,
            name="character_embedding",
        )
        self.convolutions = [
            keras.layers.Conv1D(
                count, width, padding="valid", dtype=self.dtype_policy, name=f"conv_{i}"
            )
            for i, (width, count) in enumerate(self.filters)
        ]
        self.highway = None
        if self.num_highway:
            self.highway = Highway(self.num_highway, dtype=self.dtype_policy, name="highway")
        self.projection = keras.layers.Dense(
            self.output_dim, dtype=self.dtype_policy, name="projection"
        )

    def _check_inputs(self, shape, dtype=None):
        shape = check_rank("inputs", tuple(shape), 3, where=_WHERE)
        if dtype is not None and not keras.backend.standardize_dtype(dtype).startswith(
            ("int", "uint")
        ):
            raise TypeError(
                f"{_WHERE}`inputs` must be integer character ids [B, T, C]; received dtype "
                f"{keras.backend.standardize_dtype(dtype)}."
            )
        return shape

    def build(self, inputs_shape):
        self._check_inputs(inputs_shape)
        self.character_embedding.build((None, None))
        for conv in self.convolutions:
            conv.build((None, None, self.character_dim))
        if self.highway is not None:
            self.highway.build((None, self.num_features))
        self.projection.build((None, self.num_features))

    def convolution_features(self, inputs):
        """The max-pooled convolution features of each token, before the highway layers and
        the projection: ``[B, T, sum of the filter counts]``, zeros at padded tokens. Kim et
        al. (2016, table 6) find these orthographic (neighbours share letters) and the
        highway output semantic and syntactic."""
        features, _ = self._pooled(inputs)
        return features

    def _pooled(self, inputs):
        """``(features [B, T, F], flat features [B·T, F])`` of the convolutions."""
        shape = self._check_inputs(inputs.shape, inputs.dtype)
        batch, steps, chars = ops.shape(inputs)[0], ops.shape(inputs)[1], ops.shape(inputs)[2]
        ids = ops.reshape(ops.cast(inputs, "int32"), (-1, chars))  # [N = B·T, C]
        # One padding token more, dropped below: TensorFlow's convolutions give a wrong shape
        # for zero rows (an empty batch, or zero steps).
        ids = ops.pad(ids, ((0, 1), (0, 0)))
        lengths = ops.sum(ops.cast(ops.not_equal(ids, 0), "int32"), axis=-1)  # L, [N]
        # Pad the character axis to the widest filter. An unknown C (a traced graph) is padded
        # by max_width - 1: the extra windows are all invalid, so the output is the same.
        static_chars = shape[2]
        extra = self.max_width - 1 if static_chars is None else self.max_width - static_chars
        if extra > 0:
            ids = ops.pad(ids, ((0, 0), (0, extra)))
        embedded = self.character_embedding(ids)  # [N, P, E]

        lengths = ops.expand_dims(lengths, -1)  # [N, 1]
        pooled = []
        for (width, _), conv in zip(self.filters, self.convolutions):
            features = self.activation(conv(embedded))  # [N, P - w + 1, count]
            starts = ops.expand_dims(ops.arange(ops.shape(features)[1], dtype="int32"), 0)
            valid = ops.logical_or(
                ops.less_equal(starts + width, lengths),  # the window holds real characters
                ops.logical_and(ops.equal(starts, 0), ops.less(lengths, width)),  # short token
            )  # [N, P - w + 1]
            fill = ops.cast(large_negative(features.dtype), features.dtype)
            features = ops.where(ops.expand_dims(valid, -1), features, fill)
            pooled.append(ops.max(features, axis=1))  # [N, count]
        x = ops.concatenate(pooled, axis=-1) if len(pooled) > 1 else pooled[0]
        x = x[:-1]  # [N, F], without the padding token
        token_mask = ops.expand_dims(self.compute_mask(inputs), -1)
        per_token = ops.reshape(x, (batch, steps, self.num_features))
        return ops.where(token_mask, per_token, ops.zeros_like(per_token)), x

    def call(self, inputs):
        _, x = self._pooled(inputs)
        if self.highway is not None:
            x = self.highway(x)
        x = self.projection(x)  # [N, output_dim]
        x = ops.reshape(x, (ops.shape(inputs)[0], ops.shape(inputs)[1], self.output_dim))
        token_mask = ops.expand_dims(self.compute_mask(inputs), -1)
        return ops.where(token_mask, x, ops.zeros_like(x))

    def compute_mask(self, inputs, mask=None):
        return ops.not_equal(inputs[..., 0], 0)

    def compute_output_shape(self, inputs_shape):
        return (inputs_shape[0], inputs_shape[1], self.output_dim)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_characters": self.num_characters,
                "character_dim": self.character_dim,
                "filters": [list(pair) for pair in self.filters],
                "num_highway": self.num_highway,
                "output_dim": self.output_dim,
                "activation": keras.activations.serialize(self.activation),
            }
        )
        return config

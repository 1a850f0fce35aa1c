"""ELMo vectors for a downstream model: a trained biLM's layers, frozen, mixed by a learned
`ScalarMix`."""

import copy
import json
from typing import Any

import keras
from keras import ops

from keras_adl.layers.scalar_mix import ScalarMix
from keras_adl.utils import check_rank

MIXES = ("all", "top")


@keras.saving.register_keras_serializable(package="keras_adl")
class ELMoEmbedding(keras.layers.Layer):
    """``ELMo_k = γ Σ_j softmax(s)_j h_{k,j}`` over the layers of a trained biLM (Peters et al.
    2018, eq. 1), for the words of a downstream model.

    Wraps an embedder from `keras_adl.models.elmo_embedder` (character ids → all biLM layers
    ``[B, L, T, D]``), frozen by default as in the paper, and learns its own `ScalarMix` for
    the task. ``mix="top"`` uses the top layer alone (``γ · h_{k,L}``), the baseline the paper
    compares the mix with. Saved and reloaded with the embedder inside (``.keras``).

    Args:
        embedder: a ``keras.Model`` from `keras_adl.models.elmo_embedder`.
        mix: ``"all"`` (every layer) or ``"top"`` (the top layer).
        layer_norm: normalise each layer over the unmasked words before mixing (`ScalarMix`).
        trainable_embedder: fine-tune the biLM too (default: frozen).
        **kwargs: standard layer arguments.

    Call arguments:
        inputs: int ``[B, T, C]`` character ids (`keras_adl.text.characters`); an all-zero
            word is padding.

    Returns:
        ``[B, T, D]``, with the Keras mask ``inputs[..., 0] != 0``; zeros at padded words.

    Example:

    >>> from keras_adl.models import elmo_bilm, elmo_embedder
    >>> bilm = elmo_bilm(30, max_characters=8, filters=((1, 4), (2, 4)), projection_dim=8,
    ...                  units=8)
    >>> layer = ELMoEmbedding(elmo_embedder(bilm))
    >>> tuple(layer(keras.ops.ones((2, 5, 8), "int32")).shape)
    (2, 5, 16)

    References:
        Peters et al. (2018). Deep contextualized word representations. NAACL.
    """

    def __init__(
        self,
        embedder: keras.Model | dict[str, Any],
        mix: str = "all",
        layer_norm: bool = False,
        trainable_embedder: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        where = "ELMoEmbedding: "
        if isinstance(embedder, dict):
            embedder = keras.saving.deserialize_keras_object(copy.deepcopy(embedder))
        if not isinstance(embedder, keras.Model) or len(embedder.outputs) != 1:
            raise TypeError(
                f"{where}`embedder` must be a keras.Model from `elmo_embedder(bilm)`; received "
                f"{type(embedder).__name__}."
            )
        shape = tuple(embedder.output.shape)
        if len(shape) != 4 or shape[1] is None:
            raise ValueError(
                f"{where}`embedder` must output [B, L, T, D] with a known L (from "
                f"`elmo_embedder(bilm)`); its output has shape {shape}."
            )
        if mix not in MIXES:
            raise ValueError(f"{where}`mix` must be one of {MIXES}; received {mix!r}.")
        if not isinstance(layer_norm, bool):
            raise TypeError(f"{where}`layer_norm` must be a bool; received {layer_norm!r}.")
        self.embedder = embedder
        # Set twice. A layer deserialised frozen (trainable=False in its config) creates its
        # sublayers trainable, and on the TensorFlow backend `x.trainable = False` on a layer
        # already False never reaches its setter (KerasAutoTrackable.__setattr__ skips an
        # assignment of the same object), so it would not pass the flag on to them.
        self.embedder.trainable = True
        self.embedder.trainable = bool(trainable_embedder)
        self.trainable_embedder = bool(trainable_embedder)
        self.mix = mix
        self.layer_norm = layer_norm
        self.num_layers = shape[1]
        self.scalar_mix = ScalarMix(
            self.num_layers if mix == "all" else 1,
            layer_norm=layer_norm,
            dtype=self.dtype_policy,
            name="scalar_mix",
        )
        self.supports_masking = True

    def build(self, inputs_shape):
        check_rank("inputs", inputs_shape, 3, where="ELMoEmbedding: ")
        steps = inputs_shape[1]
        self.scalar_mix.build(
            (inputs_shape[0], self.scalar_mix.num_layers, steps, self.embedder.output.shape[-1])
        )

    def call(self, inputs, training=None):
        layers = self.embedder(inputs, training=training if self.trainable_embedder else False)
        if self.mix == "top":
            layers = layers[:, -1:]
        mask = ops.not_equal(inputs[..., 0], 0)
        mixed = self.scalar_mix(ops.cast(layers, self.compute_dtype), mask=mask)
        return mixed * ops.cast(ops.expand_dims(mask, -1), mixed.dtype)

    def compute_mask(self, inputs, mask=None):
        return ops.not_equal(inputs[..., 0], 0)

    def compute_output_shape(self, inputs_shape):
        return tuple(inputs_shape[:2]) + (self.embedder.output.shape[-1],)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                # In its JSON form (lists, not tuples), the form a .keras file stores.
                "embedder": json.loads(
                    json.dumps(keras.saving.serialize_keras_object(self.embedder))
                ),
                "mix": self.mix,
                "layer_norm": self.layer_norm,
                "trainable_embedder": self.trainable_embedder,
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)  # deserialising consumes the embedder's config: copy it
        config["embedder"] = keras.saving.deserialize_keras_object(
            copy.deepcopy(config["embedder"])
        )
        return cls(**config)

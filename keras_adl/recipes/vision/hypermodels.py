"""The vision family's HyperModels (need the ``tuner`` extra): the RAM, the whole-image
baselines, the DRAM and Show, Attend and Tell; the defaults are the family's presets, the
models are built and compiled by `keras_adl.recipes.vision.build`."""

from keras_adl.models.captioning import show_attend_tell
from keras_adl.recipes._tuning import import_keras_tuner, tuned_learning_rate
from keras_adl.recipes.vision.build import (
    build_dram,
    build_ram,
    compile_baseline,
    compile_captioner,
)
from keras_adl.recipes.vision.spec import BASELINES, CAPTION, DRAM, RAM

keras_tuner = import_keras_tuner()


class RecurrentAttentionHyperModel(keras_tuner.HyperModel):
    """Searches `recurrent_attention_model` (trained by its own hybrid REINFORCE rule).

    Hyperparameters: ``patch_size``; ``num_scales``; ``units`` (core; the glimpse network's
    ``g`` has the same size and ``h_g``, ``h_l`` half of it); ``location_std``;
    ``learning_rate`` (Adam). Tune on ``keras_tuner.Objective("val_accuracy", "max")``.

    Args:
        image_shape: ``(H, W, C)``.
        num_classes: number of classes.
        num_glimpses: fixed number of glimpses (the budget is part of the task).
        patch_size, num_scales: the searched glimpses' defaults (the task's layout).
        policy: ``"learned"`` or ``"random"`` (the random-glimpse baseline).
        jit_compile: compile the train step with XLA.
    """

    def __init__(
        self,
        image_shape,
        num_classes,
        num_glimpses=4,
        patch_size=8,
        num_scales=1,
        policy="learned",
        jit_compile=True,
        name="recurrent_attention",
        tunable=True,
    ):
        super().__init__(name=name, tunable=tunable)
        self.image_shape = tuple(image_shape)
        self.num_classes = num_classes
        self.num_glimpses = num_glimpses
        self.patch_size = patch_size
        self.num_scales = num_scales
        self.policy = policy
        self.jit_compile = jit_compile

    def build(self, hp):
        units = hp.Choice("units", [64, 128, 256], default=RAM["units"])
        settings = dict(
            num_glimpses=self.num_glimpses,
            patch_size=hp.Choice(
                "patch_size", sorted({6, 8, 12, self.patch_size}), default=self.patch_size
            ),
            num_scales=hp.Int("num_scales", 1, 3, default=self.num_scales),
            glimpse_units=units // 2,
            location_units=units // 2,
            glimpse_output_units=units,
            units=units,
            location_std=hp.Choice("location_std", [0.05, 0.1, 0.2], default=RAM["location_std"]),
            policy=self.policy,
        )
        learning_rate = tuned_learning_rate(hp, RAM["learning_rate"])
        return build_ram(
            self.image_shape,
            learning_rate,
            self.jit_compile,
            num_classes=self.num_classes,
            **settings,
        )


def _search_mlp_depth(hp, settings):
    settings["num_layers"] = hp.Int("num_layers", 1, 3, default=settings["num_layers"])


def _search_convnet_filters(hp, settings):
    settings["filters"] = hp.Choice("filters", [8, 16, 32], default=settings["filters"])


class WholeImageHyperModel(keras_tuner.HyperModel):
    """Searches a whole-image baseline (``"mlp"`` or ``"convnet"``) compiled by
    `compile_baseline`.

    Hyperparameters: ``units``; ``num_layers`` (MLP) or ``filters`` (convnet);
    ``learning_rate`` (Adam). Tune on ``keras_tuner.Objective("val_accuracy", "max")``.

    Args:
        model_name: ``"mlp"`` or ``"convnet"``.
        image_shape: ``(H, W, C)``.
        jit_compile: compile the train step with XLA.
    """

    # Each baseline's searched size besides ``units``.
    SIZE_SEARCH = {"mlp": _search_mlp_depth, "convnet": _search_convnet_filters}

    def __init__(self, model_name, image_shape, jit_compile=True, name=None, tunable=True):
        if model_name not in BASELINES:
            raise ValueError(
                f"WholeImageHyperModel: `model_name` must be one of "
                f"{sorted(BASELINES)}; received {model_name!r}."
            )
        super().__init__(name=name or model_name, tunable=tunable)
        self.model_name = model_name
        self.image_shape = tuple(image_shape)
        self.jit_compile = jit_compile

    def build(self, hp):
        settings = dict(BASELINES[self.model_name])
        learning_rate = tuned_learning_rate(hp, settings.pop("learning_rate"))
        del settings["learning_rate_decay"]  # the search's short trials: a constant rate
        settings["units"] = hp.Choice("units", [128, 256, 512], default=settings["units"])
        self.SIZE_SEARCH[self.model_name](hp, settings)
        return compile_baseline(
            self.model_name, self.image_shape, learning_rate, self.jit_compile, **settings
        )


class DeepRecurrentAttentionHyperModel(keras_tuner.HyperModel):
    """Searches `deep_recurrent_attention_model` on digit strips (3 digits and ``END``,
    ``PAD`` ignored), trained by its own hybrid REINFORCE rule.

    Hyperparameters: ``units`` (both RNNs; the glimpse network's ``g`` has the same size and
    ``h_g``, ``h_l`` half of it); ``glimpses_per_symbol``; ``location_std``;
    ``learning_rate`` (Adam, constant in the search's short trials where the recipe decays
    it). Tune on ``keras_tuner.Objective("val_sequence_accuracy", "max")``.

    Args:
        image_shape: ``(H, W, C)`` of the strips.
        patch_size, glimpse_filters, context_size: of the glimpses, the glimpse network and
            the context network (`keras_adl.recipes.vision.spec.DRAM_LAYOUT`).
        policy: ``"learned"`` or ``"random"``.
        jit_compile: compile the train step with XLA.
    """

    def __init__(
        self,
        image_shape,
        patch_size=8,
        context_size=(4, 12),
        policy="learned",
        jit_compile=True,
        name="deep_recurrent_attention",
        tunable=True,
        glimpse_filters=(),
    ):
        super().__init__(name=name, tunable=tunable)
        self.image_shape = tuple(image_shape)
        self.patch_size = patch_size
        self.glimpse_filters = tuple(glimpse_filters)
        self.context_size = tuple(context_size)
        self.policy = policy
        self.jit_compile = jit_compile

    def build(self, hp):
        settings = dict(DRAM, glimpse_filters=self.glimpse_filters)
        learning_rate = tuned_learning_rate(hp, settings.pop("learning_rate"))
        del settings["learning_rate_decay"]  # the search's short trials: a constant rate
        units = hp.Choice("units", [64, 128, 256], default=settings["units"])
        settings.update(
            units=units,
            glimpse_units=units // 2,
            location_units=units // 2,
            glimpse_output_units=units,
            glimpses_per_symbol=hp.Int(
                "glimpses_per_symbol", 1, 3, default=settings["glimpses_per_symbol"]
            ),
            location_std=hp.Choice(
                "location_std", [0.05, 0.1, 0.2], default=settings["location_std"]
            ),
        )
        return build_dram(
            self.image_shape,
            learning_rate,
            self.jit_compile,
            patch_size=self.patch_size,
            context_size=self.context_size,
            policy=self.policy,
            **settings,
        )


class ShowAttendTellHyperModel(keras_tuner.HyperModel):
    """Searches `show_attend_tell` on images.

    Hyperparameters: ``units``; ``embedding_dim``; ``learning_rate``. The library's recipe
    otherwise (Adam with a global-norm clip of 5, masked sparse cross-entropy). ``λ`` is
    fixed: ``val_loss`` includes ``λ`` times the penalty, whose floor ``L(1 − T/L)²`` is far
    above a good cross-entropy, so a search over ``λ`` on ``val_loss`` would always pick
    ``λ = 0``.

    Args:
        vocab_size: caption vocabulary size (13 for digit strips).
        image_shape: ``(H, W, C)``.
        encoder_filters: of the CNN encoder (fixed: it sets the number of regions ``L``).
        regularization: the doubly stochastic ``λ``.
        jit_compile: compile the train step with XLA.
    """

    def __init__(
        self,
        vocab_size,
        image_shape,
        encoder_filters=CAPTION["encoder_filters"],
        regularization=CAPTION["regularization"],
        jit_compile=True,
        name="show_attend_tell",
        tunable=True,
    ):
        super().__init__(name=name, tunable=tunable)
        self.vocab_size = vocab_size
        self.image_shape = tuple(image_shape)
        self.encoder_filters = tuple(encoder_filters)
        self.regularization = regularization
        self.jit_compile = jit_compile

    def build(self, hp):
        model = show_attend_tell(
            self.vocab_size,
            image_shape=self.image_shape,
            units=hp.Choice("units", [32, 64, 128], default=CAPTION["units"]),
            embedding_dim=hp.Choice(
                "embedding_dim", [16, 32, 64], default=CAPTION["embedding_dim"]
            ),
            regularization=self.regularization,
            encoder_filters=self.encoder_filters,
        )
        learning_rate = tuned_learning_rate(hp, CAPTION["learning_rate"])
        return compile_captioner(model, learning_rate, self.jit_compile)

"""The pretraining family's HyperModel (needs the ``tuner`` extra)."""

from keras_adl.recipes._tuning import import_keras_tuner, tuned_learning_rate
from keras_adl.recipes.pretraining.build import build_model
from keras_adl.recipes.pretraining.spec import FAMILY, SEGMENTS

keras_tuner = import_keras_tuner()


class PretrainingHyperModel(keras_tuner.HyperModel):
    """Searches a pretraining-family model (`keras_adl.recipes.pretraining.build.build_model`):
    the Transformer's size — ``model_dim`` (64, 128, 256; the feed-forward width is 4×),
    ``num_layers`` (1–4), ``num_heads`` (2, 4), ``dropout`` — and its learning-rate schedule —
    the peak ``learning_rate`` (log scale, 1e-4 to 3e-3) and the linear warm-up's share of the
    steps, ``warmup_fraction`` (0, 0.05, 0.1, 0.2), before the cosine decay to 0; for the GPT
    classifier also ``lm_loss_weight``. The defaults are the (task, model) preset.

    Args:
        task, model_name: a task of the family and its model (``bert`` or ``gpt``).
        vocab_size: the tokenizer's size.
        total_steps: the steps the schedule spans (steps per epoch × epochs).
        num_classes: for ``finetune``.
        pretrained: for ``finetune``, a function returning the pretrained BERT encoder or
            `gpt_lm` (called anew for each trial); the sizes are then not searched.
        sizes: sizes fixed instead of searched (a pretrained run's ``sequence_length``).
        segments: ``pretrain_mlm``'s examples (``"pairs"``: with next-sentence prediction).
    """

    def __init__(
        self,
        task,
        model_name,
        vocab_size,
        total_steps,
        num_classes=None,
        pretrained=None,
        sizes=None,
        segments=SEGMENTS,
        name=None,
        tunable=True,
    ):
        super().__init__(name=name or f"{task}_{model_name}", tunable=tunable)
        FAMILY.task(task).preset(model_name)  # a KeyError for an unknown pair
        self.task, self.model_name = task, model_name
        self.vocab_size, self.total_steps = vocab_size, total_steps
        self.num_classes, self.pretrained = num_classes, pretrained
        self.sizes = dict(sizes or {})
        self.segments = segments

    def build(self, hp):
        defaults = FAMILY.task(self.task).preset(self.model_name)
        overrides = dict(self.sizes)
        if self.pretrained is None:
            dim = hp.Choice("model_dim", [64, 128, 256], default=defaults["model_dim"])
            overrides.update(
                model_dim=dim,
                intermediate_dim=4 * dim,
                num_layers=hp.Int("num_layers", 1, 4, default=defaults["num_layers"]),
                num_heads=hp.Choice("num_heads", [2, 4], default=defaults["num_heads"]),
                dropout=hp.Float("dropout", 0.0, 0.3, step=0.1, default=defaults["dropout"]),
            )
        overrides["learning_rate"] = tuned_learning_rate(hp, defaults["learning_rate"], high=3e-3)
        overrides["warmup_fraction"] = hp.Choice(
            "warmup_fraction", [0.0, 0.05, 0.1, 0.2], default=defaults["warmup_fraction"]
        )
        if "lm_loss_weight" in defaults:  # > 0: the data carries the LM targets
            overrides["lm_loss_weight"] = hp.Choice(
                "lm_loss_weight", [0.1, 0.25, 0.5, 1.0], default=defaults["lm_loss_weight"]
            )
        return build_model(
            self.task,
            self.model_name,
            self.vocab_size,
            num_classes=self.num_classes,
            total_steps=self.total_steps,
            pretrained=self.pretrained() if self.pretrained else None,
            segments=self.segments,
            **overrides,
        )

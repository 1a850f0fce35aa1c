"""What the pretraining family's tasks share (`TransformerTask`): a Transformer (``bert`` or
``gpt``) built from the task's preset, searched by `PretrainingHyperModel` on the task's
`SearchData`, exported with its vocabulary; and the model sizes of ``--num-layers`` & co."""

import dataclasses

from keras_adl.recipes._recipe import TaskRecipe
from keras_adl.recipes._tuning import search
from keras_adl.recipes.pretraining import data, spec
from keras_adl.recipes.pretraining.build import build_model
from keras_adl.recipes.pretraining.serving import export
from keras_adl.training.rundir import RecipeError


def model_sizes(options):
    """The sizes ``--num-layers``, ``--model-dim``, ``--num-heads`` and ``--intermediate-dim``
    give (the others stay the family's `SIZES`), checked to fit together."""
    sizes = {
        option.dest: options[option.dest]
        for option in spec.SIZE_OPTIONS
        if options.get(option.dest) is not None
    }
    model_dim = sizes.get("model_dim", spec.SIZES["model_dim"])
    num_heads = sizes.get("num_heads", spec.SIZES["num_heads"])
    if model_dim % num_heads:
        raise RecipeError(
            f"--model-dim ({model_dim}) must be divisible by --num-heads ({num_heads})"
        )
    return sizes


def refuse_sizes(options):
    """Raises `RecipeError` if ``options`` give a model size: ``tune`` searches them."""
    given = [o.flag for o in spec.SIZE_OPTIONS if options.get(o.dest) is not None]
    if given:
        what = "is an option" if len(given) == 1 else "are options"
        raise RecipeError(f"tune searches the model's size; {', '.join(given)} {what} of train")


@dataclasses.dataclass
class SearchData:
    """What ``tune`` searches on: the vocabulary, the training batches and their steps per
    epoch, the development split as ``validation_data``, and the HyperModel's fixed parts (a
    pretrained start, its sizes)."""

    tokenizer: object
    dataset: object
    steps: int
    validation: object
    objective: tuple
    num_classes: int = None
    pretrained: object = None
    sizes: dict = dataclasses.field(default_factory=dict)


class TransformerTask(TaskRecipe):
    """A task of the family: a Transformer (``bert`` or ``gpt``) under a warm-up + cosine
    schedule, searched by `PretrainingHyperModel`, exported with its vocabulary."""

    def build_model(
        self,
        model_name,
        vocab_size,
        num_classes=None,
        total_steps=1000,
        pretrained=None,
        jit_compile=True,
        segments=spec.SEGMENTS,
        **overrides,
    ):
        """The compiled model ``keras-adl train TASK --model MODEL`` trains
        (`keras_adl.recipes.pretraining.build.build_model`); ``overrides`` replace preset
        values."""
        return build_model(
            self.name,
            model_name,
            vocab_size,
            num_classes=num_classes,
            total_steps=total_steps,
            pretrained=pretrained,
            jit_compile=jit_compile,
            segments=segments,
            **overrides,
        )

    def hypermodel(self, model_name, vocab_size, total_steps, **kwargs):
        """The `PretrainingHyperModel` searching ``model_name`` on this task."""
        from keras_adl.recipes.pretraining.hypermodels import PretrainingHyperModel

        return PretrainingHyperModel(self.name, model_name, vocab_size, total_steps, **kwargs)

    def search_data(self, model_name, samples, options):
        """The task's `SearchData`."""
        raise NotImplementedError

    def tune(self, model_name, trials, epochs, samples, out, options):
        """Random search over `PretrainingHyperModel` (the Transformer's size and the warm-up
        + cosine schedule; with ``finetune --init`` the schedule only), scored on the
        development split (`search_data`)."""
        refuse_sizes(options)
        found = self.search_data(model_name, samples, options)
        hypermodel = self.hypermodel(
            model_name,
            found.tokenizer.size,
            total_steps=found.steps * epochs,
            num_classes=found.num_classes,
            pretrained=found.pretrained,
            sizes=found.sizes,
            segments=options.get("segments", spec.SEGMENTS),
        )
        return search(
            hypermodel,
            found.objective,
            trials,
            out,
            f"{self.name}_{model_name}",
            found.dataset,
            validation_data=found.validation,
            epochs=epochs,
            steps_per_epoch=found.steps,
            shuffle=False,
        )

    def serving_fn(self, model, tokenizer, record):
        """The ``tf.function`` the task's export serves."""
        raise NotImplementedError

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """A SavedModel of `serving_fn`, with the run's vocabulary beside it."""
        tokenizer = data.load_tokenizer(run_dir)
        export(model, export_dir, self.serving_fn(model, tokenizer, record), tokenizer, record)

"""The vision family's tasks, three kinds behind the `TaskRecipe` verbs: `RamClassification`
(the RAM and the whole-image baselines classify digits placed on a canvas), `Captioning` (Show,
Attend and Tell reads strips of digits) and `GlimpseReading` (the DRAM reads them glimpse by
glimpse)."""

import collections

from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE
from keras_adl.recipes._compile import override
from keras_adl.recipes._development import (
    MIN_FOR_DEVELOPMENT,
    too_few_to_tune,
    without_development,
)
from keras_adl.recipes._recipe import TaskRecipe
from keras_adl.recipes._tuning import search
from keras_adl.recipes.vision import build, data, evaluate, serving, spec
from keras_adl.training.export import export_serving_fn
from keras_adl.training.fit import fit
from keras_adl.training.rundir import write_task_file

# What `DigitTask.data` hands to the other hooks: the training digits, the test digits, the
# development split as the model reads it (``None`` without one), the digits' size in pixels
# and the batch size.
Digits = collections.namedtuple("Digits", "train_x train_y test validation digit_size batch_size")


class DigitTask(TaskRecipe):
    """A vision task: digits (scikit-learn's, or ``--data``'s IDX files), a seeded development
    split, and a model of the task's preset built for the digits' size. The kinds differ in how
    the digits are shown to the model (`training_data`, `development_data`), the model
    (`settings`, `image_shape`, `build_settings`), its figures (`figures`), its export and
    how ``predict`` prints its answers (`export_model`, `print_answers`), and the search
    (`hypermodel`, `objective`)."""

    # ``tune``'s objective on the development split.
    objective = "val_loss"

    # -- what a task kind defines --------------------------------------------------------------

    def settings(self, model_name, digit_size=spec.SKLEARN_DIGIT_SIZE):
        """The builder's keyword arguments and ``learning_rate`` for digits of ``digit_size``
        pixels: the preset, laid out for that size."""
        return self.spec.preset(model_name)

    def image_shape(self, digit_size):
        """``[H, W, 1]`` of the model's images for digits of ``digit_size`` pixels."""
        raise NotImplementedError

    def build_settings(self, model_name, settings, digit_size, learning_rate, jit_compile):
        """The compiled model of ``settings`` (without its learning rate) for digits of
        ``digit_size`` pixels."""
        raise NotImplementedError

    def training_data(self, train_x, train_y, batch_size, digit_size):
        """The training digits as the model reads them, drawn afresh every epoch."""
        raise NotImplementedError

    def development_data(self, development, digit_size):
        """The development digits ``(images, labels)`` as the model reads them, placed once
        (Keras' ``validation_data``)."""
        raise NotImplementedError

    def figures(self, model, model_name, test, out, digit_size=None):
        """The held-out figures of ``model`` on the test digits ``(test_x, test_y)`` (of
        ``digit_size`` pixels, by default their own), and its picture in ``out``."""
        raise NotImplementedError

    def export_model(self, model, model_name, export_dir, beam_width=1):
        """Writes ``model``'s SavedModel with the task's serving function."""
        raise NotImplementedError

    def print_answers(self, paths, outputs):
        """Prints the exported model's ``outputs`` on the image files ``paths``, a line each."""
        raise NotImplementedError

    def hypermodel(self, model_name, digit_size):
        """The HyperModel searching ``model_name`` on digits of ``digit_size`` pixels."""
        raise NotImplementedError

    # -- what every kind shares ----------------------------------------------------------------

    def build_model(
        self,
        model_name,
        digit_size=spec.SKLEARN_DIGIT_SIZE,
        jit_compile=True,
        total_steps=None,
        **overrides,
    ):
        """The compiled model ``keras-adl train TASK --model MODEL`` trains for digits of
        ``digit_size`` pixels; ``overrides`` replace named settings. A model whose settings
        have ``learning_rate_decay="cosine"`` (the DRAM; every model of translated_digits)
        decays its rate over ``total_steps`` optimizer steps (default: the task's epochs over
        scikit-learn's training digits); the override ``learning_rate_decay=None`` keeps it
        constant, ``learning_rate_decay="cosine"`` decays any model's."""
        settings = override(self.settings(model_name, digit_size), overrides)
        if total_steps is None:
            total_steps = self.spec.epochs * (spec.SKLEARN_TRAIN_DIGITS // self.spec.batch_size)
        learning_rate = build.learning_rate(settings, total_steps)
        return self.build_settings(model_name, settings, digit_size, learning_rate, jit_compile)

    def data(self, run):
        (train_x, train_y), test = data.load_digits(run.options.get("data"))
        train_x, train_y = train_x[: run.samples], train_y[: run.samples]
        (train_x, train_y), development = data.development_split(train_x, train_y)
        batch_size = min(run.batch_size, len(train_x))
        digit_size = int(train_x.shape[1])
        validation = None  # its loss picks the best epoch
        if development is None:
            without_development(
                run,
                f"{len(train_x)} training digits are too few to set some aside (it takes "
                f"{MIN_FOR_DEVELOPMENT})",
            )
        else:
            validation = self.development_data(development, digit_size)
            run.record["development_digits"] = len(development[0])
        return Digits(train_x, train_y, test, validation, digit_size, batch_size)

    def build(self, run, digits):
        # a decaying rate decays over the run: `DigitStrips`' and `TranslatedDigits`' batches
        steps_per_epoch = len(digits.train_x) // digits.batch_size
        model = run.build(
            self.build_model,
            run.model,
            digits.digit_size,
            total_steps=run.epochs * steps_per_epoch,
        )
        run.record.update(
            data=run.options.get("data") or "sklearn_digits",
            digit_size=digits.digit_size,
            settings=self.settings(run.model, digits.digit_size),
            image_shape=self.image_shape(digits.digit_size),
        )
        return model

    def fit(self, run, model, digits):
        fit_kwargs = dict(validation_batch_size=digits.batch_size)
        if digits.validation is not None:
            fit_kwargs["validation_data"] = digits.validation
        training = self.training_data(
            digits.train_x, digits.train_y, digits.batch_size, digits.digit_size
        )
        return fit(run, model, training, **fit_kwargs)

    def evaluate(self, run, model, digits):
        return self.figures(model, run.model, digits.test, run.out, digits.digit_size)

    def tune(self, model_name, trials, epochs, samples, out, options):
        """Random search on the development split (the test digits stay for the reported
        figures)."""
        (train_x, train_y), _ = data.load_digits(options.get("data"))
        (train_x, train_y), development = data.development_split(
            train_x[:samples], train_y[:samples]
        )
        if development is None:
            raise too_few_to_tune(len(train_x), "training digits")
        digit_size = int(train_x.shape[1])
        batch = min(self.spec.batch_size, len(train_x))
        hypermodel = self.hypermodel(model_name, digit_size)
        validation = self.development_data(development, digit_size)
        return search(
            hypermodel,
            self.objective,
            trials,
            out,
            f"{self.name}_{model_name}",
            self.training_data(train_x, train_y, batch, digit_size),
            validation_data=validation,
            epochs=epochs,
        )

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """A SavedModel with an image-batch signature ``images [None, H, W, C]`` float32."""
        self.export_model(model, record["model"], export_dir, beam_width)
        write_task_file(
            export_dir,
            task=record["task"],
            model=record["model"],
            image_shape=record["image_shape"],
        )

    def predict(self, export_dir, inputs, info):
        """Prints the class (and the RAM's glimpse path), the caption or the reading of each
        image file."""
        self.print_answers(inputs, serving.serve(export_dir, inputs, info["image_shape"]))


# -- the RAM tasks: digits on a canvas, the RAM beside the whole-image baselines ------------------


class GlimpseClassifier:
    """The RAM's models (``ram``, ``ram_random``) on a RAM task: glimpses laid out by the task,
    figures of where they land, their path in the export."""

    def settings(self, preset, layout, digit_size):
        preset.update(layout.glimpses(digit_size))
        return preset

    def build(self, model_name, image_shape, learning_rate, jit_compile, settings):
        return build.build_ram(image_shape, learning_rate, jit_compile, **settings)

    def figures(self, model, task, model_name, test, layout, out):
        return evaluate.evaluate_ram(model, task, model_name, test, layout, out)

    def serving_fn(self, model):
        return serving.make_ram_serving_fn(model)

    def hypermodel(self, model_name, image_shape, layout, preset):
        from keras_adl.recipes.vision.hypermodels import RecurrentAttentionHyperModel

        return RecurrentAttentionHyperModel(
            image_shape,
            spec.NUM_CLASSES,
            num_glimpses=layout["num_glimpses"],
            patch_size=layout["patch_size"],
            num_scales=layout["num_scales"],
            policy=preset["policy"],
        )


class WholeImageClassifier:
    """The whole-image baselines (``mlp``, ``convnet``) on a RAM task: the same canvases, seen
    at once."""

    def settings(self, preset, layout, digit_size):
        return preset

    def build(self, model_name, image_shape, learning_rate, jit_compile, settings):
        return build.compile_baseline(
            model_name, image_shape, learning_rate, jit_compile, **settings
        )

    def figures(self, model, task, model_name, test, layout, out):
        return evaluate.evaluate_whole_image(model, test, layout)

    def serving_fn(self, model):
        return serving.make_classifier_serving_fn(model)

    def hypermodel(self, model_name, image_shape, layout, preset):
        from keras_adl.recipes.vision.hypermodels import WholeImageHyperModel

        return WholeImageHyperModel(model_name, image_shape)


class RamClassification(DigitTask):
    """Digits placed on a canvas of the task's `keras_adl.recipes.vision.spec.RamLayout`
    (``layout``), classified by the RAM through its glimpses or by a whole-image baseline.

    Args:
        task_spec: the task's `keras_adl.recipes._spec.Task`.
        layout: its `RamLayout`.
    """

    objective = ("val_accuracy", "max")
    # What each model is, by name.
    classifiers = {
        **dict.fromkeys(spec.RAM_MODELS, GlimpseClassifier()),
        **dict.fromkeys(spec.BASELINE_MODELS, WholeImageClassifier()),
    }

    def __init__(self, task_spec, layout):
        super().__init__(task_spec)
        self.layout = layout

    def settings(self, model_name, digit_size=spec.SKLEARN_DIGIT_SIZE):
        preset = self.spec.preset(model_name)
        return self.classifiers[model_name].settings(preset, self.layout, digit_size)

    def image_shape(self, digit_size):
        canvas = self.layout.of(digit_size)["canvas_size"]
        return [canvas, canvas, 1]

    def build_settings(self, model_name, settings, digit_size, learning_rate, jit_compile):
        image_shape = self.image_shape(digit_size)
        return self.classifiers[model_name].build(
            model_name, image_shape, learning_rate, jit_compile, settings
        )

    def training_data(self, train_x, train_y, batch_size, digit_size):
        return data.translated_digits(train_x, train_y, batch_size, self.layout.of(digit_size))

    def development_data(self, development, digit_size):
        return data.development_canvases(development, self.layout.of(digit_size))

    def build(self, run, digits):
        model = super().build(run, digits)
        run.record["layout"] = self.layout.of(digits.digit_size)
        return model

    def figures(self, model, model_name, test, out, digit_size=None):
        """Held-out error on a fixed placement of the test digits and, for the RAM, where the
        glimpses land and a picture of one glimpse path."""
        layout = self.layout.of(digit_size or int(test[0].shape[1]))
        classifier = self.classifiers[model_name]
        return classifier.figures(model, self.name, model_name, test, layout, out)

    def export_model(self, model, model_name, export_dir, beam_width=1):
        export_serving_fn(model, export_dir, self.classifiers[model_name].serving_fn(model))

    def print_answers(self, paths, outputs):
        serving.print_classes(paths, outputs)

    def hypermodel(self, model_name, digit_size):
        image_shape = tuple(self.image_shape(digit_size))
        layout, preset = self.layout.of(digit_size), self.spec.preset(model_name)
        return self.classifiers[model_name].hypermodel(model_name, image_shape, layout, preset)


# -- the reading tasks: strips of digits ------------------------------------------------------


class StripReading(DigitTask):
    """Strips of `CAPTION_LENGTH` digits side by side, read as the digits and END."""

    # Whether the model reads the caption so far (a teacher-forced decoder).
    teacher_forcing = True

    def image_shape(self, digit_size):
        return [digit_size, spec.CAPTION_LENGTH * digit_size, 1]

    def training_data(self, train_x, train_y, batch_size, digit_size):
        return data.strips(train_x, train_y, batch_size, self.teacher_forcing)


class Captioning(StripReading):
    """Show, Attend and Tell captions the strips, attending over a grid of regions."""

    def build_settings(self, model_name, settings, digit_size, learning_rate, jit_compile):
        image_shape = self.image_shape(digit_size)
        return build.build_captioner(image_shape, learning_rate, jit_compile, **settings)

    def development_data(self, development, digit_size):
        strips, decoder_input, targets = data.development_strips(development)
        return {"image": strips, "decoder_input": decoder_input}, targets

    def figures(self, model, model_name, test, out, digit_size=None):
        return evaluate.evaluate_captioning(model, test, out)

    def export_model(self, model, model_name, export_dir, beam_width=1):
        serving.export_captioning(model, export_dir, spec.CAPTION_LENGTH + 1, beam_width=beam_width)

    def print_answers(self, paths, outputs):
        serving.print_captions(paths, outputs)

    def hypermodel(self, model_name, digit_size):
        from keras_adl.recipes.vision.hypermodels import ShowAttendTellHyperModel

        return ShowAttendTellHyperModel(CAPTION_VOCAB_SIZE, tuple(self.image_shape(digit_size)))


class GlimpseReading(StripReading):
    """The DRAM reads the strips glimpse by glimpse, a symbol after each few glimpses; its
    patch, glimpse network and context view follow the digits' size (`spec.DRAM_LAYOUT`)."""

    objective = ("val_sequence_accuracy", "max")
    teacher_forcing = False

    def settings(self, model_name, digit_size=spec.SKLEARN_DIGIT_SIZE):
        preset = self.spec.preset(model_name)
        preset.update(spec.DRAM_LAYOUT.of(digit_size))
        return preset

    def build_settings(self, model_name, settings, digit_size, learning_rate, jit_compile):
        image_shape = self.image_shape(digit_size)
        return build.build_dram(image_shape, learning_rate, jit_compile, **settings)

    def development_data(self, development, digit_size):
        strips, _, targets = data.development_strips(development)
        return strips, targets

    def figures(self, model, model_name, test, out, digit_size=None):
        return evaluate.evaluate_dram(model, model_name, test, out)

    def export_model(self, model, model_name, export_dir, beam_width=1):
        export_serving_fn(model, export_dir, serving.make_dram_serving_fn(model))

    def print_answers(self, paths, outputs):
        serving.print_readings(paths, outputs)

    def hypermodel(self, model_name, digit_size):
        from keras_adl.recipes.vision.hypermodels import DeepRecurrentAttentionHyperModel

        return DeepRecurrentAttentionHyperModel(
            tuple(self.image_shape(digit_size)),
            **spec.DRAM_LAYOUT.of(digit_size),
            policy=self.spec.preset(model_name)["policy"],
        )


RECIPES = {
    "translated_digits": RamClassification(spec.TRANSLATED_DIGITS, spec.TRANSLATED_LAYOUT),
    "cluttered_digits": RamClassification(spec.CLUTTERED_DIGITS, spec.CLUTTERED_LAYOUT),
    "cluttered_digits_100": RamClassification(spec.CLUTTERED_DIGITS_100, spec.CLUTTERED_100_LAYOUT),
    "digit_strips": Captioning(spec.DIGIT_STRIPS),
    "digit_strips_glimpses": GlimpseReading(spec.DIGIT_STRIPS_GLIMPSES),
}

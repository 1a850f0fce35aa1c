"""The vision family: the Recurrent Attention Model on translated and cluttered digits (beside
the paper's whole-image baselines, a 2-layer MLP and a 2-layer convnet), Show, Attend and
Tell captioning digit strips, and the Deep Recurrent Attention Model reading them glimpse by
glimpse.

Digits are scikit-learn's (16×16), or MNIST / Fashion-MNIST IDX files given with ``--data``
(28×28; Debian's ``dataset-fashion-mnist``, `make data`). The HyperModels
(`RecurrentAttentionHyperModel`, `ShowAttendTellHyperModel`) are attributes of this module
defined on first use.
"""

import os

from keras_adl.recipes.base import (
    DEVELOPMENT_SEED,
    MIN_FOR_DEVELOPMENT,
    Option,
    Recipe,
    RecipeError,
    Task,
    compile_for_training,
    cosine_decay,
    development_rows,
    draw,
    import_keras_tuner,
    lazy_hypermodels,
    override,
    tuned_learning_rate,
    without_development,
)

RAM_MODELS = ("ram", "ram_random")
# The whole-image baselines of Mnih et al. (2014), trained on the same data as the RAM.
BASELINE_MODELS = ("mlp", "convnet")
DRAM_MODELS = ("dram", "dram_random")
CAPTION_LENGTH = 3  # digits per strip; the caption adds END
HELD_OUT_STRIPS = 500
PLACEMENT_SEED = 123  # the fixed placement of the held-out digits
# The development split whose loss picks the best epoch: a tenth of the training digits (at most
# this many), placed once (seed `DEVELOPMENT_SEED`), and for the strips tasks this many strips.
DEVELOPMENT_DIGITS = 1000
DEVELOPMENT_STRIPS = 256
_DATA = Option(
    "--data",
    "a directory of MNIST/Fashion-MNIST IDX files (default: sklearn's digits at 16x16)",
    "dir",
)
# What the three digit tasks share: batches of 64, every training digit (sklearn's 1437, or up
# to 60000 from IDX files), the same for tune, and --data.
_DIGIT_TASK = dict(
    batch_size=64, samples=60000, tune_samples=60000, options=(_DATA,), held_out=True
)

# RAM: the sizes of the glimpse network and core, the policy's σ, Adam's learning rate (constant
# by default: a decay within the budget starved the cluttered policy; `TASK_SCHEDULES` sets
# the translated task's); the canvas, clutter and glimpses depend on the task and the digits'
# size (`ram_layout`). σ = 0.2 erred less than 0.1 on both digit tasks (medians of 3 seeds:
# translated 0.061 vs 0.075, cluttered 0.123 vs 0.131; benchmarks/RESULTS.md).
RAM_SETTINGS = dict(
    glimpse_units=64,
    location_units=64,
    glimpse_output_units=128,
    units=128,
    location_std=0.2,
    policy_gradient_to_core=False,  # the deviation: REINFORCE trains the location network only
    seed=0,
    learning_rate=1e-3,
    learning_rate_decay=None,
)
# Show, Attend and Tell: three poolings give a 2×6 grid of regions on sklearn's 16×48 strips
# (3×10 on 28×84). With many more regions than caption steps, λ = 1 pulls attention towards
# uniform (see benchmarks/RESULTS.md).
# The baselines: the paper's sizes, and the RAM's optimizer (Adam 1e-3, no clipping).
BASELINE_SETTINGS = {
    "mlp": dict(units=256, num_layers=2, learning_rate=1e-3, learning_rate_decay=None),
    "convnet": dict(
        filters=8,
        kernel_size=10,
        strides=5,
        units=256,
        learning_rate=1e-3,
        learning_rate_decay=None,
    ),
}
# A task's schedule, shared by the RAM and the whole-image baselines (the same budget for
# every model). Translated digits: Adam 3e-3 decaying along a cosine over 300 epochs, where
# the RAM errs less than the MLP (medians of 3 seeds 0.019 vs 0.031; at a constant 1e-3 over
# 150 epochs 0.061 vs 0.045: benchmarks/RESULTS.md). The cluttered tasks keep the constant
# 1e-3 (a decay starved their policy).
TASK_SCHEDULES = {"translated_digits": dict(learning_rate=3e-3, learning_rate_decay="cosine")}
# DRAM on digit strips: 3 glimpses of one 8×8 patch per symbol (3 digits and END), RAM-sized
# networks, the symbols read from the bottom (glimpse) RNN as in the paper, Adam 3e-3 decaying
# along a cosine over the run, the policy's σ = 0.2 (benchmarks/RESULTS.md: median exact match
# 0.92 over 5 seeds, every seed ≥ 0.85, where σ = 0.1 lost 2 seeds of 5 and 2 glimpses of 2
# scales read from the top RNN at a constant 1e-3 gave 0.80); the patch, the glimpse network's
# convolutions and the context network's coarse view depend on the digits' size (`dram_layout`).
DRAM_SETTINGS = dict(
    glimpses_per_symbol=3,
    num_scales=1,
    glimpse_units=64,
    location_units=64,
    glimpse_output_units=128,
    units=128,
    context_filters=(8, 16, 16),
    glimpse_filters=(),
    read_from="bottom",
    location_std=0.2,
    seed=0,
    learning_rate=3e-3,
    learning_rate_decay="cosine",
)
# scikit-learn's digits in the recipe's 80/20 split: the training images, for the default
# length of the DRAM's learning-rate decay (`VisionRecipe.build_model`).
SKLEARN_TRAIN_DIGITS = 1437
CAPTION_SETTINGS = dict(
    embedding_dim=16, units=32, encoder_filters=(8, 16, 32), regularization=1.0, learning_rate=1e-2
)


def ram_layout(task, digit_size):
    """Canvas, clutter and glimpse settings of a RAM task for digits of ``digit_size`` pixels.

    Translated: a canvas twice the digit's size (32 for sklearn's digits; 60 for 28-pixel
    digits, as the paper's 60×60 translated MNIST), 4 glimpses of 2 scales of an 8×8 patch
    (one scale erred 0.134 where two err 0.075, 3 seeds: benchmarks/RESULTS.md). Cluttered: the
    paper's 60×60 canvas with 4 pieces of 8×8 clutter for 28-pixel digits (48×48 for 16-pixel
    ones), 8 glimpses of 2 scales of a 12×12 (8×8) patch (the paper has 3 scales; here 3
    scales let random glimpses see as much as learned ones, see benchmarks/RESULTS.md).
    Cluttered 100: the paper's 100×100 canvas (96×96 for 16-pixel digits) with 8 pieces of
    clutter, 8 glimpses of 3 scales (the widest, 48 pixels, sees a quarter of the canvas).
    The whole-image baselines read the same canvases.
    """
    if task == "translated_digits":
        canvas = 60 if digit_size > 16 else 2 * digit_size
        return dict(canvas_size=canvas, num_clutter=0, num_glimpses=4, patch_size=8, num_scales=2)
    large = task == "cluttered_digits_100"
    if large:
        canvas = 100 if digit_size > 16 else 6 * digit_size
    else:
        canvas = 60 if digit_size > 16 else 3 * digit_size
    return dict(
        canvas_size=canvas,
        num_clutter=8 if large else 4,
        num_glimpses=8,
        patch_size=12 if digit_size > 16 else 8,
        num_scales=3 if large else 2,
    )


def dram_layout(digit_size):
    """The DRAM's glimpse patch, glimpse network and context view on strips of
    ``digit_size``-pixel items. sklearn's 16-pixel digits: an 8×8 patch, a quarter of a digit,
    so each symbol's 3 glimpses must be placed, read by the linear glimpse network. 28-pixel
    items (MNIST / Fashion-MNIST, ``--data``): a 16×16 patch read by two 3×3 convolutions
    (16 and 32 filters, the paper's convolutional ``G_image``): on Fashion-MNIST strips a 12×12
    patch with the linear glimpse network reached exact match 0.416, with the convolutions
    0.436, the 16×16 patch with them 0.540 against Show-Attend-Tell's 0.516 (seed 0; seed 1:
    0.474 against 0.478; benchmarks/RESULTS.md). The context network sees the strip at a quarter of its resolution
    (4×12 for 16×48 strips: sklearn's digits are 8×8 upscaled, so a half-resolution view would
    show every digit whole and the glimpses would have nothing to add)."""
    small = digit_size <= 16
    return dict(
        patch_size=8 if small else 16,
        glimpse_filters=() if small else (16, 32),
        context_size=(digit_size // 4, CAPTION_LENGTH * digit_size // 4),
    )


def load_digits(data_dir=None):
    """``((train_x, train_y), (test_x, test_y))``: sklearn's digits at 16×16 split 80/20, or the
    MNIST / Fashion-MNIST IDX files in ``data_dir`` (28×28)."""
    from keras_adl.data.image_sources import load_idx_dataset, load_sklearn_digits
    from keras_adl.data.splits import split_dataset

    if data_dir:
        splits = load_idx_dataset(data_dir, "train"), load_idx_dataset(data_dir, "test")
        for (_, labels), split in zip(splits, ("train", "t10k")):
            if labels.size and (labels.min() < 0 or labels.max() > 9):
                path = os.path.join(data_dir, f"{split}-labels-idx1-ubyte")
                path = path if os.path.isfile(path) else path + ".gz"  # the one it read
                raise ValueError(
                    f"{path}: the vision tasks read ten digit classes, labels 0-9; received "
                    f"labels from {labels.min()} to {labels.max()}."
                )
        return splits
    images, labels = load_sklearn_digits(16)
    return split_dataset(images, labels, 0.2, seed=0)


def development_split(train_x, train_y):
    """``((train_x, train_y), development)``: the training digits without the development
    split, and that split ``(images, labels)`` (a seeded tenth of them, at most
    `DEVELOPMENT_DIGITS`; ``None`` below `MIN_FOR_DEVELOPMENT` digits), never test digits."""
    rows = development_rows(len(train_x), DEVELOPMENT_DIGITS)
    if rows is None:
        return (train_x, train_y), None
    train, held = rows
    return (train_x[train], train_y[train]), (train_x[held], train_y[held])


def development_data(task, development, digit_size):
    """The development digits as ``task``'s model reads them, placed once (Keras'
    ``validation_data``): translated canvases and labels, or strips with their captions (and,
    for Show-Attend-Tell, the teacher-forced decoder input)."""
    images, labels = development
    if task in ("digit_strips", "digit_strips_glimpses"):
        from keras_adl.data.digit_strips import caption_arrays, digit_strips

        strips, captions, _ = digit_strips(
            images, labels, DEVELOPMENT_STRIPS, CAPTION_LENGTH, rng=DEVELOPMENT_SEED
        )
        decoder_input, targets = caption_arrays(captions)
        if task == "digit_strips":
            return {"image": strips, "decoder_input": decoder_input}, targets
        return strips, targets
    from keras_adl.data.translated_digits import translate_digits

    layout = ram_layout(task, digit_size)
    canvases, classes, _ = translate_digits(
        images, labels, layout["canvas_size"], layout["num_clutter"], rng=DEVELOPMENT_SEED
    )
    return canvases, classes


def compile_baseline(model_name, image_shape, learning_rate, jit_compile=True, **settings):
    """A whole-image baseline (``"mlp"`` or ``"convnet"``, `keras_adl.models.baselines`) of
    10 classes, compiled as the RAM is (Adam, no clipping) with sparse cross-entropy and
    accuracy; ``settings`` are the builder's."""
    import keras

    from keras_adl.models.baselines import whole_image_convnet, whole_image_mlp

    build = {"mlp": whole_image_mlp, "convnet": whole_image_convnet}[model_name]
    model = build(tuple(image_shape), 10, **settings)
    model.compile(
        optimizer=keras.optimizers.Adam(learning_rate),
        loss=keras.losses.SparseCategoricalCrossentropy(),
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    return model


class VisionRecipe(Recipe):
    family = "vision"
    description = "Recurrent Attention Model (and whole-image baselines), Show-Attend-Tell"
    tasks = (
        Task(
            "translated_digits",
            RAM_MODELS + BASELINE_MODELS,
            "RAM classifies digits placed anywhere on a canvas twice their size, 4 glimpses",
            epochs=300,
            **_DIGIT_TASK,
        ),
        Task(
            "cluttered_digits",
            RAM_MODELS + BASELINE_MODELS,
            "RAM on a 3x canvas with 4 pieces of clutter, 8 glimpses of 2 scales",
            epochs=60,
            **_DIGIT_TASK,
        ),
        Task(
            "cluttered_digits_100",
            RAM_MODELS + BASELINE_MODELS,
            "RAM on a 100x100 canvas (6x) with 8 pieces of clutter, 8 glimpses of 3 scales",
            epochs=60,
            **_DIGIT_TASK,
        ),
        Task(
            "digit_strips",
            ("show_attend_tell",),
            "Show, Attend and Tell reads strips of 3 digits",
            epochs=20,
            **_DIGIT_TASK,
        ),
        Task(
            "digit_strips_glimpses",
            DRAM_MODELS,
            "DRAM reads the strips of digit_strips glimpse by glimpse, 3 per digit and END",
            epochs=60,
            **_DIGIT_TASK,
        ),
    )

    def settings(self, task, model_name, digit_size=16):
        """The builder's keyword arguments and ``learning_rate`` for digits of ``digit_size``
        pixels (RAM: its sizes and its glimpses, from `ram_layout`; the canvas and clutter are
        the data's; RAM and baselines: the task's schedule, `TASK_SCHEDULES`)."""
        if task == "digit_strips":
            return dict(CAPTION_SETTINGS)
        if task == "digit_strips_glimpses":
            policy = "random" if model_name == "dram_random" else "learned"
            return dict(DRAM_SETTINGS, **dram_layout(digit_size), policy=policy)
        schedule = TASK_SCHEDULES.get(task, {})
        if model_name in BASELINE_MODELS:
            return dict(BASELINE_SETTINGS[model_name], **schedule)
        layout = ram_layout(task, digit_size)
        glimpses = {k: layout[k] for k in ("num_glimpses", "patch_size", "num_scales")}
        policy = "random" if model_name == "ram_random" else "learned"
        return dict(RAM_SETTINGS, **glimpses, policy=policy, **schedule)

    def build_model(
        self, task, model_name, digit_size=16, jit_compile=True, total_steps=None, **overrides
    ):
        """The compiled model ``keras-adl train TASK --model MODEL`` trains for digits of
        ``digit_size`` pixels; ``overrides`` replace named settings. A model whose settings
        have ``learning_rate_decay="cosine"`` (the DRAM; every model of translated_digits)
        decays its rate over ``total_steps`` optimizer steps (default: the task's epochs over
        scikit-learn's training digits); the override ``learning_rate_decay=None`` keeps it
        constant, ``learning_rate_decay="cosine"`` decays any model's."""
        import keras

        settings = override(self.settings(task, model_name, digit_size), overrides)
        learning_rate = settings.pop("learning_rate")
        decay = settings.pop("learning_rate_decay", None)
        if decay not in (None, "cosine"):
            raise ValueError(f"`learning_rate_decay` must be 'cosine' or None; received {decay!r}.")
        if decay == "cosine":
            if total_steps is None:
                spec = self.task(task)
                total_steps = spec.epochs * (SKLEARN_TRAIN_DIGITS // spec.batch_size)
            learning_rate = cosine_decay(learning_rate, total_steps)
        if task == "digit_strips":
            from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE
            from keras_adl.models.captioning import show_attend_tell

            image_shape = tuple(self.image_shape(task, digit_size))
            model = show_attend_tell(CAPTION_VOCAB_SIZE, image_shape=image_shape, **settings)
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
            return compile_for_training(model, loss, learning_rate, jit_compile)
        if task == "digit_strips_glimpses":
            from keras_adl.conventions import PAD
            from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE
            from keras_adl.models.dram import deep_recurrent_attention_model

            model = deep_recurrent_attention_model(
                tuple(self.image_shape(task, digit_size)),
                CAPTION_VOCAB_SIZE,
                num_symbols=CAPTION_LENGTH + 1,
                ignore_class=PAD,
                **settings,
            )
            model.compile(optimizer=keras.optimizers.Adam(learning_rate), jit_compile=jit_compile)
            return model
        canvas = ram_layout(task, digit_size)["canvas_size"]
        if model_name in BASELINE_MODELS:
            return compile_baseline(
                model_name, (canvas, canvas, 1), learning_rate, jit_compile, **settings
            )
        from keras_adl.models.ram import recurrent_attention_model

        model = recurrent_attention_model((canvas, canvas, 1), 10, **settings)
        model.compile(optimizer=keras.optimizers.Adam(learning_rate), jit_compile=jit_compile)
        return model

    @staticmethod
    def image_shape(task, digit_size):
        """``[H, W, 1]`` of the model's images for digits of ``digit_size`` pixels."""
        if task in ("digit_strips", "digit_strips_glimpses"):
            return [digit_size, CAPTION_LENGTH * digit_size, 1]
        canvas = ram_layout(task, digit_size)["canvas_size"]
        return [canvas, canvas, 1]

    def train(self, run):
        (train_x, train_y), test = load_digits(run.options.get("data"))
        train_x, train_y = train_x[: run.samples], train_y[: run.samples]
        (train_x, train_y), development = development_split(train_x, train_y)
        batch_size = min(run.batch_size, len(train_x))
        digit_size = int(train_x.shape[1])
        # Its loss picks the best epoch (Keras' validation data).
        fit = dict(validation_batch_size=batch_size)
        if development is None:
            without_development(
                run,
                f"{len(train_x)} training digits are too few to set some aside (it takes "
                f"{MIN_FOR_DEVELOPMENT})",
            )
        else:
            fit["validation_data"] = development_data(run.task, development, digit_size)
            run.record["development_digits"] = len(development[0])
        # a decaying rate decays over the run: `DigitStrips`' and `TranslatedDigits`' batches
        steps_per_epoch = len(train_x) // batch_size
        model = run.build(
            self.build_model,
            run.task,
            run.model,
            digit_size,
            total_steps=run.epochs * steps_per_epoch,
        )
        run.record.update(
            data=run.options.get("data") or "sklearn_digits",
            digit_size=digit_size,
            settings=self.settings(run.task, run.model, digit_size),
            image_shape=self.image_shape(run.task, digit_size),
        )
        if run.task == "digit_strips":
            from keras_adl.data.digit_strips import DigitStrips

            data = DigitStrips(train_x, train_y, batch_size, num_digits=CAPTION_LENGTH, seed=0)
            history = self.fit(run, model, data, **fit)
            return model, history, self.evaluate_captioning(model, test, run.out)
        if run.task == "digit_strips_glimpses":
            from keras_adl.data.digit_strips import DigitStrips

            data = DigitStrips(
                train_x, train_y, batch_size, CAPTION_LENGTH, seed=0, teacher_forcing=False
            )
            history = self.fit(run, model, data, **fit)
            return model, history, self.evaluate_dram(model, run.model, test, run.out)
        from keras_adl.data.translated_digits import TranslatedDigits

        layout = ram_layout(run.task, digit_size)
        run.record["layout"] = layout
        data = TranslatedDigits(
            train_x,
            train_y,
            batch_size,
            canvas_size=layout["canvas_size"],
            num_clutter=layout["num_clutter"],
            seed=0,
        )
        history = self.fit(run, model, data, **fit)
        metrics = self.evaluate_ram(model, run.task, run.model, test, layout, run.out)
        return model, history, metrics

    @staticmethod
    def evaluate_ram(model, task, model_name, test, layout, out):
        """Held-out error on a fixed placement of the test digits and, for the RAM, where the
        glimpses land and a picture of one glimpse path."""
        import numpy as np

        from keras_adl.data.translated_digits import translate_digits
        from keras_adl.metrics import glimpses_on_digit
        from keras_adl.plotting import plot_glimpse_path

        test_x, test_y = test
        canvases, labels, offsets = translate_digits(
            test_x,
            test_y,
            layout["canvas_size"],
            num_clutter=layout["num_clutter"],
            rng=PLACEMENT_SEED,
        )
        outputs = model.predict(canvases, verbose=0)
        if model_name in BASELINE_MODELS:  # a whole-image classifier: probabilities only
            return {"held_out_error": float(np.mean(outputs.argmax(-1) != labels))}
        predictions = outputs["probabilities"].argmax(-1)
        on_digit = glimpses_on_digit(
            outputs["locations"], offsets, test_x.shape[1], layout["canvas_size"]
        )
        draw(
            plot_glimpse_path,
            canvases[0],
            outputs["locations"][0],
            layout["patch_size"],
            layout["num_scales"],
            os.path.join(out, "glimpses.png"),
            title=f"{model_name} on {task}: predicted {predictions[0]}, true {labels[0]}",
        )
        return {
            "held_out_error": float(np.mean(predictions != labels)),
            "held_out_glimpses_on_digit": float(on_digit),
        }

    @staticmethod
    def evaluate_dram(model, model_name, test, out):
        """Held-out exact match and token accuracy on the strips `evaluate_captioning` uses,
        the fraction of each strip's pixels the glimpses saw, how often the glimpses of digit
        ``t+1`` lie right of digit ``t``'s, and a picture of one glimpse path."""
        import numpy as np

        from keras_adl.data.digit_strips import DIGIT_OFFSET, caption_arrays, digit_strips
        from keras_adl.metrics import exact_match, glimpse_coverage, reading_order
        from keras_adl.plotting import plot_glimpse_path

        test_x, test_y = test
        strips, captions, _ = digit_strips(
            test_x, test_y, HELD_OUT_STRIPS, num_digits=CAPTION_LENGTH, rng=PLACEMENT_SEED
        )
        _, targets = caption_arrays(captions)
        outputs = model.predict(strips, verbose=0)
        tokens = outputs["probabilities"].argmax(-1)
        layer = model.get_layer("deep_recurrent_attention")
        locations = outputs["locations"]
        words = " ".join(str(t - DIGIT_OFFSET) for t in tokens[0] if t >= DIGIT_OFFSET)
        draw(
            plot_glimpse_path,
            strips[0],
            locations[0],
            layer.patch_size,
            layer.num_scales,
            os.path.join(out, "glimpses.png"),
            scale_factor=layer.scale_factor,
            title=f"{model_name}: read {words}",
        )
        return {
            "held_out_exact_match": float(exact_match(tokens, targets)),
            "held_out_token_accuracy": float(
                np.mean(tokens[:, :CAPTION_LENGTH] == targets[:, :CAPTION_LENGTH])
            ),
            "held_out_pixels_seen": glimpse_coverage(
                locations, strips.shape[1:3], layer.patch_size, layer.num_scales, layer.scale_factor
            ),
            "held_out_reading_order": reading_order(
                locations, layer.glimpses_per_symbol, CAPTION_LENGTH
            ),
        }

    @staticmethod
    def evaluate_captioning(model, test, out):
        """Held-out exact match, token accuracy and attention alignment on fresh strips of the
        test digits, and a picture of one caption's attention."""
        import keras
        import numpy as np

        from keras_adl.data.digit_strips import DIGIT_OFFSET, caption_arrays, digit_strips
        from keras_adl.metrics import alignment_hit_rate, exact_match
        from keras_adl.models.captioning import (
            caption_attention,
            caption_greedy_decode,
            caption_grid_shape,
        )
        from keras_adl.plotting import plot_caption_attention

        test_x, test_y = test
        strips, captions, spans = digit_strips(
            test_x, test_y, HELD_OUT_STRIPS, num_digits=CAPTION_LENGTH, rng=PLACEMENT_SEED
        )
        decoder_input, targets = caption_arrays(captions)
        tokens, attention, _ = caption_greedy_decode(model, strips, CAPTION_LENGTH + 1)
        tokens = keras.ops.convert_to_numpy(tokens)
        teacher = keras.ops.convert_to_numpy(
            caption_attention(model, {"image": strips, "decoder_input": decoder_input})
        )
        grid = caption_grid_shape(model)
        metrics = {
            "held_out_exact_match": float(exact_match(tokens, targets)),
            "held_out_token_accuracy": float(
                np.mean(tokens[:, :CAPTION_LENGTH] == targets[:, :CAPTION_LENGTH])
            ),
            # The grid covers the pixels its poolings saw: 80 of an 84-pixel strip, say.
            "held_out_alignment_hit_rate": float(
                alignment_hit_rate(
                    teacher, spans, captions, grid[1], grid[1] * (strips.shape[2] // grid[1])
                )
            ),
        }
        words = [str(t - DIGIT_OFFSET) if t >= DIGIT_OFFSET else "</s>" for t in tokens[0]]
        draw(
            plot_caption_attention,
            strips[0],
            keras.ops.convert_to_numpy(attention)[0],
            words,
            grid,
            os.path.join(out, "attention.png"),
            title="show_attend_tell: attention per output digit",
        )
        return metrics

    def hypermodel(self, task, model_name, digit_size):
        from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE
        from keras_adl.recipes.vision import (
            DeepRecurrentAttentionHyperModel,
            RecurrentAttentionHyperModel,
            ShowAttendTellHyperModel,
            WholeImageHyperModel,
        )

        if task == "digit_strips":
            return ShowAttendTellHyperModel(
                CAPTION_VOCAB_SIZE, (digit_size, CAPTION_LENGTH * digit_size, 1)
            )
        if task == "digit_strips_glimpses":
            return DeepRecurrentAttentionHyperModel(
                tuple(self.image_shape(task, digit_size)),
                **dram_layout(digit_size),
                policy="random" if model_name == "dram_random" else "learned",
            )
        layout = ram_layout(task, digit_size)
        canvas = layout["canvas_size"]
        if model_name in BASELINE_MODELS:
            return WholeImageHyperModel(model_name, (canvas, canvas, 1))
        return RecurrentAttentionHyperModel(
            (canvas, canvas, 1),
            10,
            num_glimpses=layout["num_glimpses"],
            patch_size=layout["patch_size"],
            num_scales=layout["num_scales"],
            policy="random" if model_name == "ram_random" else "learned",
        )

    def tune(self, task, model_name, trials, epochs, samples, out, options):
        (train_x, train_y), _ = load_digits(options.get("data"))
        # The training digits train reads, scored on its development split (the test digits
        # stay for the reported figures).
        (train_x, train_y), development = development_split(train_x[:samples], train_y[:samples])
        if development is None:
            raise RecipeError(
                f"tune scores trials on a development split, and {len(train_x)} training "
                f"digits are too few to set some aside (it takes {MIN_FOR_DEVELOPMENT})"
            )
        digit_size = int(train_x.shape[1])
        batch = min(self.task(task).batch_size, len(train_x))
        hypermodel = self.hypermodel(task, model_name, digit_size)
        validation = development_data(task, development, digit_size)
        if task == "digit_strips":
            from keras_adl.data.digit_strips import DigitStrips

            data = DigitStrips(train_x, train_y, batch, num_digits=CAPTION_LENGTH, seed=0)
            objective = "val_loss"
        elif task == "digit_strips_glimpses":
            from keras_adl.data.digit_strips import DigitStrips

            plain = dict(num_digits=CAPTION_LENGTH, teacher_forcing=False)
            data = DigitStrips(train_x, train_y, batch, seed=0, **plain)
            objective = ("val_sequence_accuracy", "max")
        else:
            from keras_adl.data.translated_digits import TranslatedDigits

            layout = ram_layout(task, digit_size)
            place = dict(canvas_size=layout["canvas_size"], num_clutter=layout["num_clutter"])
            data = TranslatedDigits(train_x, train_y, batch, seed=0, **place)
            objective = ("val_accuracy", "max")
        return self.search(
            hypermodel,
            objective,
            trials,
            out,
            f"{task}_{model_name}",
            data,
            validation_data=validation,
            epochs=epochs,
        )

    def export(self, run_dir, run_record, model, export_dir, beam_width=1):
        """A SavedModel with an image-batch signature ``images [None, H, W, C]`` float32."""
        from keras_adl.training.export import export_serving_fn

        if run_record["task"] == "digit_strips":
            export_captioning(model, export_dir, CAPTION_LENGTH + 1, beam_width=beam_width)
        elif run_record["task"] == "digit_strips_glimpses":
            export_serving_fn(model, export_dir, make_dram_serving_fn(model))
        elif run_record["model"] in BASELINE_MODELS:
            export_serving_fn(model, export_dir, make_classifier_serving_fn(model))
        else:
            export_serving_fn(model, export_dir, make_ram_serving_fn(model))
        self.write_task_file(
            export_dir,
            task=run_record["task"],
            model=run_record["model"],
            image_shape=run_record["image_shape"],
        )

    @staticmethod
    def read_images(paths, image_shape):
        """Grayscale images ``[B, H, W, 1]`` in [0, 1] from PNG/JPEG/GIF/BMP files or ``.npy``
        arrays of the model's size."""
        import numpy as np

        from keras_adl.recipes.base import RecipeError

        images = []
        for path in paths:
            if not os.path.isfile(path):
                raise RecipeError(f"image file {path!r} not found")
            if path.endswith(".npy"):
                image = _read_npy_image(path)
            else:
                import tensorflow as tf

                try:
                    decoded = tf.io.decode_image(
                        tf.io.read_file(path), channels=1, expand_animations=False
                    )
                except tf.errors.InvalidArgumentError:
                    raise RecipeError(f"{path!r} is not a PNG, JPEG, GIF or BMP image") from None
                image = decoded.numpy().astype("float32") / 255.0
            if image.ndim == 2:
                image = image[..., None]
            if list(image.shape) != list(image_shape):
                raise RecipeError(
                    f"{path!r} has shape {list(image.shape)}; this model reads "
                    f"{image_shape[0]}×{image_shape[1]} grayscale images"
                )
            images.append(image)
        return np.stack(images)

    def predict(self, export_dir, inputs, task_info):
        """Prints the class (and the RAM's glimpse path) or the caption of each image file."""
        import tensorflow as tf

        images = self.read_images(inputs, task_info["image_shape"])
        loaded = tf.saved_model.load(export_dir)
        outputs = loaded.signatures["serving_default"](images=tf.constant(images))
        if task_info["task"] == "digit_strips":
            for path, caption in zip(inputs, outputs["caption"].numpy()):
                print(f"{path}\t{caption.decode()}")
            return
        if task_info["task"] == "digit_strips_glimpses":
            for index, (path, caption) in enumerate(zip(inputs, outputs["caption"].numpy())):
                path_text = " ".join(
                    f"({y:+.2f},{x:+.2f})" for y, x in outputs["locations"][index].numpy()
                )
                print(f"{path}\t{caption.decode()}\tglimpses {path_text}")
            return
        classes, probabilities = outputs["classes"].numpy(), outputs["probabilities"].numpy()
        for index, (path, label) in enumerate(zip(inputs, classes)):
            line = f"{path}\t{label}\tp={probabilities[index, label]:.3f}"
            if "locations" in outputs:  # the RAM's glimpse centres
                path_text = " ".join(
                    f"({y:+.2f},{x:+.2f})" for y, x in outputs["locations"][index].numpy()
                )
                line += f"\tglimpses {path_text}"
            print(line)


RECIPE = VisionRecipe()


def _read_npy_image(path):
    """A ``.npy`` image as float32 in [0, 1] (values in [0, 255] are scaled).

    Raises:
        RecipeError: not a numeric array, a NaN or infinite value, or values outside [0, 255]
            (naming the file).
    """
    import numpy as np

    from keras_adl.recipes.base import RecipeError

    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as error:
        raise RecipeError(f"{path!r} is not a NumPy array file ({error})") from None
    if not (np.issubdtype(array.dtype, np.number) or array.dtype == bool):
        raise RecipeError(f"{path!r} holds {array.dtype} values; expected a numeric image")
    image = array.astype("float32")
    if not np.isfinite(image).all():
        raise RecipeError(f"{path!r} holds NaN or infinite values; expected pixel intensities")
    if image.size and (image.min() < 0 or image.max() > 255):
        raise RecipeError(
            f"{path!r} holds values from {image.min():g} to {image.max():g}; expected "
            f"intensities in [0, 1] or [0, 255]"
        )
    return image / 255.0 if image.size and image.max() > 1.0 else image


# -- serving functions (exported SavedModels) --------------------------------------------------


def _caption_token_strings(vocab_size, token_strings):
    """The string of every token id: specials are ``""``; by default ids 3..12 are the digits
    ``"0".."9"`` (the digit-strip task's ``token = digit + 3``)."""
    from keras_adl.conventions import END, PAD, START
    from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE, DIGIT_OFFSET

    if token_strings is None:
        if vocab_size != CAPTION_VOCAB_SIZE:
            raise ValueError(
                "make_captioning_serving_fn: the default `token_strings` are the digit-strip "
                f"task's {CAPTION_VOCAB_SIZE} tokens; this model has vocab_size {vocab_size}: pass "
                "`token_strings`, one string per token id."
            )
        token_strings = [""] * DIGIT_OFFSET + [str(digit) for digit in range(10)]
    token_strings = [str(s) for s in token_strings]
    if len(token_strings) != vocab_size:
        raise ValueError(
            "make_captioning_serving_fn: `token_strings` must hold one string per token id "
            f"({vocab_size} for this model); received {len(token_strings)}."
        )
    for special in (PAD, START, END):
        token_strings[special] = ""
    return token_strings


def make_captioning_serving_fn(model, max_length, beam_width=1, token_strings=None):
    """A ``tf.function`` from a batch of images to captions, for a `show_attend_tell` model.

    Args:
        model: a model from `keras_adl.models.show_attend_tell` (image or feature mode).
        max_length: number of caption steps to decode (including ``END``).
        beam_width: 1 for greedy decoding, more for beam search.
        token_strings: optional list of strings indexed by token id, used to render the
            caption; ``PAD``, ``START`` and ``END`` always render as ``""`` and are skipped.
            The default suits the digit-strip task: ids 3..12 are ``"0".."9"``.

    Returns:
        A ``tf.function`` with input signature ``[tf.TensorSpec([None, H, W, C], tf.float32,
        name="images")]`` (``[None, L, D]`` named ``"features"`` for a feature-mode model)
        returning a dict with ``caption`` (the tokens' strings joined by spaces, ``[B]``),
        ``tokens`` ``[B, max_length]`` int32, ``attention`` ``[B, max_length, L]`` float32
        and ``log_likelihood`` ``[B]``.

    Example:

    >>> import tensorflow as tf
    >>> from keras_adl.models import show_attend_tell
    >>> model = show_attend_tell(13, image_shape=(8, 8, 1), embedding_dim=4, units=8,
    ...                          encoder_filters=(4,))
    >>> serve = make_captioning_serving_fn(model, max_length=3)
    >>> out = serve(tf.zeros((2, 8, 8, 1)))
    >>> sorted(out), tuple(out["attention"].shape)
    (['attention', 'caption', 'log_likelihood', 'tokens'], (2, 3, 16))
    """
    import tensorflow as tf

    from keras_adl.models.captioning import caption_beam_search, caption_greedy_decode
    from keras_adl.utils import check_positive_int

    where = "make_captioning_serving_fn: "
    check_positive_int("max_length", max_length, where=where)
    check_positive_int("beam_width", beam_width, where=where)
    strings = tf.constant(_caption_token_strings(model.get_layer("logits").units, token_strings))
    encoder_input = model.get_layer("encoder").input
    name = "images" if encoder_input.name == "image" else encoder_input.name
    spec = tf.TensorSpec((None,) + tuple(encoder_input.shape[1:]), tf.float32, name=name)

    @tf.function(input_signature=[spec])
    def serve(images):
        if beam_width > 1:
            tokens, attention, score = caption_beam_search(model, images, max_length, beam_width)
        else:
            tokens, attention, score = caption_greedy_decode(model, images, max_length)
        tokens = tf.convert_to_tensor(tokens)
        words = tf.gather(strings, tokens)  # [B, max_length]; specials are ""
        words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
        caption = tf.strings.reduce_join(words, axis=-1, separator=" ")
        return {
            "caption": caption,
            "tokens": tokens,
            "attention": attention,
            "log_likelihood": score,
        }

    return serve


def export_captioning(model, export_dir, max_length, beam_width=1, token_strings=None):
    """Writes a SavedModel whose ``serving_default`` captions a batch of images.

    Args:
        model: a model from `keras_adl.models.show_attend_tell`.
        export_dir: where to write; must not exist (nothing is left behind on failure).
        max_length, beam_width, token_strings: as in `make_captioning_serving_fn`.
    """
    from keras_adl.training.export import export_serving_fn

    serving_fn = make_captioning_serving_fn(model, max_length, beam_width, token_strings)
    return export_serving_fn(model, export_dir, serving_fn)


def make_ram_serving_fn(model):
    """A ``tf.function`` from an image batch to a Recurrent Attention Model's answer.

    Args:
        model: a model from `keras_adl.models.recurrent_attention_model`.

    Returns:
        A ``tf.function`` with input signature ``images`` ``[None, H, W, C]`` float32 returning
        a dict with ``classes`` ``[B]`` int32, ``probabilities`` ``[B, K]`` and ``locations``
        ``[B, n, 2]`` (the glimpse centres ``(y, x)`` in ``[-1, 1]``; a learned policy's mean,
        so the answer is deterministic; the random-glimpse baseline stays random).
    """
    import tensorflow as tf

    shape = [None, *model.inputs[0].shape[1:]]

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32, name="images")])
    def serve(images):
        outputs = model(images, training=False)
        probabilities = tf.cast(outputs["probabilities"], tf.float32)
        return {
            "classes": tf.argmax(probabilities, axis=-1, output_type=tf.int32),
            "probabilities": probabilities,
            "locations": tf.cast(outputs["locations"], tf.float32),
        }

    return serve


def make_classifier_serving_fn(model):
    """A ``tf.function`` from an image batch to a whole-image baseline's answer
    (`keras_adl.models.baselines`): ``images`` ``[None, H, W, C]`` float32 in, a dict with
    ``classes`` ``[B]`` int32 and ``probabilities`` ``[B, K]`` float32 out."""
    import tensorflow as tf

    shape = [None, *model.inputs[0].shape[1:]]

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32, name="images")])
    def serve(images):
        probabilities = tf.cast(model(images, training=False), tf.float32)
        return {
            "classes": tf.argmax(probabilities, axis=-1, output_type=tf.int32),
            "probabilities": probabilities,
        }

    return serve


def dram_captions(tokens, token_strings=None):
    """``[B]`` strings: the symbols of each row of ``tokens`` ``[B, S]`` before its first
    ``END``, joined by spaces (specials render as nothing; ``token_strings`` as in
    `make_captioning_serving_fn`, by default the digit-strip task's). TensorFlow ops, for
    serving functions."""
    import tensorflow as tf

    from keras_adl.conventions import END

    if token_strings is None:
        from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE

        token_strings = _caption_token_strings(CAPTION_VOCAB_SIZE, None)
    tokens = tf.convert_to_tensor(tokens, tf.int32)
    ended = tf.cumsum(tf.cast(tf.equal(tokens, END), tf.int32), axis=1) > 0
    words = tf.where(ended, "", tf.gather(tf.constant(token_strings), tokens))
    words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
    return tf.strings.reduce_join(words, axis=-1, separator=" ")


def make_dram_serving_fn(model, token_strings=None):
    """A ``tf.function`` from an image batch to a Deep Recurrent Attention Model's reading.

    Args:
        model: a model from `keras_adl.models.deep_recurrent_attention_model`.
        token_strings: one string per class id for the caption, as in
            `make_captioning_serving_fn` (default: the digit-strip task's tokens).

    Returns:
        A ``tf.function`` with input signature ``images`` ``[None, H, W, C]`` float32 returning
        a dict with ``caption`` ``[B]`` (the symbols before the first ``END``, joined by
        spaces; specials render as nothing), ``tokens`` ``[B, S]`` int32 (the class of every
        symbol), ``probabilities`` ``[B, S, K]`` and ``locations`` ``[B, S·N, 2]`` (the
        glimpse centres ``(y, x)`` in ``[-1, 1]``; deterministic for a learned policy).
    """
    import tensorflow as tf

    num_classes = model.output["probabilities"].shape[-1]
    strings = _caption_token_strings(num_classes, token_strings)
    shape = [None, *model.inputs[0].shape[1:]]

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.float32, name="images")])
    def serve(images):
        outputs = model(images, training=False)
        probabilities = tf.cast(outputs["probabilities"], tf.float32)
        tokens = tf.argmax(probabilities, axis=-1, output_type=tf.int32)
        return {
            "caption": dram_captions(tokens, strings),
            "tokens": tokens,
            "probabilities": probabilities,
            "locations": tf.cast(outputs["locations"], tf.float32),
        }

    return serve


def _hypermodels():
    import keras

    from keras_adl.models.captioning import show_attend_tell
    from keras_adl.models.ram import recurrent_attention_model

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
            units = hp.Choice("units", [64, 128, 256], default=RAM_SETTINGS["units"])
            model = recurrent_attention_model(
                self.image_shape,
                self.num_classes,
                num_glimpses=self.num_glimpses,
                patch_size=hp.Choice(
                    "patch_size", sorted({6, 8, 12, self.patch_size}), default=self.patch_size
                ),
                num_scales=hp.Int("num_scales", 1, 3, default=self.num_scales),
                glimpse_units=units // 2,
                location_units=units // 2,
                glimpse_output_units=units,
                units=units,
                location_std=hp.Choice(
                    "location_std", [0.05, 0.1, 0.2], default=RAM_SETTINGS["location_std"]
                ),
                policy=self.policy,
            )
            learning_rate = tuned_learning_rate(hp, RAM_SETTINGS["learning_rate"])
            model.compile(
                optimizer=keras.optimizers.Adam(learning_rate), jit_compile=self.jit_compile
            )
            return model

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

        def __init__(self, model_name, image_shape, jit_compile=True, name=None, tunable=True):
            if model_name not in BASELINE_SETTINGS:
                raise ValueError(
                    f"WholeImageHyperModel: `model_name` must be one of "
                    f"{sorted(BASELINE_SETTINGS)}; received {model_name!r}."
                )
            super().__init__(name=name or model_name, tunable=tunable)
            self.model_name = model_name
            self.image_shape = tuple(image_shape)
            self.jit_compile = jit_compile

        def build(self, hp):
            settings = dict(BASELINE_SETTINGS[self.model_name])
            learning_rate = tuned_learning_rate(hp, settings.pop("learning_rate"))
            del settings["learning_rate_decay"]  # the search's short trials: a constant rate
            settings["units"] = hp.Choice("units", [128, 256, 512], default=settings["units"])
            if self.model_name == "mlp":
                settings["num_layers"] = hp.Int("num_layers", 1, 3, default=settings["num_layers"])
            else:
                settings["filters"] = hp.Choice("filters", [8, 16, 32], default=settings["filters"])
            return compile_baseline(
                self.model_name, self.image_shape, learning_rate, self.jit_compile, **settings
            )

    class DeepRecurrentAttentionHyperModel(keras_tuner.HyperModel):
        """Searches `deep_recurrent_attention_model` on digit strips (3 digits and ``END``,
        ``PAD`` ignored), trained by its own hybrid REINFORCE rule.

        Hyperparameters: ``units`` (both RNNs; the glimpse network's ``g`` has the same size
        and ``h_g``, ``h_l`` half of it); ``glimpses_per_symbol``; ``location_std``;
        ``learning_rate`` (Adam, constant in the search's short trials where the recipe decays
        it). Tune on ``keras_tuner.Objective("val_sequence_accuracy", "max")``.

        Args:
            image_shape: ``(H, W, C)`` of the strips.
            patch_size, glimpse_filters, context_size: of the glimpses, the glimpse network
                and the context network (`dram_layout`).
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
            from keras_adl.conventions import PAD
            from keras_adl.data.digit_strips import CAPTION_VOCAB_SIZE
            from keras_adl.models.dram import deep_recurrent_attention_model

            settings = dict(DRAM_SETTINGS, glimpse_filters=self.glimpse_filters)
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
            model = deep_recurrent_attention_model(
                self.image_shape,
                CAPTION_VOCAB_SIZE,
                num_symbols=CAPTION_LENGTH + 1,
                ignore_class=PAD,
                patch_size=self.patch_size,
                context_size=self.context_size,
                policy=self.policy,
                **settings,
            )
            model.compile(
                optimizer=keras.optimizers.Adam(learning_rate), jit_compile=self.jit_compile
            )
            return model

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
            encoder_filters=CAPTION_SETTINGS["encoder_filters"],
            regularization=CAPTION_SETTINGS["regularization"],
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
                units=hp.Choice("units", [32, 64, 128], default=CAPTION_SETTINGS["units"]),
                embedding_dim=hp.Choice(
                    "embedding_dim", [16, 32, 64], default=CAPTION_SETTINGS["embedding_dim"]
                ),
                regularization=self.regularization,
                encoder_filters=self.encoder_filters,
            )
            learning_rate = tuned_learning_rate(hp, CAPTION_SETTINGS["learning_rate"])
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
            return compile_for_training(model, loss, learning_rate, self.jit_compile)

    return locals()


__getattr__, __dir__ = lazy_hypermodels(
    globals(),
    _hypermodels,
    (
        "DeepRecurrentAttentionHyperModel",
        "RecurrentAttentionHyperModel",
        "ShowAttendTellHyperModel",
        "WholeImageHyperModel",
    ),
)

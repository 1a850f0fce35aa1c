"""The vision family's tasks, models, options and defaults (standard library only)."""

import dataclasses

from keras_adl.recipes._spec import Family, Option, Task

RAM_MODELS = ("ram", "ram_random")
# The whole-image baselines of Mnih et al. (2014), trained on the same data as the RAM.
BASELINE_MODELS = ("mlp", "convnet")
DRAM_MODELS = ("dram", "dram_random")
CAPTION_MODELS = ("show_attend_tell",)
NUM_CLASSES = 10  # the digit classes
CAPTION_LENGTH = 3  # digits per strip; the caption adds END
HELD_OUT_STRIPS = 500
PLACEMENT_SEED = 123  # the fixed placement of the held-out digits
# The development split whose loss picks the best epoch: a tenth of the training digits (at most
# this many), placed once (seed `DEVELOPMENT_SEED`), and for the strips tasks this many strips.
DEVELOPMENT_DIGITS = 1000
DEVELOPMENT_STRIPS = 256
# scikit-learn's digits, as the tasks read them without --data: their size in pixels, and the
# training images of the 80/20 split (the default length of a decaying learning rate).
SKLEARN_DIGIT_SIZE = 16
SKLEARN_TRAIN_DIGITS = 1437

DATA_OPTION = Option(
    "--data",
    "a directory of MNIST/Fashion-MNIST IDX files (default: sklearn's digits at 16x16)",
    "dir",
)
# What every vision task shares: batches of 64, every training digit (sklearn's, or up to 60000
# from IDX files), the same for tune, and --data.
DIGIT_TASK = dict(
    batch_size=64, samples=60000, tune_samples=60000, options=(DATA_OPTION,), held_out=True
)
# --model → the policy of its glimpses.
POLICIES = {"ram": "learned", "ram_random": "random", "dram": "learned", "dram_random": "random"}


@dataclasses.dataclass(frozen=True)
class RamLayout:
    """A RAM task's canvas, clutter and glimpses. Digits of at most `SKLEARN_DIGIT_SIZE`
    pixels lie on a canvas ``canvas_scale`` times their size; larger ones (28-pixel MNIST) on
    the paper's ``large_canvas``, read through ``large_patch_size`` patches. The whole-image
    baselines read the same canvases."""

    canvas_scale: int
    large_canvas: int
    num_clutter: int
    num_glimpses: int
    num_scales: int
    patch_size: int = 8
    large_patch_size: int = 12

    def of(self, digit_size):
        """``{canvas_size, num_clutter, num_glimpses, patch_size, num_scales}`` for digits of
        ``digit_size`` pixels."""
        large = digit_size > SKLEARN_DIGIT_SIZE
        return dict(
            canvas_size=self.large_canvas if large else self.canvas_scale * digit_size,
            num_clutter=self.num_clutter,
            num_glimpses=self.num_glimpses,
            patch_size=self.large_patch_size if large else self.patch_size,
            num_scales=self.num_scales,
        )

    def glimpses(self, digit_size):
        """The RAM builder's glimpse settings for digits of ``digit_size`` pixels."""
        layout = self.of(digit_size)
        return {k: layout[k] for k in ("num_glimpses", "patch_size", "num_scales")}


# Translated: a canvas twice the digit's size (the paper's 60×60 for 28-pixel digits), 4 glimpses
# of 2 scales (one scale erred more).
TRANSLATED_LAYOUT = RamLayout(
    canvas_scale=2, large_canvas=60, num_clutter=0, num_glimpses=4, num_scales=2, large_patch_size=8
)
# Cluttered: the paper's 60×60 canvas with 4 pieces of clutter, 8 glimpses of 2 scales (the
# paper has 3; here 3 scales let random glimpses see as much as learned ones).
CLUTTERED_LAYOUT = RamLayout(
    canvas_scale=3, large_canvas=60, num_clutter=4, num_glimpses=8, num_scales=2
)
# Cluttered 100: the paper's 100×100 canvas with 8 pieces of clutter, 8 glimpses of 3 scales
# (the widest sees a quarter of the canvas).
CLUTTERED_100_LAYOUT = RamLayout(
    canvas_scale=6, large_canvas=100, num_clutter=8, num_glimpses=8, num_scales=3
)


@dataclasses.dataclass(frozen=True)
class DramLayout:
    """The DRAM's glimpse patch, glimpse network and context view on strips of items of a
    given size: sklearn's 16-pixel digits are read through a quarter of a digit, so each
    symbol's glimpses must be placed, by the linear glimpse network; larger items (28-pixel
    MNIST / Fashion-MNIST) through a wider patch read by convolutions (the paper's
    ``G_image``). The context network sees the strip at ``1 / context_fraction`` of its
    resolution (at a half, sklearn's upscaled 8×8 digits would show whole and the glimpses
    would have nothing to add)."""

    patch_size: int = 8
    large_patch_size: int = 16
    glimpse_filters: tuple = ()
    large_glimpse_filters: tuple = (16, 32)
    context_fraction: int = 4

    def of(self, digit_size):
        """``{patch_size, glimpse_filters, context_size}`` for items of ``digit_size`` pixels."""
        large = digit_size > SKLEARN_DIGIT_SIZE
        return dict(
            patch_size=self.large_patch_size if large else self.patch_size,
            glimpse_filters=self.large_glimpse_filters if large else self.glimpse_filters,
            context_size=(
                digit_size // self.context_fraction,
                CAPTION_LENGTH * digit_size // self.context_fraction,
            ),
        )


DRAM_LAYOUT = DramLayout()

# RAM: the sizes of the glimpse network and core, the policy's σ (0.2 erred less than 0.1 on
# both digit tasks), Adam's learning rate (constant: a decay within the budget starved the
# cluttered policy); the glimpses come from the task's layout.
RAM = dict(
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
# The baselines: the paper's sizes, and the RAM's optimizer (Adam 1e-3, no clipping).
BASELINES = {
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
# Translated digits' schedule, for the RAM and the baselines alike (the same budget for every
# model): a higher rate decaying along a cosine, where the RAM overtakes the MLP; the cluttered
# tasks keep the constant rate (a decay starved their policy).
TRANSLATED_SCHEDULE = dict(learning_rate=3e-3, learning_rate_decay="cosine")
# DRAM on digit strips: 3 glimpses of one patch per symbol (3 digits and END), RAM-sized
# networks, the symbols read from the bottom (glimpse) RNN as in the paper, Adam decaying along
# a cosine over the run, the policy's σ = 0.2 (0.1 lost seeds); the patch, glimpse network and
# context view come from `DRAM_LAYOUT` (here its values for sklearn's digits).
DRAM = dict(
    glimpses_per_symbol=3,
    num_scales=1,
    glimpse_units=64,
    location_units=64,
    glimpse_output_units=128,
    units=128,
    context_filters=(8, 16, 16),
    glimpse_filters=DRAM_LAYOUT.glimpse_filters,
    read_from="bottom",
    location_std=0.2,
    seed=0,
    learning_rate=3e-3,
    learning_rate_decay="cosine",
)
# Show, Attend and Tell: three poolings give a 2×6 grid of regions on sklearn's 16×48 strips
# (3×10 on 28×84); λ = 1, the authors' value.
CAPTION = dict(
    embedding_dim=16, units=32, encoder_filters=(8, 16, 32), regularization=1.0, learning_rate=1e-2
)


def ram_presets(layout, schedule=None):
    """The presets of a RAM task's models on sklearn's digits: the RAM's with the layout's
    glimpses and each model's policy, the baselines', both on the task's ``schedule``."""
    schedule = schedule or {}
    glimpses = layout.glimpses(SKLEARN_DIGIT_SIZE)
    presets = {m: dict(RAM, **glimpses, policy=POLICIES[m], **schedule) for m in RAM_MODELS}
    presets.update({m: dict(BASELINES[m], **schedule) for m in BASELINE_MODELS})
    return presets


TRANSLATED_DIGITS = Task(
    "translated_digits",
    RAM_MODELS + BASELINE_MODELS,
    "RAM classifies digits placed anywhere on a canvas twice their size, 4 glimpses",
    epochs=300,
    presets=ram_presets(TRANSLATED_LAYOUT, TRANSLATED_SCHEDULE),
    **DIGIT_TASK,
)
CLUTTERED_DIGITS = Task(
    "cluttered_digits",
    RAM_MODELS + BASELINE_MODELS,
    "RAM on a 3x canvas with 4 pieces of clutter, 8 glimpses of 2 scales",
    epochs=60,
    presets=ram_presets(CLUTTERED_LAYOUT),
    **DIGIT_TASK,
)
CLUTTERED_DIGITS_100 = Task(
    "cluttered_digits_100",
    RAM_MODELS + BASELINE_MODELS,
    "RAM on a 100x100 canvas (6x) with 8 pieces of clutter, 8 glimpses of 3 scales",
    epochs=60,
    presets=ram_presets(CLUTTERED_100_LAYOUT),
    **DIGIT_TASK,
)
DIGIT_STRIPS = Task(
    "digit_strips",
    CAPTION_MODELS,
    "Show, Attend and Tell reads strips of 3 digits",
    epochs=20,
    presets={"show_attend_tell": CAPTION},
    **DIGIT_TASK,
)
DIGIT_STRIPS_GLIMPSES = Task(
    "digit_strips_glimpses",
    DRAM_MODELS,
    "DRAM reads the strips of digit_strips glimpse by glimpse, 3 per digit and END",
    epochs=60,
    presets={
        m: dict(DRAM, **DRAM_LAYOUT.of(SKLEARN_DIGIT_SIZE), policy=POLICIES[m]) for m in DRAM_MODELS
    },
    **DIGIT_TASK,
)

FAMILY = Family(
    "vision",
    "Recurrent Attention Model (and whole-image baselines), Show-Attend-Tell",
    (
        TRANSLATED_DIGITS,
        CLUTTERED_DIGITS,
        CLUTTERED_DIGITS_100,
        DIGIT_STRIPS,
        DIGIT_STRIPS_GLIMPSES,
    ),
)

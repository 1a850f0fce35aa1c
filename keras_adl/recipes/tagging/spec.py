"""The tagging family's task, models, options and defaults (standard library only)."""

from keras_adl.recipes._spec import Family, Option, Task

MODELS = ("bilstm", "bilstm_chars")
# `cross_view_tagger`'s keyword arguments and the learning rate; bilstm_chars adds the paper's
# character CNN to the word embeddings.
BILSTM = dict(word_dim=64, units=64, hidden_units=64, dropout=0.3, learning_rate=1e-3)
PRESETS = {
    "bilstm": dict(BILSTM),
    "bilstm_chars": dict(BILSTM, character_filters=((2, 32), (3, 32))),
}
CHARACTERS = {"bilstm": False, "bilstm_chars": True}
VIEWS = ("forward", "backward", "future", "past")  # keras_adl.ops.cross_view.VIEW_NAMES
# Bytes kept per token with its two markers: "September" and "Wednesday" are 9.
MAX_CHARACTERS = 12
# Labelled batches per epoch. With unlabelled data each is followed by an unlabelled batch, so
# cross-view training adds its batches to the same supervised schedule as the labels alone.
LABELLED_STEPS_PER_EPOCH = 300
LABELLED = 200
TEST_SEQUENCES = 2000
# `tune` scores its trials on these, drawn with their own seed.
DEVELOPMENT_SEQUENCES, DEVELOPMENT_SEED = 500, 4
# The data's seeds: the labelled and unlabelled sequences are drawn with the run's --seed
# added, the held-out sequences are the same for every run.
LABELLED_SEED, UNLABELLED_SEED, TEST_SEED = 1000, 2000, 3
VOCABULARY_FILE = "vocabulary.json"

OPTIONS = (
    Option(
        "--labelled",
        "labelled sequences to train on (the unlabelled ones: --samples)",
        int,
        default=LABELLED,
    ),
    Option(
        "--unlabelled",
        "on: cross-view training on unlabelled sequences too (--samples of them); off: the "
        "labels alone",
        default="on",
        choices=("on", "off"),
    ),
    Option(
        "--views",
        f"the auxiliary modules, comma-separated from {','.join(VIEWS)}",
        default=",".join(VIEWS),
    ),
)

DATE_FIELDS = Task(
    "date_fields",
    MODELS,
    "the field of each token of written dates, from a few labelled sequences (CVT)",
    epochs=4,
    batch_size=32,
    samples=20000,
    options=OPTIONS,
    tune_epochs=1,
    tune_samples=5000,
    presets=PRESETS,
)

FAMILY = Family(
    "tagging",
    "sequence tagging by cross-view training on labelled and unlabelled text",
    (DATE_FIELDS,),
)

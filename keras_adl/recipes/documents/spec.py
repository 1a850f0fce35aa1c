"""The documents family's tasks, models, options and defaults (standard library only)."""

from keras_adl.recipes._spec import FORTUNES_OPTION, Family, Option, Task

MODELS = ("han", "han_lstm")
# `han_classifier`'s keyword arguments and the learning rate; han_lstm swaps the encoder.
HAN = dict(embedding_dim=64, units=64, encoder_units=32, dropout=0.1, learning_rate=2e-3)
PRESETS = {"han": dict(HAN, encoder="gru"), "han_lstm": dict(HAN, encoder="lstm")}
TOKENIZER_FILE = "tokenizer.json"
MAX_VOCABULARY = 30000
# (sentences, words) kept per document: the needle task's maxima; for the fortunes the B=64,
# S=15, W=30 setting of benchmarks/han.py; a user's documents follow the data.
NEEDLE_SHAPE = (10, 10)
# needle_long: the key sentence among 20 to 40, as deep in a document as a user's page goes.
NEEDLE_SENTENCES, NEEDLE_LONG_SENTENCES = (4, 10), (20, 40)
NEEDLE_LONG_SHAPE = (40, 10)
FORTUNES_SHAPE = (15, 30)
# A user's documents keep the sentence and word counts that this percentile of the training
# documents (and of their sentences) fits in, within these caps (memory: S × W ids a document).
SIZE_PERCENTILE = 90
MAX_SENTENCES, MAX_WORDS, MAX_WORDS_PER_DOCUMENT = 200, 80, 4096
NEEDLE_CLASSES = 4
NEEDLE_TEST_DOCUMENTS = 1000
# The development split: a tenth of the training documents, at most this many (4 batches:
# evaluating it costs a few steps an epoch); needle: this many generated with their own seed.
DEVELOPMENT_DOCUMENTS = 256
TEST_FRACTION = 0.2

SIZE_OPTIONS = (
    Option(
        "--max-sentences",
        f"sentences kept per document (default: the {SIZE_PERCENTILE}th percentile of the "
        f"training documents', at most {MAX_SENTENCES}; fortunes: {FORTUNES_SHAPE[0]})",
        int,
    ),
    Option(
        "--max-words",
        f"words kept per sentence (default: the {SIZE_PERCENTILE}th percentile of the training "
        f"sentences', at most {MAX_WORDS}; fortunes: {FORTUNES_SHAPE[1]})",
        int,
    ),
)
DATA_OPTION = Option(
    "--data", "a <label>/<doc>.txt tree or a label<TAB>text file", "path", required=True
)

NEEDLE = Task(
    "needle",
    MODELS,
    "4 classes given by one key sentence among distractors",
    epochs=3,
    batch_size=64,
    samples=4000,
    held_out=True,
    presets=PRESETS,
)
NEEDLE_LONG = Task(
    "needle_long",
    MODELS,
    "the needle task's key sentence among 20 to 40 sentences",
    epochs=3,
    batch_size=64,
    samples=4000,
    held_out=True,
    presets=PRESETS,
)
FORTUNES = Task(
    "fortunes",
    MODELS,
    "Debian's fortunes by topic (make data)",
    epochs=10,
    batch_size=64,
    samples=20000,
    options=(FORTUNES_OPTION, *SIZE_OPTIONS),
    held_out=True,
    presets=PRESETS,
)
DOCUMENTS = Task(
    "documents",
    MODELS,
    "your own labelled documents",
    epochs=10,
    batch_size=64,
    samples=1000000,
    options=(DATA_OPTION, *SIZE_OPTIONS),
    held_out=True,
    presets=PRESETS,
)

FAMILY = Family(
    "documents",
    "Hierarchical Attention Network on raw documents",
    (NEEDLE, NEEDLE_LONG, FORTUNES, DOCUMENTS),
)

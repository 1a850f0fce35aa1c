"""The embeddings family's task, models, options and defaults (standard library only)."""

from keras_adl.recipes._spec import CORPUS_OPTION, Family, Option, Task

MODELS = ("skipgram", "cbow")
# Whether a model predicts the centre word from its averaged window (CBOW) rather than each
# context word from the centre (skip-gram): the one difference between the two models.
CBOW = {"skipgram": False, "cbow": True}
VOCABULARY_FILE = "vocabulary.json"
# The optimizer's peak rate: SGD's is per example (word2vec.c's alpha, batched), Adam's per batch.
LEARNING_RATES = {"sgd": 0.05, "adam": 4e-3}
# SGD's last learning rate, a fraction of the first (word2vec.c's linear decay).
FINAL_LEARNING_RATE = 1e-4
# A table row moves per batch at most as far as this many of its occurrences would move it
# (`repeated_row_scale`): uncapped, a small vocabulary diverges.
MAX_ROW_UPDATES = 32
# The model's, the training examples' (window, negatives, subsample) and the optimizer's settings;
# "sgd" is word2vec.c's: sparse updates, several times faster than Adam's dense moments.
WORD2VEC = dict(
    dim=100,
    window=5,
    negatives=5,
    subsample=1e-4,
    optimizer="sgd",
    max_row_updates=MAX_ROW_UPDATES,
    learning_rate=LEARNING_RATES["sgd"],
)
PRESETS = {name: dict(WORD2VEC) for name in MODELS}
# Training steps run per call of the compiled function (word2vec's steps are short).
STEPS_PER_EXECUTION = 100
MIN_COUNT = 5
# Positives per batch: the vectors barely depend on it, and a step's rows stay in cache.
BATCH_SIZE = 2048

WORD2VEC_TASK = Task(
    "word2vec",
    MODELS,
    "word vectors from a corpus (default: Debian's GCIDE dictionary, make data)",
    epochs=3,
    batch_size=BATCH_SIZE,
    samples=10_000_000,  # at most this many documents
    tunable=True,
    tune_epochs=1,
    tune_samples=50_000,
    # A step takes about 2 ms: a checkpoint (~150 ms for 90 k words) every 200 would cost a
    # quarter of the training time; every 5,000 steps is about every 10 s.
    checkpoint_every=5000,
    options=(
        CORPUS_OPTION,
        Option("--min-count", "words seen fewer times are dropped", int, default=MIN_COUNT),
        Option("--dim", "vector size", int, default=WORD2VEC["dim"]),
        Option(
            "--window",
            "the largest window W (each centre draws 1..W)",
            int,
            default=WORD2VEC["window"],
        ),
        Option("--negatives", "negatives per positive", int, default=WORD2VEC["negatives"]),
        Option("--subsample", "the subsampling threshold t", float, default=WORD2VEC["subsample"]),
        Option(
            "--optimizer",
            "sgd (word2vec's: sparse, fast, linear decay) or adam (dense moments)",
            default=WORD2VEC["optimizer"],
            choices=tuple(LEARNING_RATES),
        ),
    ),
    presets=PRESETS,
)

FAMILY = Family("embeddings", "word2vec word vectors from a text corpus", (WORD2VEC_TASK,))

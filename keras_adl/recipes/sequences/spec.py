"""The sequences family's tasks, models, options and defaults (standard library only)."""

from keras_adl.recipes._spec import Family, Option, Task

SEQ2SEQ_MODELS = ("attention_seq2seq", "encoder_decoder", "transformer_seq2seq")
# The Transformer with dropout first: on gettext it is the one that beats a translation memory
# in a user's budgeted run.
PAIRS_MODELS = ("transformer_seq2seq", "attention_seq2seq", "encoder_decoder")
# A pairs run's `TextPairTokenizer`; runs and exports of earlier versions wrote it as
# `OLD_TOKENIZER_FILE`, still read.
TOKENIZER_FILE = "tokenizer.json"
OLD_TOKENIZER_FILE = "vocab.json"
# A pairs run's translation memory: its training pairs, the score from which a match is
# trusted over the model (`--memory auto`) and whether the model reads its matches (`input`).
MEMORY_FILE = "memory.json"
# Training pairs set aside (not trained on) to choose that score.
MEMORY_DEVELOPMENT_PAIRS = 500
PROG_NAME = "keras-adl"
# Generated examples evaluated after training, and the decoding batch of the held-out pairs.
HELD_OUT = 500
EVALUATION_BATCH = 256
SORT_LENGTH = 10
VALIDATION_SPLIT = 0.05
SPLIT_SEED = 0
# Generated examples whose held-out loss is watched every epoch (dates, sort).
VALIDATION_EXAMPLES = 1000

# The presets: the builders' keyword arguments and Adam's learning rate; vocabulary sizes come
# from the data. The dates presets are the example's (examples/seq2seq_dates.py).
TRANSFORMER_SIZES = dict(model_dim=64, num_heads=4, intermediate_dim=128, num_layers=2)
DATES_PRESETS = {
    "attention_seq2seq": dict(embedding_dim=32, units=64, learning_rate=3e-3),
    "encoder_decoder": dict(embedding_dim=32, units=64, learning_rate=3e-3),
    "transformer_seq2seq": dict(TRANSFORMER_SIZES, learning_rate=1e-3),
}
PAIRS_PRESETS = {
    # Dropout 0.1, the Transformer paper's: without it long runs on gettext overfit.
    "transformer_seq2seq": dict(TRANSFORMER_SIZES, dropout=0.1, learning_rate=1e-3),
    "attention_seq2seq": dict(embedding_dim=64, units=128, learning_rate=3e-3),
    "encoder_decoder": dict(embedding_dim=64, units=128, learning_rate=3e-3),
}
SORT_PRESETS = {"pointer_network": dict(units=128, learning_rate=2e-3)}

PAIRS_OPTIONS = (
    Option(
        "--data",
        "a UTF-8 file of source<TAB>target lines, a .po/.mo catalog, or "
        "gettext:LANG (the English->LANG messages under /usr/share/locale; "
        "gettext:DIR reads the catalogs under DIR)",
        "file",
        required=True,
        schemes=("gettext",),
    ),
    Option(
        "--tokens",
        "subword (WordPiece), word or char",
        str,
        default="subword",
        choices=("subword", "word", "char"),
    ),
    Option(
        "--target-case",
        "keep: translations keep the target's case and spacing, text a user can "
        "ship (subword; the default there); fold: case-folded tokens split by "
        "spaces (word and char always fold)",
        str,
        choices=("keep", "fold"),
    ),
    Option(
        "--copy-through",
        "auto: placeholders (%s, {0}, $VAR) and, where the training pairs keep them "
        "unchanged, options, function names, numbers and addresses are copied "
        "exactly from the source (subword; the default there); off: translated "
        "like any text",
        str,
        choices=("auto", "off"),
    ),
    Option(
        "--memory",
        "auto: the training pairs are a translation memory, and a source whose best "
        "fuzzy match scores at least the threshold chosen on a development split "
        "(an exact match always) gets the match's translation, the others the "
        "model's; input: the same, and the model also reads each source's best match "
        "and its score (neural fuzzy repair); off: the model alone",
        str,
        default="auto",
        choices=("auto", "input", "off"),
    ),
    Option(
        "--vocab-size",
        "WordPiece pieces learned per side (subword), or the most frequent tokens "
        "kept per side (word, char)",
        int,
        default=4000,
    ),
    Option(
        "--max-length",
        "tokens per source and per target; longer training pairs are left out",
        int,
        default=32,
    ),
    Option(
        "--validation-split",
        "fraction of the pairs held out (seeded) for the reported figures",
        float,
        default=VALIDATION_SPLIT,
    ),
    Option(
        "--validation",
        "pairs held out instead of --validation-split, in any --data form",
        "file",
        schemes=("gettext",),
    ),
)

DATES = Task(
    "dates",
    SEQ2SEQ_MODELS,
    "human-written dates to ISO YYYY-MM-DD, by character",
    epochs=3,
    batch_size=64,
    samples=20000,
    held_out=True,
    presets=DATES_PRESETS,
)
PAIRS = Task(
    "pairs",
    PAIRS_MODELS,
    "translation of your source<TAB>target pairs or of gettext catalogs, by subword",
    epochs=3,
    batch_size=64,
    samples=100000,  # at most this many training pairs (a seeded subset)
    tunable=False,
    held_out=True,
    budget_decay=True,  # --minutes is how a user trains it
    options=PAIRS_OPTIONS,
    presets=PAIRS_PRESETS,
)
SORT = Task(
    "sort",
    ("pointer_network",),
    f"the pointer network sorts {SORT_LENGTH} numbers",
    epochs=3,
    batch_size=64,
    samples=20000,
    held_out=True,
    presets=SORT_PRESETS,
)

FAMILY = Family(
    "sequences",
    "attention encoder-decoders, the Transformer and the pointer network",
    (DATES, PAIRS, SORT),
    evaluate_tasks=("pairs",),
)

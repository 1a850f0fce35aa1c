"""The pretraining family's tasks, models, options and defaults (standard library only)."""

from keras_adl.recipes._spec import FORTUNES_OPTION, Family, Option, Task

# The WordPiece tokenizer saved beside the model; runs and exports of earlier versions hold it
# as `OLD_TOKENIZER_FILE`, read when the new name is absent.
TOKENIZER_FILE = "tokenizer.json"
OLD_TOKENIZER_FILE = "vocab.json"
VOCAB_SIZE = 8000
HELD_OUT_FRACTION = 0.02
SPLIT_SEED = 0
MAX_PREDICTIONS = 10
EVALUATION_BATCHES = 20
# The development split whose loss picks the best epoch: a tenth of the distinct training
# documents, at most `DEVELOPMENT_DOCUMENTS`, read as `DEVELOPMENT_BATCHES` batches an epoch.
DEVELOPMENT_DOCUMENTS = 500
DEVELOPMENT_BATCHES = 4
WARMUP_FRACTION = 0.1
# The builders' sizes: a 2-layer, d = 128 Transformer.
SIZES = dict(
    sequence_length=64, model_dim=128, num_heads=2, intermediate_dim=512, num_layers=2, dropout=0.1
)
# The peak learning rate of the warm-up + cosine decay schedule and the warm-up's share of the
# steps.
SCHEDULE = dict(learning_rate=1e-3, warmup_fraction=WARMUP_FRACTION)
# The presets: the builders' keyword arguments and the schedule of each (task, model). The BERT
# classifier pools the mean of the final states (better than [CLS] on the fortunes, from
# pretrained and random weights alike) and keeps the pretraining rate, which beat lower ones
# from both starts; the GPT classifier weighs its auxiliary LM loss by Radford et al.'s λ.
MASKED_LM = {"bert": dict(SIZES, **SCHEDULE)}
CAUSAL_LM = {"gpt": dict(SIZES, **SCHEDULE)}
CLASSIFIERS = {
    "bert": dict(SIZES, **SCHEDULE, pooling="mean"),
    "gpt": dict(SIZES, learning_rate=3e-4, warmup_fraction=WARMUP_FRACTION, lm_loss_weight=0.5),
}
# The pretraining task a fine-tuned model starts from (``finetune --init RUN``).
INIT_TASKS = {"bert": "pretrain_mlm", "gpt": "pretrain_lm"}
# The fine-tuned classifier's accuracy in the training logs (GPT's outputs are named).
CLASSIFIER_ACCURACY = {"bert": "accuracy", "gpt": "classes_accuracy"}
# Masked-LM examples: whole documents, masked LM only (RoBERTa's finding: next-sentence
# prediction does not help), or BERT's sentence pairs with next-sentence prediction.
SEGMENTS = "documents"
# In the default corpus, the fortunes' share of the training documents (they are repeated to
# make it up): in-domain text for the fortune-topic fine-tuning, beside GCIDE's definitions.
FORTUNE_SHARE = 0.5
GENERATE_LENGTH = 48
# Fine-tuning reads each fortune as up to this many windows of ``sequence_length - 2`` pieces
# (`text_windows`): it trains on every window with its fortune's label and classifies a fortune
# by all of its windows (a fifth of the training fortunes are longer than one window).
FINETUNE_WINDOWS = 8
# The pretraining tasks' own options.
CORPUS_OPTIONS = (
    Option(
        "--data",
        "a text file or directory, gcide.dict.dz or WordNet (default: GCIDE + fortunes); a "
        "file with blank lines is read as paragraphs, one without as one document per line "
        "(with --segments pairs: consecutive lines are consecutive sentences)",
        "path",
    ),
    Option("--vocab-size", "WordPiece pieces", int, default=VOCAB_SIZE),
    Option("--steps", "training steps per epoch (default: one pass)", int),
)
# The pretraining tasks' model sizes for train (default: `SIZES`; tune searches them instead);
# ``train finetune --init RUN`` reads them from the run, so a larger pretrained model is
# fine-tuned, and compared with random weights, at its own size.
SIZE_OPTIONS = (
    Option("--num-layers", f"Transformer blocks (default: {SIZES['num_layers']})", int),
    Option(
        "--model-dim", f"model width, divisible by --num-heads (default: {SIZES['model_dim']})", int
    ),
    Option("--num-heads", f"attention heads (default: {SIZES['num_heads']})", int),
    Option(
        "--intermediate-dim",
        f"the feed-forward layers' width (default: {SIZES['intermediate_dim']})",
        int,
    ),
)
SEGMENTS_OPTION = Option(
    "--segments",
    "masked-LM examples: whole documents (MLM only) or sentence pairs (MLM + next sentence)",
    default=SEGMENTS,
    choices=("documents", "pairs"),
)
FINETUNE_OPTIONS = (
    Option("--init", "a pretrain_mlm (bert) or pretrain_lm (gpt) run", "dir"),
    Option(
        "--weights",
        "with --init: the pretrained encoder, or random weights (same vocabulary)",
        default="pretrained",
        choices=("pretrained", "random"),
    ),
    FORTUNES_OPTION,
    Option("--vocab-size", "WordPiece pieces (without --init)", int, default=4000),
    Option(
        "--windows",
        "read each fortune as up to this many windows of sequence_length - 2 "
        "pieces, for training and classifying (1: its first window only)",
        int,
        default=FINETUNE_WINDOWS,
    ),
)

PRETRAIN_MLM = Task(
    "pretrain_mlm",
    ("bert",),
    "masked LM (+ next sentence) on a corpus (default: GCIDE + fortunes, make data)",
    epochs=1,
    batch_size=64,
    samples=1_000_000,  # at most this many training documents
    options=(*CORPUS_OPTIONS, SEGMENTS_OPTION, *SIZE_OPTIONS),
    held_out=True,
    presets=MASKED_LM,
)
PRETRAIN_LM = Task(
    "pretrain_lm",
    ("gpt",),
    "causal LM on a corpus, exportable generation (default: GCIDE + fortunes)",
    epochs=1,
    batch_size=32,
    samples=1_000_000,
    options=(*CORPUS_OPTIONS, *SIZE_OPTIONS),
    held_out=True,
    presets=CAUSAL_LM,
)
FINETUNE = Task(
    "finetune",
    ("bert", "gpt"),
    "fortune topics, from a pretrain_mlm/pretrain_lm run (--init RUN) or from scratch",
    epochs=10,
    batch_size=32,
    samples=20000,
    options=FINETUNE_OPTIONS,
    held_out=True,
    presets=CLASSIFIERS,
)

FAMILY = Family(
    "pretraining",
    "BERT-style masked LM, GPT-style causal LM, fine-tuning",
    (PRETRAIN_MLM, PRETRAIN_LM, FINETUNE),
)

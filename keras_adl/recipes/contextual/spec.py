"""The contextual family's tasks, models, options and defaults (standard library only)."""

import collections

from keras_adl.recipes._spec import CORPUS_OPTION, FORTUNES_OPTION, Family, Option, Task

# The biLM's output words (`keras_adl.data.skipgrams.WordVocabulary`), and the tokenizers of
# CoVe (`WordVectorPairTokenizer`) and of the classifier (its word list).
VOCABULARY_FILE = "vocabulary.json"
TOKENIZER_FILE = "tokenizer.json"
# The tokenizers' file in runs of earlier versions: still read (export, resume, --cove RUN).
OLD_TOKENIZER_FILE = "vocab.json"
# The vocabulary of a `keras-adl train word2vec` run (--vectors).
WORD2VEC_VOCABULARY_FILE = "vocabulary.json"
SPLIT_SEED = 0
# cove: the development pairs carved from the training pairs (a tenth, at most this many).
DEVELOPMENT_PAIRS = 512
HELD_OUT_FRACTION = 0.02
HELD_OUT_WINDOWS = 2000  # held-out windows scored after training (and every epoch)
MAX_WORDS = 32  # words per biLM training window
DOCUMENT_WORDS = 64  # words of a fortune the classifier reads
VOCAB_SIZE = 10000  # output words of the biLM's softmax (the rest are <unk>)
# An epoch is a fixed number of steps (the windows repeat), so that the held-out figures come
# at regular intervals whatever the corpus' size.
STEPS_PER_EPOCH = 700
BEAM_WIDTH = 4
ATTENTION_MESSAGES = 4  # held-out messages drawn by the cove task

# The presets: each builder's keyword arguments and the learning rate. The biLM is a CPU-sized
# ELMo (the paper's LSTMs and character filters are many times larger).
BILM = dict(
    max_characters=20,
    character_dim=16,
    filters=((1, 32), (2, 32), (3, 64), (4, 128), (5, 128)),
    num_highway=2,
    projection_dim=128,
    units=256,
    num_layers=2,
    dropout=0.1,
    learning_rate=2e-3,
)
COVE = dict(units=128, cell="lstm", learning_rate=3e-3)
CLASSIFIER = dict(units=64, dropout=0.3, learning_rate=2e-3)

FeatureKind = collections.namedtuple("FeatureKind", "runs elmo_mix scalar_mix_picture")
FeatureKind.__doc__ = """What a ``--features`` value of ``fortunes_features`` reads and feeds.

Attributes:
    runs: the options naming the runs it reads (``vectors``, ``cove``, ``bilm``), in the order
        they are named and loaded.
    elmo_mix: ``None``, or the `ELMoEmbedding` mix of the biLM's layers (``"all"``, ``"top"``):
        the classifier then also reads each word's characters.
    scalar_mix_picture: whether the run draws ``scalar_mix.png`` (the learned layer weights).
"""
FEATURES = {
    "static": FeatureKind(("vectors",), None, False),
    "cove": FeatureKind(("cove",), None, False),
    "elmo": FeatureKind(("vectors", "bilm"), "all", True),
    "elmo_top": FeatureKind(("vectors", "bilm"), "top", False),
}
DEFAULT_FEATURES = "elmo"


def run_option(flag, task):
    """The option naming a finished run of ``task`` that this task reads."""
    return Option(flag, f"a `keras-adl train {task}` run directory", "dir")


PRETRAIN_BILM = Task(
    "pretrain_bilm",
    ("elmo",),
    "ELMo's character-level biLM on a corpus (default: GCIDE, make data)",
    epochs=4,
    batch_size=32,
    samples=10_000_000,  # at most this many documents
    tunable=False,
    held_out=True,
    options=(
        CORPUS_OPTION,
        Option("--vocab-size", "output words of the softmax", int, default=VOCAB_SIZE),
        Option("--max-words", "words per training window", int, default=MAX_WORDS),
        Option(
            "--steps",
            "steps per epoch (the windows repeat, reshuffled; a held-out evaluation ends each "
            "epoch)",
            int,
            default=STEPS_PER_EPOCH,
        ),
    ),
    presets={"elmo": BILM},
)
COVE_TASK = Task(
    "cove",
    ("attention_seq2seq",),
    "CoVe: English->LANG translation over fixed word vectors (gettext catalogs)",
    epochs=3,
    batch_size=64,
    samples=100000,
    tunable=False,
    held_out=True,
    options=(
        Option(
            "--data",
            "gettext:LANG, a .po/.mo catalog or a source<TAB>target file",
            "file",
            default="gettext:fr",
            schemes=("gettext",),
        ),
        run_option("--vectors", "word2vec"),
        Option("--vocab-size", "target WordPiece pieces", int, default=4000),
        Option("--max-length", "tokens per source and target", int, default=32),
        Option("--validation-split", "fraction of the pairs held out", float, default=0.05),
    ),
    presets={"attention_seq2seq": COVE},
)
FORTUNES_FEATURES = Task(
    "fortunes_features",
    ("bigru",),
    "fortune topics from word vectors, CoVe or ELMo features (--features)",
    epochs=10,
    batch_size=32,
    samples=20000,
    tune_epochs=5,
    tune_samples=20000,
    held_out=True,
    options=(
        Option(
            "--features",
            "static, cove, elmo or elmo_top",
            default=DEFAULT_FEATURES,
            choices=tuple(FEATURES),
        ),
        run_option("--vectors", "word2vec"),
        run_option("--bilm", "pretrain_bilm"),
        run_option("--cove", "cove"),
        FORTUNES_OPTION,
    ),
    presets={"bigru": CLASSIFIER},
)

FAMILY = Family(
    "contextual",
    "ELMo's biLM and CoVe, as word features on fortunes",
    (PRETRAIN_BILM, COVE_TASK, FORTUNES_FEATURES),
)

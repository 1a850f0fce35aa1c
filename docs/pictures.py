"""The documentation's pictures: small seeded runs of every family's recipes, their pictures
kept as small PNGs in ``docs/pictures/<family>/<name>.png`` and listed in ``pictures.json``.

Each picture is what a user's run draws: every run in `RUNS` is ``keras-adl train TASK
--model MODEL --seed SEED`` with small ``--samples``/``--epochs``/task options, in a process of
its own, its run directory in a temporary folder (deleted at the end; ``--keep-runs`` keeps
it). The chosen pictures (`PICTURES`) are copied from the run directories, downscaled to at most
`MAX_WIDTH` pixels and re-saved through Pillow with a palette of at most 256 colours and
``optimize=True`` (each at most `MAX_BYTES`). ``pictures.json`` lists, in a fixed order (the
families' order, then `PICTURES`' order), each picture's family, file (relative to ``--out``),
caption, the command of the run that drew it (and of the runs it reads), and that run's
figures from its ``run.json``. ``--only`` redoes some families and ``--pictures`` some
pictures: their entries are replaced, the others' kept.

The runs read ``make data``'s Debian files (GCIDE, fortunes); the default settings take about
11 minutes on 2 CPU cores (measured: 564 s, and 96 s for the DNC added since; the runs one
after the other, one process at a time).

    .venv/bin/python docs/pictures.py                       # every family
    .venv/bin/python docs/pictures.py --only memory vision  # redo two families
    .venv/bin/python docs/pictures.py --pictures memory/ntm_addressing  # redo one picture
    .venv/bin/python docs/pictures.py --out /tmp/pictures --keep-runs
"""

import argparse
import dataclasses
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

# Importing keras_adl registers its classes with Keras, so TensorFlow loads (quietened by
# TF_CPP_MIN_LOG_LEVEL); the training runs in processes of their own.
from keras_adl.recipes import FAMILIES  # noqa: E402

# The largest PNG kept (bytes) and the widest (pixels; wider pictures are scaled down).
MAX_BYTES = 150_000
MAX_WIDTH = 1000
# A run that takes longer than this (seconds) has gone wrong.
RUN_TIMEOUT = 900
INDEX = "pictures.json"


@dataclasses.dataclass(frozen=True)
class Run:
    """One ``keras-adl train`` run.

    Attributes:
        task: the task's name.
        model: the model's name.
        options: the command's other flags; ``{NAME}`` in a value stands for the directory of
            the run ``NAME`` of `RUNS` (run before this one).
        seed: ``--seed``.
    """

    task: str
    model: str
    options: tuple = ()
    seed: int = 0

    def needs(self):
        """The names of the runs whose directories this one reads, in order."""
        return [value[1:-1] for value in self.options if value.startswith("{")]

    def argv(self, run_dirs):
        """The command's arguments after ``keras-adl``, ``{NAME}`` replaced by
        ``run_dirs[NAME]``."""
        options = [run_dirs[v[1:-1]] if v.startswith("{") else v for v in self.options]
        return ["train", self.task, "--model", self.model, *options, "--seed", str(self.seed)]

    def command(self):
        """The command as the documentation shows it (a run read as ``<NAME run>``)."""
        shown = {name: f"<{name} run>" for name in self.needs()}
        return "keras-adl " + " ".join(self.argv(shown))


@dataclasses.dataclass(frozen=True)
class Picture:
    """One picture of the documentation.

    Attributes:
        family: the family whose guide shows it.
        name: the file's name in ``<out>/<family>/`` (without ``.png``).
        run: the name of the run (in `RUNS`) that draws it.
        file: the picture's file in the run directory.
        caption: one line saying what the picture shows.
    """

    family: str
    name: str
    run: str
    file: str
    caption: str


# The runs, each small and seeded, in the order they run (a run after those it reads), each
# sized so that its pictures show what the model learned (seconds to three minutes on 2 cores).
# The attention heads are a GPT's: a small BERT's, after the same steps, are still near uniform.
RUNS = {
    "dates": Run("dates", "attention_seq2seq", ("--samples", "10000", "--epochs", "3")),
    "sort": Run("sort", "pointer_network", ("--samples", "10000", "--epochs", "3")),
    "copy_ntm": Run("copy", "ntm", ("--samples", "12000", "--epochs", "3")),
    "copy_dnc": Run("copy", "dnc", ("--samples", "16000", "--epochs", "1")),
    "translated_digits": Run("translated_digits", "ram", ("--epochs", "120")),
    "digit_strips": Run(
        "digit_strips", "show_attend_tell", ("--samples", "20000", "--epochs", "10")
    ),
    "needle": Run("needle", "han", ("--samples", "4000", "--epochs", "3")),
    "word2vec": Run("word2vec", "skipgram", ("--samples", "100000", "--epochs", "3")),
    "pretrain_lm": Run(
        "pretrain_lm", "gpt", ("--samples", "20000", "--steps", "300", "--vocab-size", "2000")
    ),
    "pretrain_bilm": Run(
        "pretrain_bilm",
        "elmo",
        ("--samples", "20000", "--steps", "100", "--epochs", "2", "--vocab-size", "4000"),
    ),
    "fortunes_features": Run(
        "fortunes_features",
        "bigru",
        (
            "--features",
            "elmo",
            "--vectors",
            "{word2vec}",
            "--bilm",
            "{pretrain_bilm}",
            "--epochs",
            "3",
        ),
    ),
    "date_fields": Run("date_fields", "bilstm", ("--epochs", "2")),
}

PICTURES = (
    Picture(
        "sequences",
        "dates_attention",
        "dates",
        "attention.png",
        "Bahdanau attention of the dates encoder-decoder on one held-out date: each output "
        "character of the ISO date (rows) attends to the source characters it comes from.",
    ),
    Picture(
        "sequences",
        "sort_pointer",
        "sort",
        "attention.png",
        "The pointer network sorting 10 numbers: at each output step (rows, labelled with the "
        "index it outputs) its distribution over the inputs; it points at them smallest first.",
    ),
    Picture(
        "memory",
        "ntm_addressing",
        "copy_ntm",
        "addressing.png",
        "NTM on copy: the write weights move one memory slot per step while the sequence comes "
        "in, then the read weights go over the same slots in the same order to write it back.",
    ),
    Picture(
        "memory",
        "dnc_addressing",
        "copy_dnc",
        "addressing.png",
        "DNC on copy: the write weights go to the free slots the allocation weighting finds "
        "(not always in order), the read weights follow the temporal links in the written order.",
    ),
    Picture(
        "vision",
        "ram_glimpses",
        "translated_digits",
        "glimpses.png",
        "The Recurrent Attention Model on a translated digit: its 4 glimpses in order "
        "(numbered; each a fine square and a coarser dashed one) and its prediction.",
    ),
    Picture(
        "vision",
        "caption_attention",
        "digit_strips",
        "attention.png",
        "Show, Attend and Tell on a strip of 3 digits: the image, then its attention over the "
        "image as it emits each digit of the caption and the end token.",
    ),
    Picture(
        "documents",
        "han_attention",
        "needle",
        "attention.png",
        "The Hierarchical Attention Network on a needle document: the box left of each "
        "sentence is its sentence weight (all on the key sentence), the shading its word weights.",
    ),
    Picture(
        "embeddings",
        "word2vec_tsne",
        "word2vec",
        "embeddings.png",
        "t-SNE map of skip-gram word vectors trained on GCIDE's definitions: 8 chosen words "
        "and their 5 nearest neighbours, one colour per group.",
    ),
    Picture(
        "pretraining",
        "gpt_attention_heads",
        "pretrain_lm",
        "attention.png",
        "Self-attention of a small GPT (2 layers, 2 heads) after 300 steps of causal-LM "
        "pretraining, one map per layer and head: each piece attends to earlier ones only.",
    ),
    Picture(
        "pretraining",
        "gpt_training",
        "pretrain_lm",
        "training.png",
        "Training curves of the small GPT's causal-LM pretraining on GCIDE and fortunes: loss "
        "and perplexity over the 300 steps.",
    ),
    Picture(
        "contextual",
        "elmo_scalar_mix",
        "fortunes_features",
        "scalar_mix.png",
        "The scalar mix the fortunes classifier learns over ELMo's layers: the softmax weight "
        "of the token layer and of each biLSTM layer (dashed: uniform), and its scale gamma.",
    ),
    Picture(
        "contextual",
        "bilm_training",
        "pretrain_bilm",
        "training.png",
        "Training curves of ELMo's character-level biLM on GCIDE: loss and forward and "
        "backward perplexities over the steps.",
    ),
    Picture(
        "tagging",
        "cvt_views",
        "date_fields",
        "views.png",
        "Cross-view training on date fields from 200 labelled sequences: held-out token "
        "accuracy of the primary tagger and of each auxiliary view.",
    ),
)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--only", nargs="+", choices=FAMILIES, metavar="FAMILY", help="the families to redo"
    )
    parser.add_argument(
        "--pictures",
        nargs="+",
        choices=[f"{p.family}/{p.name}" for p in PICTURES],
        metavar="FAMILY/NAME",
        help="redo only these pictures (e.g. memory/ntm_addressing), with the runs they need",
    )
    parser.add_argument(
        "--out", default=os.path.join(HERE, "pictures"), help="(default: docs/pictures)"
    )
    parser.add_argument(
        "--keep-runs", action="store_true", help="keep the run directories (their path is printed)"
    )
    return parser.parse_args(argv)


def runs_needed(pictures):
    """The names of the runs that draw ``pictures`` and of the runs they read, in `RUNS`
    order."""
    needed, todo = set(), [p.run for p in pictures]
    while todo:
        name = todo.pop()
        if name not in needed:
            needed.add(name)
            todo.extend(RUNS[name].needs())
    return [name for name in RUNS if name in needed]


def train(name, run_dirs, work):
    """Runs ``RUNS[name]`` in a process of its own (its output in ``<work>/<name>.log``);
    returns its figures (``run.json``'s ``metrics``), or None when it failed."""
    run = RUNS[name]
    run_dirs[name] = os.path.join(work, name)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow", MPLBACKEND="Agg")
    argv = [sys.executable, "-m", "keras_adl", *run.argv(run_dirs), "--out", run_dirs[name]]
    log_path = os.path.join(work, f"{name}.log")
    start = time.monotonic()
    print(f"{name}: {run.command()}", flush=True)
    with open(log_path, "w") as log:
        try:
            code = subprocess.run(
                argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT
            ).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
    print(f"  {time.monotonic() - start:.0f} s", flush=True)
    if code != 0:
        with open(log_path, errors="replace") as log:
            print(f"  failed ({code}); the end of {log_path}:\n{log.read()[-2000:]}")
        return None
    with open(os.path.join(run_dirs[name], "run.json")) as record:
        return json.load(record).get("metrics", {})


def shrink(source, target):
    """Writes the PNG ``source`` to ``target`` at most `MAX_WIDTH` pixels wide, as a palette
    image of at most 256 colours (fewer, and narrower, until it is at most `MAX_BYTES`);
    returns its size in bytes."""
    from PIL import Image  # matplotlib's dependency, installed with the plots extra

    with Image.open(source) as opened:
        image = opened.convert("RGB")
    width, colours = min(MAX_WIDTH, image.width), 256
    while True:
        height = round(image.height * width / image.width)
        scaled = image.resize((width, height), Image.LANCZOS) if width < image.width else image
        buffer = io.BytesIO()
        scaled.quantize(colors=colours, dither=Image.Dither.NONE).save(buffer, "PNG", optimize=True)
        if buffer.tell() <= MAX_BYTES or width < 300:
            break
        width, colours = int(width * 0.85), max(64, colours // 2)
    if buffer.tell() > MAX_BYTES:
        raise ValueError(f"{source} stays over {MAX_BYTES} bytes ({buffer.tell()})")
    os.makedirs(os.path.dirname(target), exist_ok=True)
    with open(target, "wb") as file:
        file.write(buffer.getvalue())
    return buffer.tell()


def entry(picture, metrics):
    """The picture's ``pictures.json`` entry."""
    run = RUNS[picture.run]
    return {
        "family": picture.family,
        "file": f"{picture.family}/{picture.name}.png",
        "caption": picture.caption,
        "command": run.command(),
        "task": run.task,
        "model": run.model,
        "options": list(run.options),
        "seed": run.seed,
        "reads": {name: RUNS[name].command() for name in run.needs()},
        "run_file": picture.file,
        "metrics": metrics,
    }


def read_index(out):
    """``{file: entry}`` of the ``pictures.json`` in ``out`` (empty when there is none)."""
    path = os.path.join(out, INDEX)
    if not os.path.exists(path):
        return {}
    with open(path) as file:
        return {e["file"]: e for e in json.load(file)["pictures"]}


def write_index(out, made, redone):
    """Writes ``pictures.json``: ``made``'s entries, and the earlier entries of the pictures
    not made now (other families', or those of a run that failed), in `PICTURES` order;
    deletes the PNGs of the ``redone`` families it does not list. Returns the entries."""
    earlier = read_index(out)
    entries = []
    for picture in PICTURES:
        file = f"{picture.family}/{picture.name}.png"
        if file in made:
            entries.append(made[file])
        elif file in earlier:
            entries.append(earlier[file])
    listed = {e["file"] for e in entries}
    for family in redone:
        folder = os.path.join(out, family)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else ():
            if name.endswith(".png") and f"{family}/{name}" not in listed:
                os.remove(os.path.join(folder, name))
    with open(os.path.join(out, INDEX), "w") as file:
        json.dump({"pictures": entries}, file, indent=2, sort_keys=True)
        file.write("\n")
    return entries


def chosen(args):
    """The pictures to redo (``--only``'s families, ``--pictures``' pictures, or all) and
    their families, in `PICTURES` order."""
    families = args.only or list(FAMILIES)
    pictures = [
        p
        for p in PICTURES
        if p.family in families and (not args.pictures or f"{p.family}/{p.name}" in args.pictures)
    ]
    return pictures, sorted({p.family for p in pictures}, key=list(FAMILIES).index)


def main(argv=None):
    args = parse_args(argv)
    pictures, redone = chosen(args)
    work = tempfile.mkdtemp(prefix="keras-adl-pictures-")
    start, run_dirs, metrics = time.monotonic(), {}, {}
    try:
        for name in runs_needed(pictures):
            if all(metrics.get(n) is not None for n in RUNS[name].needs()):
                metrics[name] = train(name, run_dirs, work)
        made = {}
        for picture in pictures:
            source = os.path.join(run_dirs.get(picture.run, ""), picture.file)
            if metrics.get(picture.run) is None or not os.path.exists(source):
                continue
            made[f"{picture.family}/{picture.name}.png"] = entry(picture, metrics[picture.run])
            size = shrink(source, os.path.join(args.out, picture.family, picture.name + ".png"))
            print(f"{picture.family}/{picture.name}.png: {size / 1000:.0f} kB")
        write_index(args.out, made, redone)
    finally:
        if args.keep_runs:
            print(f"run directories: {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    missing = [
        f"{p.family}/{p.name}.png" for p in pictures if f"{p.family}/{p.name}.png" not in made
    ]
    print(f"{len(made)} pictures in {time.monotonic() - start:.0f} s")
    if missing:
        print(f"not made: {', '.join(missing)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

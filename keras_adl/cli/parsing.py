"""``keras-adl``'s parsers: the commands, and each task's options with its defaults.

Standard library only (and the families' specs): ``--help``, ``list`` and argument errors answer
before TensorFlow loads.
"""

import argparse

from keras_adl import recipes
from keras_adl.training.rundir import CHECKPOINT_EVERY

PROG = "keras-adl"
STRATEGIES = ("auto", "mirrored", "multi_worker", "default")
# Epochs of a run given --minutes and no --epochs, on a task that keeps its best epoch.
EPOCHS_UNDER_A_BUDGET = 10_000


class CLIError(Exception):
    """An error reported to the user as one line."""


class _DefaultsHelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends ``(default: …)`` only where the help does not already say it and there is a
    default to show (not ``None``, ``""`` or a flag's ``False``)."""

    def _get_help_string(self, action):
        text = action.help or ""
        default = action.default
        if "(default" in text or default is None or default is False or default == "":
            return text
        return super()._get_help_string(action)


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{PROG}: error: {message}\n")


def _task_lines():
    return "\n".join(
        f"  {task.name:<20} {', '.join(task.models):<45} {task.description}"
        for family in recipes.families()
        for task in family.tasks
    )


def parser():
    parser = _Parser(
        prog=PROG,
        description="Train, tune, export and serve keras-adl models.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="`keras-adl list` shows every task with its models and defaults; "
        "`keras-adl train TASK --help` a task's own options.",
    )
    parser.add_argument(
        "--verbose", action="store_true", help="show TensorFlow's start-up and runtime logs"
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    commands.add_parser("list", help="every task: its models, description and defaults")
    for command, text in (
        ("train", "train a model on a task"),
        ("tune", "random search over a model's hyperparameters"),
    ):
        sub = commands.add_parser(
            command,
            help=text,
            description=f"{text}. Tasks (models, the first is the default):\n" + _task_lines(),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        sub.add_argument("task", help="a task name (see `keras-adl list`)")
        sub.add_argument(
            "rest",
            nargs=argparse.REMAINDER,
            help=f"the task's options; see `{PROG} {command} TASK --help`",
        )
    export = commands.add_parser("export", help="export a trained run as a SavedModel")
    export.add_argument("run_dir", help="a directory written by `keras-adl train`")
    export.add_argument("export_dir", help="where to write the SavedModel (must not exist)")
    export.add_argument(
        "--beam-width",
        type=int,
        default=1,
        help="beam search width of exported decoders (1: greedy)",
    )
    evaluate = commands.add_parser(
        "evaluate", help="score a trained or exported pairs model on a file of pairs"
    )
    evaluate.add_argument("path", help="a run directory (`train`) or an export (`export`)")
    evaluate.add_argument(
        "data", help="source<TAB>target file, .po/.mo catalog or gettext:LANG, as --data"
    )
    predict = commands.add_parser("predict", help="run an exported SavedModel on raw inputs")
    predict.add_argument("export_dir", help="a directory written by `keras-adl export`")
    predict.add_argument(
        "inputs", nargs="+", help="raw inputs: strings, bit vectors, image or text files"
    )
    sampling = predict.add_argument_group(
        "generation (a pretrain_lm export; without these, greedy continuation)"
    )
    for flag, kind, text in (
        ("--temperature", float, "softmax temperature of sampling (0: greedy)"),
        ("--top-k", int, "sample among the k likeliest pieces (0: all)"),
        ("--top-p", float, "sample within the nucleus of this probability (1: all)"),
        ("--seed", int, "the seed of the draws: a seed reproduces its text"),
        (
            "--max-new-tokens",
            int,
            "pieces generated after each prompt (0: up to the model's length)",
        ),
    ):
        sampling.add_argument(flag, type=kind, default=None, help=text)
    translate = commands.add_parser(
        "translate",
        help="fill a .po catalog's untranslated entries with a pairs export (marked fuzzy)",
    )
    translate.add_argument("export_dir", help="a pairs export (`keras-adl export`)")
    translate.add_argument("catalog", help="the .po file to translate")
    translate.add_argument(
        "-o", "--output", required=True, help="the .po file to write (may be the catalog)"
    )
    return parser


# (option, default, check, what it must be) of `keras-adl predict`'s generation settings.
SAMPLING = (
    ("temperature", 0.0, lambda v: v >= 0, "a number >= 0"),
    ("top_k", 0, lambda v: v >= 0, "an integer >= 0"),
    ("top_p", 1.0, lambda v: 0 < v <= 1, "a number in (0, 1]"),
    ("seed", 0, lambda v: True, "an integer"),
    ("max_new_tokens", 0, lambda v: v >= 0, "an integer >= 0"),
)


def sampling_settings(args):
    """The generation settings ``keras-adl predict`` was given, checked.

    Args:
        args: the parsed ``predict`` arguments.

    Returns:
        ``{name: value}`` of the five settings (the defaults of those not given), or ``None``
        when none was given.

    Raises:
        CLIError: a setting out of its range (one line).
    """
    given = {name: getattr(args, name, None) for name, *_ in SAMPLING}
    if all(value is None for value in given.values()):
        return None
    settings = {}
    for name, default, check, what in SAMPLING:
        value = default if given[name] is None else given[name]
        if not check(value):
            flag = "--" + name.replace("_", "-")
            raise CLIError(f"{flag} must be {what}; received {value}")
        settings[name] = value
    return settings


def task_parser(command, family, task):
    """The parser of ``keras-adl train|tune TASK``: the common options with the task's
    defaults, and the task's own options."""
    train = command == "train"
    parser = _Parser(
        prog=f"{PROG} {command} {task.name}",
        description=f"{task.description} ({family.name} family).",
        formatter_class=_DefaultsHelpFormatter,
    )
    parser.add_argument(
        "--model", choices=None, default=task.models[0], help=f"one of {', '.join(task.models)}"
    )
    epochs = task.epochs if train else task.tune_epochs
    unbounded = train and task.held_out
    parser.add_argument(
        "--epochs",
        type=int,
        default=None,
        help=f"passes over the training data (default: {epochs}"
        + ("; with --minutes, as many as the time allows" if unbounded else "")
        + ")",
    )
    parser.add_argument(
        "--samples",
        type=int,
        default=task.samples if train else task.tune_samples,
        help="training examples (the memory tasks draw this many fresh sequences every epoch)",
    )
    for option in task.options:
        parser.add_argument(
            option.flag,
            type=option.type if option.type in (int, float) else str,
            default=option.default,
            required=option.required,
            choices=option.choices,
            help=option.help.replace("%", "%%"),  # argparse formats help with %
        )
    parser.add_argument(
        "--out", required=True, help="run directory" if train else "tuner directory"
    )
    if train:
        _train_options(parser, task)
    else:
        parser.add_argument("--trials", type=int, default=4, help="models tried")
    return parser


def _train_options(parser, task):
    """The options of ``train`` alone."""
    parser.add_argument(
        "--batch-size",
        type=int,
        default=None,
        help=f"examples per training step (default: {_batch_size_help(task)})",
    )
    parser.add_argument("--strategy", default="auto", help=" | ".join(STRATEGIES))
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=None,
        help="steps between mid-epoch checkpoints (an interrupted run resumes from the last "
        f"one; default: {task.checkpoint_every or CHECKPOINT_EVERY})",
    )
    parser.add_argument(
        "--learning-rate",
        type=float,
        default=None,
        help="the optimizer's peak learning rate (default: the recipe's, which `run.json` "
        "records; a schedule keeps its shape); a diverged run resumes from its last "
        "finite checkpoint with a lower one",
    )
    if task.held_out:
        patience = (
            "stop after this many epochs without a better held-out loss; the best "
            "epoch's weights become the model (they are kept with or without it)"
        )
    else:
        patience = f"not for {task.name}: it has no held-out split (use --minutes)"
    parser.add_argument("--patience", type=int, default=None, help=patience)
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="stop once this much training time is spent (counted across resumes, "
        "checked where checkpoints are written); on pairs the learning rate also decays "
        "linearly to zero over it",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seed of the initial weights, dropout and data order (reproducible runs)",
    )
    parser.add_argument(
        "--collective-timeout",
        type=int,
        default=None,
        help="with --strategy multi_worker: seconds after which an all-reduce that has not "
        "completed fails the run (a worker alive but stuck); dead workers are detected "
        "within about 10 s without it",
    )
    parser.add_argument(
        "--keep-checkpoints",
        type=int,
        default=2,
        help="complete checkpoints kept in --out/backup during training",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="delete the run that --out holds and start fresh",
    )


def _batch_size_help(task):
    by_model = ", ".join(f"{model} {size}" for model, size in task.model_batch_sizes)
    return f"{task.batch_size}" + (f"; {by_model}" if by_model else "")


def positive(flag, value):
    if value is not None and value <= 0:
        raise CLIError(f"{flag} must be a positive integer; received {value}")


def check_options(task, args):
    """The task's own option values, each checked (`Option.check`)."""
    return {o.dest: o.check(getattr(args, o.dest), task.name) for o in task.options}


def parse_task_command(command, argv):
    """``(task, model, args, options)`` of ``train|tune TASK …``."""
    task_name, rest = argv[0], argv[1:]
    try:
        family, task, _ = recipes.find(task_name)
    except ValueError as error:
        raise CLIError(str(error)) from None
    args = task_parser(command, family, task).parse_args(rest)
    try:
        _, _, model = recipes.find(task_name, args.model)
    except ValueError as error:
        raise CLIError(str(error)) from None
    for flag in (
        "epochs",
        "samples",
        "batch_size",
        "checkpoint_every",
        "keep_checkpoints",
        "collective_timeout",
        "trials",
    ):
        positive("--" + flag.replace("_", "-"), getattr(args, flag, None))
    if args.epochs is None:
        minutes = getattr(args, "minutes", None)
        if command == "train" and minutes and task.held_out:
            args.epochs = EPOCHS_UNDER_A_BUDGET  # the time budget (and --patience) ends it
        else:
            args.epochs = task.epochs if command == "train" else task.tune_epochs
    if command == "train":
        try:
            recipes.check_run_options(task, args.learning_rate, args.patience, args.minutes)
        except ValueError as error:
            raise CLIError(str(error)) from None
    if getattr(args, "batch_size", 0) is None:
        args.batch_size = task.batch_size_of(model)
    if command == "tune" and not task.tunable:
        raise CLIError(f"tune runs on the generated and bundled tasks, not on {task.name!r}")
    return task, model, args, check_options(task, args)

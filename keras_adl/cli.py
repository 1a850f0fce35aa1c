"""``keras-adl``: list, train, tune, export and serve keras-adl models from the command line.

    keras-adl list                                  # every task, its models and defaults
    keras-adl train dates --out runs/dates          # the task's default model and settings
    keras-adl train copy --model dnc --epochs 3 --out runs/copy
    keras-adl train dates --help                    # a task's own options and defaults
    keras-adl tune dates --trials 4 --out runs/tune
    keras-adl export runs/dates exports/dates
    keras-adl predict exports/dates "3 May 1998" "12/31/1999"
    keras-adl evaluate exports/fr held_out.tsv       # BLEU, chrF, exact match of a pairs model
    TF_CONFIG='{...}' keras-adl train copy --strategy multi_worker --out runs/copy  # each worker

The tasks, their models and settings live in the recipes (`keras_adl.recipes`); this module
parses arguments and loops over them. Arguments are checked before TensorFlow is imported, and
errors print one line ``keras-adl: error: …`` with exit status 1 (2 for bad command-line
syntax, and for an optional dependency that is not installed: the line names the extra to
install; 75 when a worker of a multi-worker run was lost: start the same command again on
every worker to resume). TensorFlow's start-up logs are silenced unless ``--verbose`` is given.
"""

import argparse
import json
import os
import sys

from keras_adl import recipes
from keras_adl.extras import MissingExtra, require_spec
from keras_adl.recipes.base import (
    CHECKPOINT_EVERY,
    MODEL_FILE,
    RUN_FILE,
    TASK_FILE,
    RecipeError,
    check_run_dir,
    read_run_or_export,
)

PROG = "keras-adl"
STRATEGIES = ("auto", "mirrored", "multi_worker", "default")
# Epochs of a run given --minutes and no --epochs, on a task that keeps its best epoch.
EPOCHS_UNDER_A_BUDGET = 10_000
# Exit status of a worker whose peer was lost: start the same command on every worker again.
WORKER_LOST = 75


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
        for recipe in recipes.recipes()
        for task in recipe.tasks
    )


def _parser():
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
    return parser


def _task_parser(command, recipe, task):
    """The parser of ``keras-adl train|tune TASK``: the common options with the task's
    defaults, and the task's own options."""
    train = command == "train"
    parser = _Parser(
        prog=f"{PROG} {command} {task.name}",
        description=f"{task.description} ({recipe.family} family).",
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
            help=option.help,
        )
    parser.add_argument(
        "--out", required=True, help="run directory" if train else "tuner directory"
    )
    if train:
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
            default=CHECKPOINT_EVERY,
            help="steps between mid-epoch checkpoints (an interrupted run "
            "resumes from the last one)",
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
    else:
        parser.add_argument("--trials", type=int, default=4, help="models tried")
    return parser


_VERBOSE = [False]


def _load_tensorflow(multi_worker=False, collective_timeout=None):
    """Imports TensorFlow (and registers keras-adl's classes), with its start-up logs silenced
    unless ``--verbose``: the absl lines it prints before logging is set up ignore
    ``TF_CPP_MIN_LOG_LEVEL``, so standard error is pointed at /dev/null meanwhile. With
    ``multi_worker``, the ``MultiWorkerMirroredStrategy`` is created first (TensorFlow must
    configure collectives before it runs anything); this waits for every worker."""
    if _VERBOSE[0]:
        _start_tensorflow(multi_worker, collective_timeout)
        return
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        _start_tensorflow(multi_worker, collective_timeout)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _start_tensorflow(multi_worker, collective_timeout=None):
    if multi_worker:
        from keras_adl.training.distribute import multi_worker_strategy

        multi_worker_strategy(collective_timeout=collective_timeout)
    else:
        import tensorflow as tf

        tf.config.list_logical_devices()  # device start-up logs (no CUDA driver, say)
    import keras_adl._registry  # noqa: F401  (the classes a saved model may hold)


def _batch_size_help(task):
    by_model = ", ".join(f"{model} {size}" for model, size in task.model_batch_sizes)
    return f"{task.batch_size}" + (f"; {by_model}" if by_model else "")


def _positive(flag, value):
    if value is not None and value <= 0:
        raise CLIError(f"{flag} must be a positive integer; received {value}")


def _check_options(task, args):
    """The task's own option values, each checked (`Option.check`)."""
    return {o.dest: o.check(getattr(args, o.dest), task.name) for o in task.options}


def _parse_task_command(command, argv):
    """``(recipe, task, model, args, options)`` of ``train|tune TASK …``."""
    task_name, rest = argv[0], argv[1:]
    try:
        recipe, task, _ = recipes.find(task_name)
    except ValueError as error:
        raise CLIError(str(error)) from None
    args = _task_parser(command, recipe, task).parse_args(rest)
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
        _positive("--" + flag.replace("_", "-"), getattr(args, flag, None))
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
    return recipe, task, model, args, _check_options(task, args)


def _list():
    for recipe in recipes.recipes():
        print(f"{recipe.family}: {recipe.description}")
        for task in recipe.tasks:
            defaults = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in task.defaults().items())
            print(f"  {task.name:<20} {task.description}")
            print(f"  {'':<20} models: {', '.join(task.models)} (default {task.models[0]})")
            print(f"  {'':<20} defaults: {defaults}")
            for model, size in task.model_batch_sizes:
                print(f"  {'':<20} {model}: --batch-size {size}")


def _train(argv):
    recipe, task, model, args, options = _parse_task_command("train", argv)
    if args.strategy not in STRATEGIES:
        raise CLIError(
            f"--strategy must be one of {', '.join(STRATEGIES)}; received {args.strategy!r}"
        )
    settings = dict(
        epochs=args.epochs, batch_size=args.batch_size, samples=args.samples, options=options
    )
    chief = True
    if args.strategy == "multi_worker":
        from keras_adl.training.cluster import ClusterError, is_chief, read_tf_config

        try:
            chief = is_chief(read_tf_config())
        except ClusterError as error:
            raise CLIError(str(error)) from None
    # Checked here too, so that a refused --out answers before TensorFlow loads (on the chief:
    # the other workers only read --out).
    resume = chief and check_run_dir(args.out, task.name, model, settings, args.overwrite)
    if args.collective_timeout and args.strategy != "multi_worker":
        raise CLIError("--collective-timeout needs --strategy multi_worker")
    _load_tensorflow(
        multi_worker=args.strategy == "multi_worker", collective_timeout=args.collective_timeout
    )
    if resume:
        print(f"resuming the interrupted run in {args.out} (--overwrite starts fresh)")
    try:
        recipes.train(
            task.name,
            args.out,
            model,
            args.epochs,
            args.batch_size,
            args.samples,
            strategy=args.strategy,
            checkpoint_every=args.checkpoint_every,
            keep_checkpoints=args.keep_checkpoints,
            seed=args.seed,
            learning_rate=args.learning_rate,
            patience=args.patience,
            minutes=args.minutes,
            **options,
        )
    except Exception as error:
        from keras_adl.training.distribute import is_worker_failure

        if args.strategy != "multi_worker" or not is_worker_failure(error):
            raise
        raise WorkerLost(
            f"lost contact with another worker ({type(error).__name__}: "
            f"{_first_line(error)}); the last complete checkpoint is in "
            f"{os.path.join(args.out, 'backup')}: start the same command on every worker again "
            f"to resume from it"
        ) from None


def _first_line(error):
    lines = [line for line in str(error).splitlines() if line.strip()]
    return lines[0][:200] if lines else ""


class WorkerLost(Exception):
    """A multi-worker run lost a worker (exit status `WORKER_LOST`)."""


def _tune(argv):
    recipe, task, model, args, options = _parse_task_command("tune", argv)
    require_spec("keras_tuner", "tuner", f"{PROG} tune")  # before TensorFlow loads
    _load_tensorflow()
    recipe.tune(task.name, model, args.trials, args.epochs, args.samples, args.out, options)


def _export(args):
    _positive("--beam-width", args.beam_width)
    run_file = os.path.join(args.run_dir, RUN_FILE)
    model_file = os.path.join(args.run_dir, MODEL_FILE)
    for path in (run_file, model_file):
        if not os.path.isfile(path):
            raise CLIError(
                f"{path} not found; is {args.run_dir!r} a directory written by `{PROG} train`?"
            )
    if os.path.exists(args.export_dir):
        raise CLIError(f"export directory {args.export_dir!r} already exists; choose a new one")
    with open(run_file) as f:
        run = json.load(f)
    try:
        recipe = recipes.find(run["task"], run["model"])[0]
    except (KeyError, ValueError):
        raise CLIError(
            f"{run_file} names no known task and model; is {args.run_dir!r} a "
            f"finished run of `{PROG} train`?"
        ) from None
    _load_tensorflow()
    import keras

    model = keras.saving.load_model(model_file)
    recipe.export(args.run_dir, run, model, args.export_dir, beam_width=args.beam_width)
    print(f"exported {args.run_dir} to {args.export_dir}")


def _predict(args):
    if not os.path.isfile(os.path.join(args.export_dir, "saved_model.pb")):
        raise CLIError(f"no SavedModel in {args.export_dir!r}")
    task_file = os.path.join(args.export_dir, TASK_FILE)
    if not os.path.isfile(task_file):
        raise CLIError(
            f"{args.export_dir!r} holds no {TASK_FILE}; was it written by `{PROG} export`?"
        )
    with open(task_file) as f:
        task_info = json.load(f)
    try:
        recipe = recipes.find(task_info["task"])[0]
    except (KeyError, ValueError):
        raise CLIError(f"{task_file} names no known task") from None
    _load_tensorflow()
    recipe.predict(args.export_dir, args.inputs, task_info)


def _evaluate(args):
    info, is_run = read_run_or_export(args.path)
    try:
        recipe = recipes.find(info["task"])[0]
    except (KeyError, ValueError):
        raise CLIError(f"{args.path!r} names no known task") from None
    if info["task"] not in recipe.evaluate_tasks:
        raise CLIError(
            f"evaluate scores models on your own data ({', '.join(recipes.evaluate_tasks())}); "
            f"the figures of {info['task']!r} are in its run's {RUN_FILE}"
        )
    if not args.data.startswith("gettext:") and not os.path.exists(args.data):
        raise CLIError(f"data {args.data!r} not found")
    _load_tensorflow()
    print(json.dumps(recipe.evaluate_file(args.path, info, is_run, args.data), indent=1))


def main(argv=None):
    """Entry point of the ``keras-adl`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv[:1]
    _VERBOSE[0] = verbose
    if not verbose:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    rest = argv[1:] if verbose else argv
    try:
        if len(rest) >= 2 and rest[0] in ("train", "tune") and not rest[1].startswith("-"):
            (_train if rest[0] == "train" else _tune)(rest[1:])
            return 0
        args = _parser().parse_args(argv)
        if args.command == "list":
            _list()
        elif args.command in ("train", "tune"):  # a task name starting with "-"
            raise CLIError(f"unknown task {args.task!r}")
        elif args.command == "export":
            _export(args)
        elif args.command == "evaluate":
            _evaluate(args)
        else:
            _predict(args)
    except SystemExit as exit_:  # argparse: --help (0) or bad syntax (2), already printed
        return exit_.code
    except WorkerLost as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return WORKER_LOST
    except MissingExtra as error:  # names the extra to install
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 2
    except (
        CLIError,
        RecipeError,
        FileExistsError,
        FileNotFoundError,
        ImportError,
        ValueError,
    ) as error:
        print(f"{PROG}: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

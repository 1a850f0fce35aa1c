"""``keras-adl``: list, train, tune, export and serve keras-adl models from the command line.

    keras-adl list                                  # every task, its models and defaults
    keras-adl train dates --out runs/dates          # the task's default model and settings
    keras-adl train copy --model dnc --epochs 3 --out runs/copy
    keras-adl train dates --help                    # a task's own options and defaults
    keras-adl tune dates --trials 4 --out runs/tune
    keras-adl export runs/dates exports/dates
    keras-adl predict exports/dates "3 May 1998" "12/31/1999"
    keras-adl evaluate exports/fr held_out.tsv       # BLEU, chrF, exact match of a pairs model
    keras-adl translate exports/fr po/fr.po -o po/fr.po  # untranslated entries filled, fuzzy
    TF_CONFIG='{...}' keras-adl train copy --strategy multi_worker --out runs/copy  # each worker

The tasks, their models and settings live in the recipes (`keras_adl.recipes`); this module
parses arguments and loops over them. Arguments are checked before TensorFlow is imported, and
errors print one line ``keras-adl: error: …`` with exit status 1 (2 for bad command-line
syntax, and for an optional dependency that is not installed: the line names the extra to
install; 75 when a worker of a multi-worker run was lost: start the same command again on
every worker to resume). TensorFlow's start-up logs are silenced unless ``--verbose`` is given.
"""

import os
import sys

from keras_adl import recipes  # noqa: F401  (tests replace recipes.train through it)
from keras_adl.cli import commands
from keras_adl.cli.parsing import EPOCHS_UNDER_A_BUDGET, PROG, CLIError, parse_task_command, parser
from keras_adl.extras import MissingExtra
from keras_adl.training.rundir import RecipeError

__all__ = ["EPOCHS_UNDER_A_BUDGET", "WORKER_LOST", "CLIError", "main", "parse_task_command"]

# Exit status of a worker whose peer was lost: start the same command on every worker again.
WORKER_LOST = 75


def main(argv=None):
    """Entry point of the ``keras-adl`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "--verbose" in argv[:1]
    commands.VERBOSE[0] = verbose
    if not verbose:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    rest = argv[1:] if verbose else argv
    if not rest:  # bare `keras-adl`: what to type, not only that a command is missing
        parser().print_help()
        return 2
    try:
        if len(rest) >= 2 and rest[0] in ("train", "tune") and not rest[1].startswith("-"):
            (commands.train if rest[0] == "train" else commands.tune)(rest[1:])
            return 0
        args = parser().parse_args(argv)
        if args.command == "list":
            commands.list_tasks()
        elif args.command in ("train", "tune"):  # a task name starting with "-"
            raise CLIError(f"unknown task {args.task!r}")
        elif args.command == "export":
            commands.export(args)
        elif args.command == "evaluate":
            commands.evaluate(args)
        elif args.command == "translate":
            commands.translate(args)
        else:
            commands.predict(args)
    except SystemExit as exit_:  # argparse: --help (0) or bad syntax (2), already printed
        return exit_.code
    except commands.WorkerLost as error:
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

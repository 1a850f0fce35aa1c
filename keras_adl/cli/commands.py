"""``keras-adl``'s commands, each once its arguments are checked: TensorFlow loads here."""

import json
import os
import sys

from keras_adl import recipes
from keras_adl.cli.parsing import (
    PROG,
    STRATEGIES,
    CLIError,
    parse_task_command,
    positive,
    sampling_settings,
)
from keras_adl.extras import require_spec
from keras_adl.training.rundir import (
    MODEL_FILE,
    RUN_FILE,
    TASK_FILE,
    check_run_dir,
    read_run_or_export,
)

VERBOSE = [False]


def load_tensorflow(multi_worker=False, collective_timeout=None):
    """Imports TensorFlow (and registers keras-adl's classes), with its start-up logs silenced
    unless ``--verbose``: the absl lines it prints before logging is set up ignore
    ``TF_CPP_MIN_LOG_LEVEL``, so standard error is pointed at /dev/null meanwhile. With
    ``multi_worker``, the ``MultiWorkerMirroredStrategy`` is created first (TensorFlow must
    configure collectives before it runs anything); this waits for every worker."""
    if VERBOSE[0]:
        start_tensorflow(multi_worker, collective_timeout)
        return
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        start_tensorflow(multi_worker, collective_timeout)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def start_tensorflow(multi_worker, collective_timeout=None):
    if multi_worker:
        from keras_adl.training.distribute import multi_worker_strategy

        multi_worker_strategy(collective_timeout=collective_timeout)
    else:
        import tensorflow as tf

        tf.config.list_logical_devices()  # device start-up logs (no CUDA driver, say)
    import keras_adl.registry  # noqa: F401  (the classes a saved model may hold)


def list_tasks():
    for family in recipes.families():
        print(f"{family.name}: {family.description}")
        for task in family.tasks:
            defaults = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in task.defaults().items())
            print(f"  {task.name:<20} {task.description}")
            print(f"  {'':<20} models: {', '.join(task.models)} (default {task.models[0]})")
            print(f"  {'':<20} defaults: {defaults}")
            for model, size in task.model_batch_sizes:
                print(f"  {'':<20} {model}: --batch-size {size}")


def train(argv):
    task, model, args, options = parse_task_command("train", argv)
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
    load_tensorflow(
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
            checkpoint_every=args.checkpoint_every or "task",
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


def tune(argv):
    task, model, args, options = parse_task_command("tune", argv)
    require_spec("keras_tuner", "tuner", f"{PROG} tune")  # before TensorFlow loads
    load_tensorflow()
    recipe = recipes.recipe_for(task.name)
    recipe.tune(model, args.trials, args.epochs, args.samples, args.out, options)


def export(args):
    positive("--beam-width", args.beam_width)
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
        recipes.find(run["task"], run["model"])
    except (KeyError, ValueError):
        raise CLIError(
            f"{run_file} names no known task and model; is {args.run_dir!r} a "
            f"finished run of `{PROG} train`?"
        ) from None
    load_tensorflow()
    import keras

    model = keras.saving.load_model(model_file)
    recipes.recipe_for(run["task"]).export(
        args.run_dir, run, model, args.export_dir, beam_width=args.beam_width
    )
    print(f"exported {args.run_dir} to {args.export_dir}")


def predict(args):
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
        recipes.find(task_info["task"])
    except (KeyError, ValueError):
        raise CLIError(f"{task_file} names no known task") from None
    sampling = sampling_settings(args)
    load_tensorflow()
    recipe = recipes.recipe_for(task_info["task"])
    if sampling is not None:
        if not recipe.generates:
            raise CLIError(
                f"--temperature, --top-k, --top-p, --seed and --max-new-tokens set how a "
                f"pretrain_lm export generates; {args.export_dir!r} is a "
                f"{task_info['task']} export"
            )
        task_info = {**task_info, "sampling": sampling}
    recipe.predict(args.export_dir, args.inputs, task_info)


def evaluate(args):
    info, is_run = read_run_or_export(args.path)
    try:
        family = recipes.find(info["task"])[0]
    except (KeyError, ValueError):
        raise CLIError(f"{args.path!r} names no known task") from None
    if info["task"] not in family.evaluate_tasks:
        raise CLIError(
            f"evaluate scores models on your own data ({', '.join(recipes.evaluate_tasks())}); "
            f"the figures of {info['task']!r} are in its run's {RUN_FILE}"
        )
    if not args.data.startswith("gettext:") and not os.path.exists(args.data):
        raise CLIError(f"data {args.data!r} not found")
    load_tensorflow()
    figures = recipes.recipe_for(info["task"]).evaluate_file(args.path, info, is_run, args.data)
    print(json.dumps(figures, indent=1))


def translate(args):
    """``keras-adl translate EXPORT CATALOG -o OUT``: the catalog's untranslated entries
    filled by a ``pairs`` export, marked fuzzy (`keras_adl.recipes.sequences.translate`)."""
    task_file = os.path.join(args.export_dir, TASK_FILE)
    if not os.path.isfile(os.path.join(args.export_dir, "saved_model.pb")) or not os.path.isfile(
        task_file
    ):
        raise CLIError(f"{args.export_dir!r} is not a directory written by `{PROG} export`")
    with open(task_file) as f:
        task = json.load(f).get("task")
    if task != "pairs":
        raise CLIError(f"translate needs a pairs export; {args.export_dir!r} is a {task} export")
    if not os.path.isfile(args.catalog):
        raise CLIError(f"catalog {args.catalog!r} not found")
    if not args.catalog.endswith(".po") or not args.output.endswith(".po"):
        raise CLIError(
            f"translate reads and writes .po files; received {args.catalog!r} -> {args.output!r}"
        )
    load_tensorflow()
    from keras_adl.recipes.sequences.translate import export_translator, translate_catalog

    counts = translate_catalog(args.catalog, args.output, export_translator(args.export_dir))
    print(
        f"{args.output}: {counts['translated']} entries translated and {counts['copied']} "
        f"given the English (a translation that lost format directives, or none), all marked "
        f"fuzzy for review; {counts['kept']} translations kept as they were"
    )
    if counts["byte_order_mark_dropped"]:
        print(f"{args.output}: written without the catalog's byte-order mark (msgfmt refuses one)")

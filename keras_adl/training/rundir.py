"""The run directory: what ``keras-adl train`` writes, how a run is resumed or refused, and the
one error type every request reports as a line.

Standard library only, so that the command line checks ``--out`` before TensorFlow loads.

A run directory holds `RUN_FILE` (the request, its settings and, once finished, its figures),
`MODEL_FILE`, the family's files (a tokenizer, a vocabulary) and pictures, and while training
`BACKUP_DIR` (the checkpoints `keras_adl.training.fit` resumes from). An export holds the
SavedModel and `TASK_FILE`.
"""

import errno
import json
import os
import shutil
import tempfile

__all__ = [
    "RecipeError",
    "check_run_dir",
    "read_run_file",
    "read_run_or_export",
    "write_json",
    "write_task_file",
    "replace_atomically",
    "copy_file",
    "RUN_FILE",
    "MODEL_FILE",
    "BACKUP_DIR",
    "TASK_FILE",
]


RUN_FILE = "run.json"
MODEL_FILE = "model.keras"
BACKUP_DIR = "backup"
# Written beside an exported SavedModel: which task and model it serves (read by `predict`).
TASK_FILE = "keras_adl_task.json"
# Steps between mid-epoch checkpoints (``--checkpoint-every``), unless the task sets its own.
CHECKPOINT_EVERY = 200


class RecipeError(ValueError):
    """A problem with the user's request, reported as one line (no traceback)."""


def _given(value):
    """A run setting as a resume compares it: of a dict of options, those given (an option
    left unset matches a run recorded before the option existed)."""
    if isinstance(value, dict):
        return {k: v for k, v in value.items() if v is not None}
    return value


def check_run_dir(out, task, model, settings, overwrite=False):
    """Refuses a run directory that holds another run, a finished run or other files (one
    line, saying how to start fresh); with ``overwrite`` deletes a previous run first (only a
    directory holding a keras-adl run, or an empty one).

    Args:
        out: the run directory.
        task: the name of the task of the run to start or resume.
        model: the name of its model.
        settings: what else must match for a resume (epochs, batch size, samples, the task's
            options), as `keras_adl.recipes.train` writes them into ``run.json``.
        overwrite: delete a previous run in ``out`` first.

    Returns:
        Whether ``out`` holds an interrupted run of the same task, model and settings, whose
        checkpoints `keras_adl.training.fit.fit` will resume from.

    Raises:
        RecipeError: ``out`` cannot be used.
    """
    run_file = os.path.join(out, RUN_FILE)
    if os.path.exists(out) and not os.path.isdir(out):
        raise RecipeError(f"--out {out!r} is a file; give a directory")
    if os.path.isdir(out) and os.listdir(out) and not os.path.isfile(run_file):
        raise RecipeError(
            f"--out {out!r} is not empty and holds no keras-adl run; choose another directory"
        )
    if overwrite and os.path.isdir(out):
        shutil.rmtree(out)
    if not os.path.isfile(run_file):
        return False
    with open(run_file) as f:
        previous = json.load(f)
    fresh = "pass --overwrite to start fresh or choose another --out"
    if (previous.get("task"), previous.get("model")) != (task, model):
        raise RecipeError(
            f"--out {out!r} holds a run of task {previous.get('task')!r} with model "
            f"{previous.get('model')!r}; {fresh}"
        )
    changed = sorted(k for k, v in settings.items() if _given(previous.get(k)) != _given(v))
    if changed:
        before = ", ".join(f"{k}={previous.get(k)!r}" for k in changed)
        raise RecipeError(f"--out {out!r} holds a run of {task!r} with {before}; {fresh}")
    if previous.get("status") != "training":
        raise RecipeError(f"--out {out!r} holds a finished run of {task!r}; {fresh}")
    return os.path.isdir(os.path.join(out, BACKUP_DIR))


def replace_atomically(path, suffix, write):
    """Calls ``write(partial)`` on a temporary name beside ``path``, then renames it to
    ``path``: ``path`` is complete or absent, whenever the process is killed."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, partial = tempfile.mkstemp(prefix=".partial-", suffix=suffix, dir=directory)
    os.close(fd)
    try:
        write(partial)
        os.replace(partial, path)
    finally:
        if os.path.exists(partial):
            os.remove(partial)


def write_json(path, value):
    """Writes ``value`` as JSON to ``path`` atomically."""

    def write(partial):
        with open(partial, "w") as f:
            json.dump(value, f, indent=2)

    replace_atomically(path, ".json", write)


def read_run_or_export(path):
    """``(info, is_run)``: the ``run.json`` of a run directory (``is_run``) or the task file of
    an export.

    Args:
        path: a run directory or an export.

    Returns:
        ``(info, is_run)``: a dict and a bool.

    Raises:
        RecipeError: ``path`` is neither.
    """
    for name, is_run in ((RUN_FILE, True), (TASK_FILE, False)):
        if os.path.isfile(os.path.join(path, name)):
            with open(os.path.join(path, name)) as f:
                return json.load(f), is_run
    raise RecipeError(
        f"{path!r} is neither a run of `keras-adl train` nor an export of `keras-adl export`"
    )


def read_run_file(path, *names):
    """The first of ``names`` that exists in the directory ``path``, parsed as JSON: a file
    renamed in a later version (``vocab.json`` → ``tokenizer.json``) is read under both.

    Args:
        path: a directory.
        *names: file names, the current one first.

    Returns:
        The parsed JSON.

    Raises:
        FileNotFoundError: none of them exists (naming the first).
    """
    for name in names:
        if os.path.isfile(os.path.join(path, name)):
            with open(os.path.join(path, name), encoding="utf-8") as f:
                return json.load(f)
    missing = os.path.join(path, names[0])
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), missing)


def write_task_file(export_dir, **info):
    """Writes `TASK_FILE` beside an exported SavedModel (``predict`` reads it)."""
    with open(os.path.join(export_dir, TASK_FILE), "w") as f:
        json.dump(info, f)


def copy_file(run_dir, name, export_dir):
    """Copies a run file (a tokenizer, say) into the export directory."""
    shutil.copy(os.path.join(run_dir, name), os.path.join(export_dir, name))

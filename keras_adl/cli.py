"""``keras-adl``: train, tune, export and serve keras-adl models from the command line.

    keras-adl train dates --model attention_seq2seq --epochs 3 --out runs/dates
    keras-adl tune dates --model attention_seq2seq --trials 4 --out runs/tune
    keras-adl export runs/dates exports/dates
    keras-adl predict exports/dates "3 May 1998" "12/31/1999"
    keras-adl train pairs --data my_pairs.tsv --out runs/mine   # your source<TAB>target file
    keras-adl train copy --model ntm --epochs 3 --out runs/copy    # NTM / DNC / LSTM
    keras-adl export runs/copy exports/copy
    keras-adl predict exports/copy 10110010 01100110 11110000   # the copied bit vectors
    keras-adl train translated_digits --model ram --epochs 150 --out runs/ram   # or ram_random
    keras-adl train cluttered_digits --data /usr/share/datasets/fashion-mnist --out runs/rc
    keras-adl train digit_strips --epochs 20 --out runs/captions   # Show, Attend and Tell
    keras-adl export runs/ram exports/ram
    keras-adl predict exports/ram digit.png              # class and glimpse path per image
    keras-adl train needle --epochs 3 --out runs/han     # Hierarchical Attention Network
    keras-adl train fortunes --epochs 10 --out runs/fortunes   # Debian's fortunes (make data)
    keras-adl train documents --data my_docs/ --out runs/docs  # <label>/<doc>.txt or label<TAB>text
    keras-adl export runs/han exports/han
    keras-adl predict exports/han "a raw document. with sentences." essay.txt

Errors (unknown names, missing files, an existing export directory, bad input) print one line
``keras-adl: error: …`` and exit with status 1 (2 for bad command-line syntax).
"""

import argparse
import json
import os
import sys

from keras_adl._cli_documents import DOCUMENT_TASKS
from keras_adl._cli_vision import VISION_TASKS

SEQ2SEQ = ("attention_seq2seq", "encoder_decoder", "transformer_seq2seq")
MEMORY = ("ntm", "dnc", "lstm")
MEMORY_TASKS = ("copy", "repeat_copy", "associative_recall", "priority_sort")
TASKS = {"dates": SEQ2SEQ, "pairs": SEQ2SEQ, "sort": ("pointer_network",),
         **{task: MEMORY for task in MEMORY_TASKS}, **VISION_TASKS, **DOCUMENT_TASKS}
DATE_MAX_LENGTH = 11


class CLIError(Exception):
    """An error reported to the user as one line."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"keras-adl: error: {message}\n")


def _parser():
    parser = _Parser(prog="keras-adl", description="Train, tune, export and serve keras-adl models.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    train = commands.add_parser("train", help="train a model on a task")
    train.add_argument("task", help=f"one of {sorted(TASKS)}")
    train.add_argument("--model", help="builder name (default: the task's first)")
    train.add_argument("--epochs", type=int, default=3)
    train.add_argument("--batch-size", type=int, default=None,
                       help="default 64 (32 for the memory tasks, the NTM/DNC recipe)")
    train.add_argument("--samples", type=int, default=20000,
                       help="training examples (for the memory tasks: fresh sequences per epoch)")
    train.add_argument("--strategy", default="auto", help="auto | mirrored | default")
    train.add_argument("--data", help="task 'pairs': a UTF-8 source<TAB>target file; digit tasks: "
                       "a directory of MNIST/Fashion-MNIST IDX files (default: sklearn's digits); "
                       "'documents': a <label>/<doc>.txt tree or a label<TAB>text file; "
                       "'fortunes': a fortunes directory (default: the installed one)")
    train.add_argument("--max-length", type=int, default=32,
                       help="task 'pairs': tokens kept per source and target")
    train.add_argument("--out", required=True, help="run directory")
    tune = commands.add_parser("tune", help="random search over a builder's hyperparameters")
    tune.add_argument("task")
    tune.add_argument("--model")
    tune.add_argument("--trials", type=int, default=4)
    tune.add_argument("--epochs", type=int, default=1)
    tune.add_argument("--samples", type=int, default=5000)
    tune.add_argument("--data", help="digit tasks: a directory of MNIST/Fashion-MNIST IDX files; "
                      "document tasks: as for train")
    tune.add_argument("--out", required=True)
    export = commands.add_parser("export", help="export a trained run as a SavedModel")
    export.add_argument("run_dir")
    export.add_argument("export_dir")
    export.add_argument("--beam-width", type=int, default=1)
    predict = commands.add_parser("predict", help="run an exported SavedModel on raw inputs")
    predict.add_argument("export_dir")
    predict.add_argument("inputs", nargs="+")
    return parser


def _resolve(task, model):
    if task not in TASKS:
        raise CLIError(f"unknown task {task!r}; choose one of {sorted(TASKS)}")
    model = model or TASKS[task][0]
    if model not in TASKS[task]:
        raise CLIError(f"unknown model {model!r} for task {task!r}; choose one of {list(TASKS[task])}")
    return task, model


def _positive(name, value):
    if value <= 0:
        raise CLIError(f"--{name} must be a positive integer; received {value}")


def _task_data(task, samples, seed):
    """(inputs dict, targets) for a task."""
    if task == "dates":
        from keras_adl.tasks.dates import date_arrays

        data = date_arrays(samples, seed=seed)
        return {"source": data["source"], "decoder_input": data["decoder_input"]}, data["target"], data
    from keras_adl.tasks.sorting import sort_arrays

    data = sort_arrays(samples, length=10, seed=seed)
    return {"inputs": data["inputs"], "decoder_input": data["decoder_input"]}, data["target"], data


def _build(task, model_name, jit_compile, vocab_sizes=None):
    import keras

    from keras_adl import models
    from keras_adl.tasks.dates import SOURCE_VOCAB, TARGET_VOCAB
    from keras_adl.training.recipes import compile_for_training

    if task in ("dates", "pairs"):
        vocab_sizes = vocab_sizes or (len(SOURCE_VOCAB), len(TARGET_VOCAB))
        model = getattr(models, model_name)(*vocab_sizes)
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        learning_rate = 1e-3 if model_name == "transformer_seq2seq" else 3e-3
    else:
        model = models.pointer_network()
        loss = keras.losses.SparseCategoricalCrossentropy()
        learning_rate = 2e-3
    return compile_for_training(model, loss, learning_rate, jit_compile)


def _decode_fn(model_name):
    from keras_adl import models

    if model_name == "transformer_seq2seq":
        return models.transformer_greedy_decode
    return models.greedy_decode


def run_training(task, model_name, epochs, batch_size, samples, strategy, out, callbacks=(),
                 data=None, max_length=32):
    """Trains, evaluates, saves ``model.keras`` + ``run.json`` (+ ``vocab.json`` for text
    pairs) and a picture in ``out``.

    Returns:
        ``(model, history, metrics)``.
    """
    import keras

    from keras_adl.training.distribute import build_in_scope, get_strategy

    strategy = get_strategy(strategy)
    # XLA fails under MirroredStrategy on logical CPUs; compile only without distribution.
    jit = strategy.num_replicas_in_sync == 1
    run = {"task": task, "model": model_name, "epochs": epochs}
    if task in VISION_TASKS:
        from keras_adl import _cli_vision

        model, history, metrics = _cli_vision.train(
            task, model_name, epochs, batch_size or 64, samples, strategy, jit, out, callbacks,
            run, data)
        return _write_run(out, run, model, history, metrics)
    if task in DOCUMENT_TASKS:
        from keras_adl import _cli_documents

        model, history, metrics = _cli_documents.train(
            task, model_name, epochs, batch_size or 64, samples, strategy, jit, out, callbacks,
            run, data)
        return _write_run(out, run, model, history, metrics)
    if task in MEMORY_TASKS:
        return _train_memory(task, model_name, epochs, batch_size or 32, samples, strategy, jit,
                             out, callbacks, run)
    batch_size = batch_size or 64
    if task == "pairs":
        from keras_adl.tasks.text_pairs import load_text_pairs
        from keras_adl.text import TextPairTokenizer

        sources, targets = load_text_pairs(data)
        tokenizer = TextPairTokenizer.build(sources, targets)
        sizes = (len(tokenizer.source_vocabulary) + 4, len(tokenizer.target_vocabulary) + 4)
        os.makedirs(out, exist_ok=True)
        model = build_in_scope(strategy, _build, task, model_name, jit, sizes)
        batch_size = min(batch_size, len(sources))
        train = tokenizer.dataset(sources, targets, batch_size, max_length, max_length)
        fit_args = (train,)
        run["max_length"] = max_length
        with open(os.path.join(out, "vocab.json"), "w") as f:
            json.dump(tokenizer.to_config(), f)
    else:
        os.makedirs(out, exist_ok=True)
        model = build_in_scope(strategy, _build, task, model_name, jit)
        x, y, _ = _task_data(task, samples, seed=0)
        fit_args = (x, y)
    backup = keras.callbacks.BackupAndRestore(os.path.join(out, "backup"))
    history = model.fit(*fit_args, epochs=epochs, verbose=1,
                        batch_size=None if task == "pairs" else batch_size,
                        shuffle=task != "pairs",  # the text-pair dataset shuffles itself
                        callbacks=[backup, *callbacks])
    model.save(os.path.join(out, "model.keras"))
    if task == "pairs":
        metrics = _evaluate_pairs(model_name, model, tokenizer, sources, targets, max_length, out)
    else:
        metrics = _evaluate(task, model_name, model, out)
    return _write_run(out, run, model, history, metrics)


def _write_run(out, run, model, history, metrics):
    """Writes ``run.json`` with the metrics, prints them; returns ``(model, history, metrics)``."""
    run["metrics"] = metrics
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(run, f, indent=2)
    print(json.dumps(metrics))
    return model, history, metrics


def _train_memory(task, model_name, epochs, batch_size, samples, strategy, jit, out, callbacks,
                  run):
    """Trains an NTM / DNC / LSTM on an algorithmic task with fresh sequences every step."""
    import keras

    from keras_adl.models.memory import compile_memory_model, memory_sequence_model
    from keras_adl.tasks.algorithmic import task_dataset, task_dims
    from keras_adl.training.distribute import build_in_scope

    def build():
        return compile_memory_model(memory_sequence_model(*task_dims(task), cell=model_name),
                                    jit_compile=jit)

    os.makedirs(out, exist_ok=True)
    model = build_in_scope(strategy, build)
    steps = max(samples // batch_size, 1)
    train = task_dataset(task, batch_size, seed=0)
    backup = keras.callbacks.BackupAndRestore(os.path.join(out, "backup"))
    history = model.fit(train, steps_per_epoch=steps, epochs=epochs, verbose=1, shuffle=False,
                        callbacks=[backup, *callbacks])
    model.save(os.path.join(out, "model.keras"))
    return _write_run(out, run, model, history, _evaluate_memory(task, model_name, model, out))


def _evaluate_memory(task, model_name, model, out):
    """Held-out bit errors per sequence (and, for copy, at longer lengths) and a picture."""
    from keras_adl.tasks.algorithmic import TASKS

    held_out = TASKS[task](256, seed=1)
    result = model.evaluate(*held_out[:2], sample_weight=held_out[2], verbose=0,
                            return_dict=True)
    metrics = {"held_out_bit_errors_per_sequence": result["bit_errors"],
               "held_out_bits_per_sequence": result["bits_per_sequence"]}
    if task == "copy":
        for length in (30, 50):
            x, y, w = TASKS[task](64, length, length, seed=2)
            longer = model.evaluate(x, y, sample_weight=w, verbose=0, return_dict=True)
            metrics[f"bit_errors_per_sequence_length_{length}"] = longer["bit_errors"]
    if model_name != "lstm":
        from keras_adl.models.memory import addressing_model
        from keras_adl.plotting import plot_memory_addressing

        x, y, w = TASKS[task](1, seed=3)
        steps = int(w[0].nonzero()[0][-1]) + 1  # up to the last answer step
        outputs = addressing_model(model)(x[:, :steps])
        plot_memory_addressing(outputs["write_weights"][0], outputs["read_weights"][0],
                               os.path.join(out, "addressing.png"),
                               title=f"{model_name} on {task}: memory addressing")
    return metrics


def _evaluate(task, model_name, model, out):
    import keras
    import numpy as np

    from keras_adl.plotting import plot_attention

    _, _, test = _task_data(task, 500, seed=1)
    if task == "sort":
        from keras_adl.models import pointer_decode

        order, probabilities = pointer_decode(model, test["inputs"])
        order = keras.ops.convert_to_numpy(order)
        exact = float(np.mean(np.all(order == test["target"], axis=1)))
        plot_attention(keras.ops.convert_to_numpy(probabilities)[0],
                       [f"{v:.2f}" for v in test["inputs"][0, :, 0]],
                       [str(i) for i in order[0]], os.path.join(out, "attention.png"),
                       title="pointer distribution per output step")
        return {"held_out_fully_sorted": exact}
    from keras_adl.tasks.dates import TARGET_VOCAB

    tokens, attention, _ = _decode_fn(model_name)(model, test["source"], DATE_MAX_LENGTH)
    predictions = TARGET_VOCAB.decode(keras.ops.convert_to_numpy(tokens))
    exact = float(np.mean([p == t for p, t in zip(predictions, test["target_text"])]))
    plot_attention(keras.ops.convert_to_numpy(attention)[0], list(test["source_text"][0]),
                   list(predictions[0]) + ["</s>"], os.path.join(out, "attention.png"),
                   title=f"{model_name}: attention")
    for source, prediction in list(zip(test["source_text"], predictions))[:3]:
        print(f"  {source} -> {prediction}")
    return {"held_out_exact_match": exact}


def _evaluate_pairs(model_name, model, tokenizer, sources, targets, max_length, out):
    """Exact match on (up to 500 of) the training pairs: user data has no held-out split."""
    import keras
    import numpy as np
    import tensorflow as tf

    from keras_adl.plotting import plot_attention

    sources, targets = sources[:500], targets[:500]
    ids = tokenizer.encode_source(tf.constant(sources), max_length)
    tokens, attention, _ = _decode_fn(model_name)(model, ids, max_length)
    predictions = [p.decode() for p in tokenizer.decode_target(tokens).numpy()]
    exact = float(np.mean([p == t.lower() for p, t in zip(predictions, targets)]))
    source_tokens = sources[0].lower().split()
    plot_attention(keras.ops.convert_to_numpy(attention)[0], source_tokens,
                   predictions[0].split() + ["</s>"], os.path.join(out, "attention.png"),
                   title=f"{model_name}: attention")
    for source, prediction in list(zip(sources, predictions))[:3]:
        print(f"  {source} -> {prediction}")
    return {"train_exact_match": exact}


def _tune(args):
    import keras_tuner

    from keras_adl.tasks.dates import SOURCE_VOCAB, TARGET_VOCAB
    from keras_adl.training import tuning

    task, model_name = _resolve(args.task, args.model)
    if task == "pairs":
        raise CLIError("tune runs on the generated tasks, not on 'pairs'")
    if task in MEMORY_TASKS:
        return _tune_memory(args, task, model_name)
    if task in VISION_TASKS:
        return _tune_vision(args, task, model_name)
    if task in DOCUMENT_TASKS:
        from keras_adl import _cli_documents

        for name in ("trials", "epochs", "samples"):
            _positive(name, getattr(args, name))
        if task == "documents" and not args.data:
            raise CLIError("task 'documents' needs --data (a <label>/<doc>.txt tree or a "
                           "label<TAB>text file)")
        return _cli_documents.tune(args, model_name)
    if task == "sort":
        hypermodel = tuning.PointerNetworkHyperModel()
    elif model_name == "transformer_seq2seq":
        hypermodel = tuning.TransformerSeq2SeqHyperModel(len(SOURCE_VOCAB), len(TARGET_VOCAB))
    else:
        hypermodel = tuning.Seq2SeqHyperModel(len(SOURCE_VOCAB), len(TARGET_VOCAB))
    x, y, _ = _task_data(task, args.samples, seed=0)
    validation = _task_data(task, max(args.samples // 5, 64), seed=1)[:2]
    tuner = keras_tuner.RandomSearch(hypermodel, objective="val_loss", max_trials=args.trials,
                                     directory=args.out, project_name=f"{task}_{model_name}")
    _positive("trials", args.trials)
    tuner.search(x, y, validation_data=validation, epochs=args.epochs, batch_size=64, verbose=1)
    best = tuner.get_best_hyperparameters(1)[0]
    print(json.dumps({"best_hyperparameters": best.values}))


def _tune_memory(args, task, model_name):
    import keras_tuner

    from keras_adl.tasks.algorithmic import TASKS, task_dataset, task_dims
    from keras_adl.training.tuning import MemorySequenceHyperModel

    _positive("trials", args.trials)
    hypermodel = MemorySequenceHyperModel(*task_dims(task), cell=model_name)
    validation = TASKS[task](max(args.samples // 5, 64), seed=1)
    tuner = keras_tuner.RandomSearch(
        hypermodel, objective=keras_tuner.Objective("val_bit_errors", "min"),
        max_trials=args.trials, directory=args.out, project_name=f"{task}_{model_name}")
    tuner.search(task_dataset(task, 32, seed=0), steps_per_epoch=max(args.samples // 32, 1),
                 validation_data=validation, epochs=args.epochs, shuffle=False, verbose=1)
    best = tuner.get_best_hyperparameters(1)[0]
    print(json.dumps({"best_hyperparameters": best.values}))


def _tune_vision(args, task, model_name):
    import keras_tuner

    from keras_adl import _cli_vision
    from keras_adl.tasks.digits import DigitStrips, TranslatedDigits
    from keras_adl.training import tuning

    _positive("trials", args.trials)
    (train_x, train_y), (test_x, test_y) = _cli_vision.load_digits(args.data)
    train_x, train_y = train_x[: args.samples], train_y[: args.samples]
    size = int(train_x.shape[1])
    if task == "digit_strips":
        length = _cli_vision.CAPTION_LENGTH
        hypermodel = tuning.ShowAttendTellHyperModel(13, (size, length * size, 1))
        batch = min(64, len(train_x), len(test_x))
        data = DigitStrips(train_x, train_y, batch, num_digits=length, seed=0)
        validation = DigitStrips(test_x, test_y, batch, num_digits=length, seed=1)
        objective = "val_loss"
    else:
        settings = _cli_vision.ram_settings(task, size)
        canvas, clutter = settings.pop("canvas_size"), settings.pop("num_clutter")
        hypermodel = tuning.RecurrentAttentionHyperModel(
            (canvas, canvas, 1), 10, num_glimpses=settings["num_glimpses"],
            policy="random" if model_name == "ram_random" else "learned")
        batch = min(64, len(train_x), len(test_x))
        data = TranslatedDigits(train_x, train_y, batch, canvas_size=canvas,
                                num_clutter=clutter, seed=0)
        validation = TranslatedDigits(test_x, test_y, batch, canvas_size=canvas,
                                      num_clutter=clutter, seed=1, shuffle=False)
        objective = keras_tuner.Objective("val_accuracy", "max")
    tuner = keras_tuner.RandomSearch(hypermodel, objective=objective, max_trials=args.trials,
                                     directory=args.out, project_name=f"{task}_{model_name}")
    tuner.search(data, validation_data=validation, epochs=args.epochs, verbose=1)
    best = tuner.get_best_hyperparameters(1)[0]
    print(json.dumps({"best_hyperparameters": best.values}))


def _export(args):
    import keras

    import keras_adl  # noqa: F401  (registers the layers for loading)
    from keras_adl.tasks.dates import SOURCE_VOCAB, TARGET_VOCAB
    from keras_adl.training import export

    run_file = os.path.join(args.run_dir, "run.json")
    model_file = os.path.join(args.run_dir, "model.keras")
    for path in (run_file, model_file):
        if not os.path.isfile(path):
            raise CLIError(f"{path} not found; is {args.run_dir!r} a directory written by `keras-adl train`?")
    if os.path.exists(args.export_dir):
        raise CLIError(f"export directory {args.export_dir!r} already exists; choose a new one")
    with open(run_file) as f:
        run = json.load(f)
    model = keras.saving.load_model(model_file)
    if run["task"] in VISION_TASKS:
        from keras_adl import _cli_vision

        _cli_vision.export(run, model, args.export_dir, args.beam_width)
    elif run["task"] in DOCUMENT_TASKS:
        from keras_adl import _cli_documents

        _cli_documents.export(args.run_dir, run, model, args.export_dir)
    elif run["task"] in MEMORY_TASKS:
        model.export(args.export_dir, format="tf_saved_model", verbose=False)
        with open(os.path.join(args.export_dir, "keras_adl_task.json"), "w") as f:
            json.dump({"task": run["task"], "model": run["model"]}, f)
    elif run["task"] == "sort":
        export.export_serving_fn(model, args.export_dir, export.make_pointer_serving_fn(model))
    elif run["task"] == "pairs":
        from keras_adl.text import TextPairTokenizer

        with open(os.path.join(args.run_dir, "vocab.json")) as f:
            tokenizer = TextPairTokenizer.from_config(json.load(f))
        serve = export.make_text_pair_serving_fn(model, tokenizer, run["max_length"],
                                                 run["max_length"], decode=_decode_fn(run["model"]))
        export.export_serving_fn(model, args.export_dir, serve, resources=tokenizer.tables)
    else:
        decode = None if run["model"] != "transformer_seq2seq" else _decode_fn(run["model"])
        export.export_seq2seq(model, args.export_dir, SOURCE_VOCAB, TARGET_VOCAB,
                              DATE_MAX_LENGTH, beam_width=args.beam_width, decode=decode)
    print(f"exported {args.run_dir} to {args.export_dir}")


def _predict(args):
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the ops of exported text-pair and document models)

    if not os.path.isfile(os.path.join(args.export_dir, "saved_model.pb")):
        raise CLIError(f"no SavedModel in {args.export_dir!r}")
    if any(not text.strip() for text in args.inputs):
        raise CLIError("inputs must not be empty")
    task_file = os.path.join(args.export_dir, "keras_adl_task.json")
    if os.path.isfile(task_file):
        with open(task_file) as f:
            task_info = json.load(f)
        if task_info["task"] in VISION_TASKS:
            from keras_adl import _cli_vision

            return _cli_vision.predict(args.export_dir, args.inputs, task_info)
        if task_info["task"] in DOCUMENT_TASKS:
            from keras_adl import _cli_documents

            return _cli_documents.predict(args.export_dir, args.inputs)
        return _predict_memory(args, task_file)
    loaded = tf.saved_model.load(args.export_dir)
    try:
        outputs = loaded.signatures["serving_default"](inputs=tf.constant(args.inputs))
    except (tf.errors.InvalidArgumentError, ValueError) as error:
        raise CLIError(f"the model could not read these inputs: {_tf_message(error)}") from None
    for text, output in zip(args.inputs, outputs["output"].numpy()):
        print(f"{text}\t{output.decode()}")


def _predict_memory(args, task_file):
    """Runs an exported copy model on bit vectors given as strings of 0/1."""
    import numpy as np
    import tensorflow as tf

    with open(task_file) as f:
        task = json.load(f)["task"]
    if task != "copy":
        raise CLIError(f"predict reads copy-task bit vectors; a {task!r} model takes "
                       "[batch, time, features] arrays through the Python API")
    bits = len(args.inputs[0])
    if any(len(v) != bits or set(v) - {"0", "1"} for v in args.inputs):
        raise CLIError("inputs must be bit vectors of one length, e.g. 10110010 01100110")
    loaded = tf.saved_model.load(args.export_dir)
    width = int(loaded.signatures["serving_default"].structured_input_signature[1]
                ["inputs"].shape[-1])
    if bits != width - 1:
        raise CLIError(f"this model copies {width - 1}-bit vectors; received {bits} bits")
    length = len(args.inputs)
    x = np.zeros((1, 2 * length + 1, width), "float32")
    x[0, :length, :bits] = [[float(c) for c in v] for v in args.inputs]
    x[0, length, bits] = 1.0
    logits = loaded.serve(tf.constant(x)).numpy()[0, length + 1 :]
    for source, row in zip(args.inputs, logits):
        print(f"{source}\t{''.join('1' if v > 0 else '0' for v in row)}")


def _tf_message(error):
    """The useful part of a TensorFlow runtime error: an assertion's text, else its first line."""
    import re

    text = str(error)
    found = re.search(r"assertion failed: \[([^\]]+)\]", text) or re.search(
        r"StringToNumberOp could not correctly convert string: ([^\n]+)", text
    )
    if found:
        return found.group(0) if "StringToNumber" in found.group(0) else found.group(1)
    return text.strip().splitlines()[0]


def main(argv=None):
    """Entry point of the ``keras-adl`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    try:
        if args.command == "train":
            task, model_name = _resolve(args.task, args.model)
            for name in ("epochs", "batch_size", "samples"):
                if getattr(args, name) is not None:
                    _positive(name.replace("_", "-"), getattr(args, name))
            if args.strategy not in ("auto", "mirrored", "default"):
                raise CLIError(f"--strategy must be auto, mirrored or default; received {args.strategy!r}")
            if task == "pairs" and not args.data:
                raise CLIError("task 'pairs' needs --data FILE (one source<TAB>target pair per line)")
            if task == "documents" and not args.data:
                raise CLIError("task 'documents' needs --data (a <label>/<doc>.txt tree or a "
                               "label<TAB>text file)")
            _positive("max-length", args.max_length)
            run_training(task, model_name, args.epochs, args.batch_size, args.samples,
                         args.strategy, args.out, data=args.data, max_length=args.max_length)
        elif args.command == "tune":
            _tune(args)
        elif args.command == "export":
            _export(args)
        else:
            _predict(args)
    except (CLIError, FileExistsError, FileNotFoundError, ImportError, ValueError) as error:
        print(f"keras-adl: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

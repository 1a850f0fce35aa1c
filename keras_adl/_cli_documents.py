"""The document tasks of ``keras-adl``: the Hierarchical Attention Network on the synthetic
needle task, on Debian's fortunes, or on the user's labelled documents (training, evaluation,
tuning, export and prediction from raw text)."""

import json
import os

HAN_MODELS = ("han", "han_lstm")
DOCUMENT_TASKS = {"needle": HAN_MODELS, "fortunes": HAN_MODELS, "documents": HAN_MODELS}
TASK_FILE = "keras_adl_task.json"
TOKENIZER_FILE = "tokenizer.json"
# (sentences, words) kept per document: the needle task's maxima; for real text the
# B=64, S=15, W=30 setting of benchmarks/han.py.
SHAPES = {"needle": (10, 10), "fortunes": (15, 30), "documents": (15, 30)}
NEEDLE_TEST_DOCUMENTS = 1000
NEEDLE_CLASSES = 4


def load(task, data, samples, seed=0):
    """``(train_docs, train_labels, test_docs, test_labels, class_names, test_keys)``.

    ``needle``: ``samples`` generated training documents and 1000 test documents (``test_keys``
    are the key sentences). ``fortunes``: Debian's fortune topics (``data``: another fortunes
    directory). ``documents``: ``data`` is a ``<label>/<doc>.txt`` tree or a ``label<TAB>text``
    file. Real data is split 80/20 with a fixed seed; ``test_keys`` is ``None``.
    """
    import numpy as np

    from keras_adl.tasks import documents
    from keras_adl.tasks.digits import split_dataset

    if task == "needle":
        train_docs, train_labels, _ = documents.needle_documents(
            samples, num_classes=NEEDLE_CLASSES, seed=seed)
        test_docs, test_labels, keys = documents.needle_documents(
            NEEDLE_TEST_DOCUMENTS, num_classes=NEEDLE_CLASSES, seed=seed + 1)
        names = list(documents.CLASS_WORDS[:NEEDLE_CLASSES])
        return train_docs, train_labels, test_docs, test_labels, names, keys
    if task == "fortunes":
        docs, labels, names = documents.load_fortunes(data)
    else:
        docs, labels, names = documents.load_documents(data)
    (train_docs, train_labels), (test_docs, test_labels) = split_dataset(
        np.array(docs, dtype=object), labels, 0.2, seed=seed)
    train_docs, train_labels = list(train_docs[:samples]), train_labels[:samples]
    return train_docs, train_labels, list(test_docs), test_labels, list(names), None


def build(vocab_size, num_classes, model_name, shape, jit, **sizes):
    """A compiled `han_classifier` (the sizes of benchmarks/han.py unless given)."""
    import keras

    from keras_adl.models.han import han_classifier
    from keras_adl.training.recipes import compile_for_training

    settings = dict(embedding_dim=64, units=64, encoder_units=32, dropout=0.1)
    settings.update(sizes)
    model = han_classifier(vocab_size, num_classes, *shape,
                           encoder="lstm" if model_name == "han_lstm" else "gru", **settings)
    loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    return compile_for_training(model, loss, 2e-3, jit)


def train(task, model_name, epochs, batch_size, samples, strategy, jit, out, callbacks, run,
          data):
    """Trains HAN on a document task; writes ``model.keras``, ``tokenizer.json``, pictures."""
    import keras

    from keras_adl.text import DocumentTokenizer
    from keras_adl.training.distribute import build_in_scope

    train_docs, train_labels, test_docs, test_labels, names, keys = load(task, data, samples)
    shape = SHAPES[task]
    tokenizer = DocumentTokenizer.build(train_docs, *shape, max_size=30000)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, TOKENIZER_FILE), "w") as f:
        json.dump(tokenizer.to_config(), f)
    run.update(data=data or task, class_names=names, max_sentences=shape[0],
               max_words=shape[1], train_documents=len(train_docs))
    batch_size = min(batch_size, len(train_docs))
    model = build_in_scope(strategy, build, tokenizer.vocabulary_size, len(names), model_name,
                           shape, jit)
    dataset = tokenizer.dataset(train_docs, train_labels, batch_size, seed=0)
    backup = keras.callbacks.BackupAndRestore(os.path.join(out, "backup"))
    history = model.fit(dataset, epochs=epochs, verbose=1, shuffle=False,  # shuffled by tf.data
                        callbacks=[backup, *callbacks])
    model.save(os.path.join(out, "model.keras"))
    metrics = evaluate(model, tokenizer, test_docs, test_labels, names, keys, out,
                       title=f"{model_name} on {task}")
    return model, history, metrics


def evaluate(model, tokenizer, documents, labels, class_names, key_sentences, out, title):
    """Held-out accuracy (and, for the needle task, how often the sentence attention peaks on
    the key sentence), and the attention picture of the first test document."""
    import numpy as np
    import tensorflow as tf

    from keras_adl.models.han import han_attention
    from keras_adl.plotting import plot_document_attention
    from keras_adl.tasks.documents import sentence_attention_hit_rate

    documents = list(documents)
    outputs = han_attention(model).predict(tokenizer.encode(tf.constant(documents)),
                                           batch_size=64, verbose=0)
    predictions = outputs["probabilities"].argmax(-1)
    metrics = {"held_out_accuracy": float(np.mean(predictions == np.asarray(labels))),
               "held_out_documents": len(documents)}
    if key_sentences is not None:
        metrics["sentence_attention_hit_rate"] = sentence_attention_hit_rate(
            outputs["sentence_attention"], key_sentences)
    words = tokenizer.tokens(tf.constant(documents[:1])).numpy()[0]
    label = (f"{title}: predicted {class_names[predictions[0]]} "
             f"({outputs['probabilities'][0].max():.2f}), true {class_names[labels[0]]}")
    for extension in ("html", "png"):
        plot_document_attention(words, outputs["word_attention"][0],
                                outputs["sentence_attention"][0],
                                os.path.join(out, f"attention.{extension}"), title=label)
    return metrics


def tune(args, model_name):
    """Random search over `HierarchicalAttentionHyperModel` on held-out accuracy."""
    import keras_tuner

    from keras_adl.text import DocumentTokenizer
    from keras_adl.training.tuning import HierarchicalAttentionHyperModel

    train_docs, train_labels, test_docs, test_labels, names, _ = load(
        args.task, args.data, args.samples)
    shape = SHAPES[args.task]
    tokenizer = DocumentTokenizer.build(train_docs, *shape, max_size=30000)
    hypermodel = HierarchicalAttentionHyperModel(
        tokenizer.vocabulary_size, len(names), *shape,
        encoder="lstm" if model_name == "han_lstm" else "gru")
    batch = min(64, len(train_docs), len(test_docs))
    tuner = keras_tuner.RandomSearch(
        hypermodel, objective=keras_tuner.Objective("val_accuracy", "max"),
        max_trials=args.trials, directory=args.out, project_name=f"{args.task}_{model_name}")
    tuner.search(tokenizer.dataset(train_docs, train_labels, batch, seed=0),
                 validation_data=tokenizer.dataset(test_docs, test_labels, batch,
                                                   shuffle=False, drop_remainder=False),
                 epochs=args.epochs, shuffle=False, verbose=1)
    best = tuner.get_best_hyperparameters(1)[0]
    print(json.dumps({"best_hyperparameters": best.values}))


def export(run_dir, run, model, export_dir):
    """SavedModel with a raw-text signature ``documents [None]`` string."""
    from keras_adl.text import DocumentTokenizer
    from keras_adl.training.export import export_han

    with open(os.path.join(run_dir, TOKENIZER_FILE)) as f:
        tokenizer = DocumentTokenizer.from_config(json.load(f))
    export_han(model, export_dir, tokenizer, class_names=run["class_names"])
    with open(os.path.join(export_dir, TASK_FILE), "w") as f:
        json.dump({"task": run["task"], "model": run["model"]}, f)


def predict(export_dir, inputs):
    """Prints the class, its probability and the most attended sentence of each document (a
    raw string, or the path of a UTF-8 text file)."""
    import tensorflow as tf

    from keras_adl.cli import CLIError

    texts, unreadable = [], []
    for item in inputs:
        if os.path.isfile(item):
            with open(item, encoding="utf-8", errors="replace") as f:
                texts.append(f.read())
        else:
            texts.append(item)
    loaded = tf.saved_model.load(export_dir)
    outputs = loaded.signatures["serving_default"](documents=tf.constant(texts))
    for item, name, probabilities, sentences, tokens in zip(
        inputs, outputs["class_names"].numpy(), outputs["probabilities"].numpy(),
        outputs["sentence_attention"].numpy(), outputs["tokens"].numpy()
    ):
        label = item if len(item) <= 40 or os.path.isfile(item) else item[:37] + "..."
        label = " ".join(label.split())  # one output line per document
        if not sentences.any():
            print(f"{label}\t(no words this model can read)")
            unreadable.append(label)
            continue
        top = int(sentences.argmax())
        words = " ".join(w.decode() for w in tokens[top] if w)
        print(f"{label}\t{name.decode()}\tp={probabilities.max():.3f}\t"
              f"sentence {top + 1} ({sentences[top]:.2f}): {words}")
    if unreadable:
        raise CLIError(f"{len(unreadable)} input(s) have no words this model can read: "
                       f"{unreadable[0]!r}")

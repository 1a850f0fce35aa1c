"""The pretraining family's serving: raw prompts in, generated text out (the causal LM); raw
texts in, classes out, each read window by window (the fine-tuned classifiers); the exports and
how ``keras-adl predict`` prints them."""

import tensorflow as tf
import tensorflow_text  # noqa: F401  (the ops of exported text models)

from keras_adl.models.gpt import generate
from keras_adl.recipes._recipe import Answers, raw_bytes
from keras_adl.recipes.pretraining.data import (
    check_classifier,
    classifier_windows,
    save_tokenizer,
)
from keras_adl.text.wordpiece import SurfaceWordPieceTokenizer
from keras_adl.training.export import export_serving_fn
from keras_adl.training.rundir import write_task_file
from keras_adl.training.serving_inputs import is_blank, read_raw_text


def make_generation_endpoints(model, tokenizer, max_length):
    """The two signatures of a GPT export: ``serve`` (``serving_default``), prompts alone,
    greedy; and ``sample``, prompts with the sampling settings.

    ``serve(prompts)``: ``prompts [None]`` strings, continued greedily up to ``max_length``
    pieces in all. ``sample(prompts, temperature, top_k, top_p, seed, max_new_tokens)``:
    ``temperature`` float (0: greedy), ``top_k`` int (0: no limit), ``top_p`` float (1: no
    limit), ``seed`` int (the draws are stateless functions of it and the step, so a seed
    reproduces its text), ``max_new_tokens`` int (0: up to ``max_length``). Both return
    ``texts [B]`` (the prompt as written, byte for byte, then the continuation as the
    tokenizer writes it; a `SurfaceWordPieceTokenizer` keeps case and spacing, the normalising
    tokenizer of earlier runs gives the whole text normalised), ``tokens [B, max_length]`` and the
    flags ``empty`` (a blank prompt: continued from nothing), ``truncated`` (a prompt of more
    than ``max_length - 1`` pieces: its first are continued) and ``invalid_utf8``. Tokenization
    and generation run in the graph: the SavedModel needs only ``tensorflow`` and
    ``tensorflow_text`` to reload.

    Returns:
        ``{"serve": tf.function, "sample": tf.function}``.
    """

    def continue_prompts(prompts, temperature, top_k, top_p, seed, max_new_tokens):
        text, invalid_utf8 = read_raw_text(prompts)
        pieces = tokenizer.tokenize(text)
        counts = pieces.row_lengths()
        ids = pieces[:, : max_length - 1].to_tensor(shape=[None, None])

        def noise(t, shape):
            return tf.random.stateless_uniform(shape, tf.stack([seed, t]), minval=1e-7)

        tokens = generate(
            model,
            ids,
            max_length,
            temperature=temperature,
            top_k=top_k,
            top_p=top_p,
            noise=noise,
        )
        prompt_pieces = tf.cast(tf.minimum(counts, max_length - 1), tf.int32)[:, None]
        positions = tf.range(max_length)[None, :]
        if max_new_tokens is not None:  # cut each row max_new_tokens after its prompt
            limit = tf.where(max_new_tokens > 0, prompt_pieces + max_new_tokens, max_length)
            tokens = tf.where(positions < limit, tokens, 0)
        empty = is_blank(text)
        truncated = counts > max_length - 1
        if isinstance(tokenizer, SurfaceWordPieceTokenizer):
            # The prompt as the user wrote it, then the continuation as written: characters
            # the vocabulary lacks survive in the prompt (a cut prompt: the pieces read).
            read = tokenizer.detokenize(tf.where(positions < prompt_pieces, tokens, 0))
            head = tf.where(truncated, read, text)
            tail = tokenizer.detokenize(tf.where(positions >= prompt_pieces, tokens, 0), False)
            spaced = tf.strings.regex_full_match(head, r"(?s).*\s")
            tail = tf.where(spaced, tf.strings.regex_replace(tail, "^ ", ""), tail)
            texts = tf.where(empty, tf.strings.strip(tail), head + tail)
        else:  # a run of an earlier version: normalised pieces, the whole text from them
            texts = tokenizer.detokenize(tokens)
        return {
            "texts": texts,
            "tokens": tokens,
            "empty": empty,
            "truncated": truncated,
            "invalid_utf8": invalid_utf8,
        }

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="prompts")])
    def serve(prompts):
        return continue_prompts(prompts, 0.0, 0, 1.0, 0, None)

    @tf.function(
        input_signature=[
            tf.TensorSpec([None], tf.string, name="prompts"),
            tf.TensorSpec([], tf.float32, name="temperature"),
            tf.TensorSpec([], tf.int32, name="top_k"),
            tf.TensorSpec([], tf.float32, name="top_p"),
            tf.TensorSpec([], tf.int32, name="seed"),
            tf.TensorSpec([], tf.int32, name="max_new_tokens"),
        ]
    )
    def sample(prompts, temperature, top_k, top_p, seed, max_new_tokens):
        return continue_prompts(prompts, temperature, top_k, top_p, seed, max_new_tokens)

    return {"serve": serve, "sample": sample}


def make_generation_serving_fn(model, tokenizer, max_length):
    """The ``serving_default`` of a GPT export: raw prompt strings continued greedily
    (`make_generation_endpoints`' ``serve``; its ``sample`` has the sampling settings)."""
    return make_generation_endpoints(model, tokenizer, max_length)["serve"]


def make_text_classifier_serving_fn(
    model, model_name, tokenizer, sequence_length, class_names, max_windows=1
):
    """A ``tf.function`` from raw strings (``texts [None]``) to a fine-tuned classifier's
    ``classes``, ``probabilities`` and ``class_names`` (and ``windows``, how many windows of
    each text it read).

    Each text is read as the classifier was trained to read it: up to ``max_windows`` windows
    of ``sequence_length - 2`` pieces (`classifier_windows`). Its probabilities are the
    product of its windows' class probabilities, renormalised (the softmax of the sum of their
    log-probabilities), so one confident window can outweigh several unsure ones, and a text
    of one window gets the model's own probabilities. (A product of posteriors counts the
    class prior once per window, so a long text leans a little further towards the frequent
    topics than its windows' evidence alone would.) Tokenization and windowing run in the
    graph: the SavedModel needs only ``tensorflow`` and ``tensorflow_text`` to reload.

    Any string is answered: invalid UTF-8 is replaced (flag ``invalid_utf8``); a text of no
    piece gets class -1, class name ``""`` and zero probabilities (flag ``empty``); a text of
    more pieces than ``max_windows`` windows hold is classified from its first windows (flag
    ``truncated``).
    """
    check_classifier(model_name, sequence_length)
    names = tf.constant([str(n) for n in class_names])

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string, name="texts")])
    def serve(texts):
        text, invalid_utf8 = read_raw_text(texts)
        pieces = tokenizer.tokenize(text).row_lengths()
        empty = is_blank(text) | tf.equal(pieces, 0)  # a no-break space alone is a piece
        inputs, _, owner = classifier_windows(
            model_name, tokenizer, text, sequence_length, max_windows
        )
        logits = model(inputs, training=False)
        if isinstance(logits, dict):
            logits = logits["classes"]
        log_probabilities = tf.nn.log_softmax(tf.cast(logits, tf.float32))
        count = tf.shape(texts)[0]
        scores = tf.math.unsorted_segment_sum(log_probabilities, owner, count)
        probabilities = tf.where(empty[:, None], 0.0, tf.nn.softmax(scores))
        classes = tf.where(empty, -1, tf.argmax(probabilities, axis=-1, output_type=tf.int32))
        return {
            "classes": classes,
            "probabilities": probabilities,
            "class_names": tf.where(empty, "", tf.gather(names, tf.maximum(classes, 0))),
            "windows": tf.math.bincount(owner, minlength=count, maxlength=count),
            "empty": empty,
            "truncated": pieces > max_windows * (sequence_length - 2),
            "invalid_utf8": invalid_utf8,
        }

    return serve


def export(model, export_dir, serving_fn, tokenizer, record):
    """Writes the SavedModel of ``serving_fn`` (a function, or a dict of signatures whose
    ``"serve"`` is ``serving_default``), the vocabulary beside it and the task file
    (``record``'s task and model)."""
    endpoints = dict(serving_fn) if isinstance(serving_fn, dict) else {"serve": serving_fn}
    export_serving_fn(model, export_dir, endpoints.pop("serve"), endpoints=endpoints)
    save_tokenizer(tokenizer, export_dir)
    write_task_file(export_dir, task=record["task"], model=record["model"])


def _signatures(export_dir):
    return tf.saved_model.load(export_dir).signatures


def predict_generation(export_dir, inputs, sampling=None):
    """Prints each prompt and its continuation, in order: greedy (``serving_default``), or
    with ``sampling`` (``{"temperature", "top_k", "top_p", "seed", "max_new_tokens"}``) through
    the export's ``sample`` signature. An empty prompt gets a line saying so (exit status 1)
    and the others are still continued."""
    signatures = _signatures(export_dir)
    data = raw_bytes(inputs)
    prompts = tf.constant(data)
    if sampling is None and "empty" in signatures["serving_default"].structured_outputs:
        outputs = signatures["serving_default"](prompts=prompts)
    else:
        # An export of an earlier version has one signature, with the settings.
        serve = signatures["sample" if "sample" in signatures else "serving_default"]
        settings = dict(temperature=0.0, top_k=0, top_p=1.0, seed=0, max_new_tokens=0)
        settings.update(sampling or {})
        if "max_new_tokens" not in serve.structured_input_signature[1]:
            settings.pop("max_new_tokens")
        types = {"top_k": tf.int32, "seed": tf.int32, "max_new_tokens": tf.int32}
        settings = {k: tf.constant(v, types.get(k, tf.float32)) for k, v in settings.items()}
        outputs = serve(prompts=prompts, **settings)
    outputs = {k: v.numpy() for k, v in outputs.items()}
    answers = Answers(inputs)
    for index in range(len(inputs)):
        empty = outputs["empty"][index] if "empty" in outputs else not data[index].strip()
        if empty:
            answers.fail(index + 1, "empty prompt: nothing to continue")
            continue
        answers.answer(index + 1, outputs["texts"][index].decode("utf-8", "replace"))
        answers.flags(
            index + 1, outputs, index, "longer than the model reads; continued from its start"
        )
    answers.finish()


def predict_classes(export_dir, inputs):
    """Prints each text's class, its probability and the number of windows read; a text of
    no piece gets a line saying so (exit status 1) and the others are still answered."""
    outputs = _signatures(export_dir)["serving_default"](texts=tf.constant(raw_bytes(inputs)))
    outputs = {k: v.numpy() for k, v in outputs.items()}
    answers = Answers(inputs)
    for index in range(len(inputs)):
        if outputs.get("empty", [False] * len(inputs))[index]:
            answers.fail(index + 1, "no words this model can read")
            continue
        name, probabilities = outputs["class_names"][index], outputs["probabilities"][index]
        read = f"\twindows={outputs['windows'][index]}" if "windows" in outputs else ""
        answers.answer(index + 1, f"{name.decode()}\tp={probabilities.max():.3f}{read}")
        answers.flags(
            index + 1,
            outputs,
            index,
            "more than the windows the model reads; classified from the first",
        )
    answers.finish()

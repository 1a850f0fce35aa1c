"""Pretraining on two CPU cores: masking statistics, cached generation, the exported generator,
masked-LM learning, transfer to fortunes, and a GPT against a unigram model and an LSTM LM.

    python benchmarks/pretraining.py --parts masking cache export          # a minute
    python benchmarks/pretraining.py --parts mlm transfer --minutes 10      # ~20 minutes
    python benchmarks/pretraining.py --parts lm --minutes 8                 # ~17 minutes

Data: the pretraining recipe's corpus (`keras_adl.recipes.pretraining.data.default_corpus`: GCIDE +
the fortunes except the held-out topic ones, ``make data``; ``--data`` another), its WordPiece
vocabulary and its 2-layer d = 128 models; fortunes with the documents family's split. Parts and their figures (issue 15):

- ``masking``: over at least 10⁵ eligible tokens of real sentence pairs, the selected fraction
  (goal 15.0 ± 0.5%), the [MASK] / random / kept split of the selected (80/10/10 ± 1.5), and
  special or padding tokens selected (goal 0).
- ``cache``: a GPT with 256 positions generating 256 tokens greedily, one compiled step per
  token with the key/value caches (XLA) against recomputing the whole prefix (a graph-mode
  pass of every block over the 256 positions per token, the output projection at the current
  position only): the tokens must be identical; goal ≥ 3× per token.
- ``export``: the generation SavedModel (`make_generation_serving_fn`) against eager
  `generate` on 20 prompts, greedy (goal: identical).
- ``mlm``: ``bert`` pretrained for ``--minutes`` (or exactly ``--steps`` steps, the schedule's
  length, however long they take: a figure that does not depend on what else the machine
  runs); held-out masked-token accuracy against the most-frequent-token baseline (goal ≥ 3×).
  With ``--load DIR`` it continues the pretrainer saved there (with its vocabulary) on a fresh
  warm-up + cosine schedule of ``--steps`` steps peaking at ``--mlm-rate``; with ``--save DIR
  --checkpoint-every K`` the pretrainer is also written every K steps, so a long pretraining
  can be run in pieces.
- ``transfer`` (after ``mlm``, or on the pretrainer ``--save`` wrote, ``--load DIR``): fortunes
  fine-tuned from the pretrained encoder and from random weights (same vocabulary and steps),
  per seed and peak rate (``--finetune-rates``; ``--starts`` for one start only), and tf-idf
  logistic regression (the anchor of ``benchmarks/han.py``); goal: pretrained ≥ random + 3
  points and above the regression. A seed fixes the classifier's initialisation; the data
  order also depends on the runs before it in the process (one shuffled dataset serves all).
  Fine-tuning reads each fortune as the recipe does: up to ``--windows`` (the recipe's
  default, `FINETUNE_WINDOWS`) consecutive windows of ``sequence_length - 2`` pieces, trained
  on with its label and classified by the sum of their log-probabilities
  (`keras_adl.recipes.pretraining.data.text_classes`, `make_text_classifier_serving_fn`);
  ``--windows 1`` reads
  the first window only. Also reported: the same models on each fortune's first window alone.
- ``lm``: ``gpt`` and an LSTM LM of about the same parameter count, each for ``--minutes``;
  held-out perplexity against a unigram model (goals: GPT ≤ 0.5× unigram and ≤ the LSTM's).

With ``--streamed``, ``mlm`` and ``lm`` read ``--data`` (default: GCIDE alone) as ``keras-adl
train --data`` does, streamed from disk (`keras_adl.recipes.pretraining.streaming`): the same
figures, to compare with the corpus read into memory (``python benchmarks/pretraining.py
--parts mlm --steps 2000 --data /usr/share/dictd/gcide.dict.dz`` with and without it).
"""

import argparse
import json
import os
import time

WINDOW_BATCH = 32


def masking(tokenizer, train, args):
    import numpy as np

    from keras_adl.data.pretraining import FIRST_PIECE, MASK
    from keras_adl.recipes.pretraining.data import mlm_dataset
    from keras_adl.recipes.pretraining.spec import SIZES

    selected = eligible = special = 0
    as_mask = kept = random = 0
    for inputs, targets, weights in mlm_dataset(
        tokenizer, train, 64, SIZES["sequence_length"], args.seed, segments="pairs"
    ):
        # The original ids: put the targets back where the masks went.
        masked = inputs["token_ids"].numpy()
        positions = inputs["mask_positions"].numpy()
        w = weights["mlm"].numpy() > 0
        rows = np.nonzero(w)[0]
        chosen = positions[w]
        original = masked.copy()
        original[rows, chosen] = targets["mlm"].numpy()[w]
        eligible += int((original >= FIRST_PIECE).sum())
        selected += int(w.sum())
        special += int((original[rows, chosen] < FIRST_PIECE).sum())
        replaced = masked[rows, chosen]
        as_mask += int((replaced == MASK).sum())
        kept += int((replaced == original[rows, chosen]).sum())
        random += int(((replaced != MASK) & (replaced != original[rows, chosen])).sum())
        if eligible >= 100_000:
            break
    return {
        "eligible_tokens": eligible,
        "selected_fraction": selected / eligible,
        "mask_fraction": as_mask / selected,
        "random_fraction": random / selected,
        "kept_fraction": kept / selected,
        "special_or_padding_selected": special,
    }


def cache_speed(vocab_size, args):
    import keras
    import numpy as np
    import tensorflow as tf

    from keras_adl.models.gpt import generate, gpt_lm
    from keras_adl.recipes.pretraining.spec import SIZES

    keras.utils.set_random_seed(args.seed)
    length = 256
    sizes = {k: v for k, v in SIZES.items() if k not in ("sequence_length", "dropout")}
    model = gpt_lm(vocab_size, sequence_length=length, dropout=0.0, **sizes)
    prompt = tf.constant([[7]], tf.int32)
    cached = tf.function(lambda p: generate(model, p, length), jit_compile=True)
    tokens = cached(prompt).numpy()  # compiles
    start = time.perf_counter()
    tokens = cached(prompt).numpy()
    cached_seconds = time.perf_counter() - start

    embedding = model.get_layer("embedding")
    blocks = [layer for layer in model.layers if layer.name.startswith("decoder_")]

    # Without XLA: on this stack the XLA-compiled prefix pass took 240 ms against 4 ms.
    @tf.function(jit_compile=False)
    def full_step(sequence, t):
        # The whole prefix through every block (causal), the output projection at t only.
        x = embedding(sequence)
        for block in blocks:
            x = block(x, training=False)
        logits = embedding(x[:, t], reverse=True)
        return tf.cast(tf.argmax(logits, axis=-1), tf.int32)

    # Recomputing: at every position, a forward pass over the whole (fixed-size) prefix.
    sequence = np.zeros((1, length), "int32")
    sequence[0, 0] = 2  # the start token generate feeds first
    full_step(tf.constant(sequence), tf.constant(0))  # compiles
    recomputed = [7]
    start = time.perf_counter()
    for t in range(length - 1):
        sequence[0, t + 1] = recomputed[-1]
        recomputed.append(int(full_step(tf.constant(sequence), tf.constant(t + 1))[0]))
    full_seconds = time.perf_counter() - start
    same = recomputed[: len(tokens[0])] == tokens[0].tolist()
    # Compare up to a generated </s> (generate pads after it).
    if not same and 2 in tokens[0].tolist():
        stop = tokens[0].tolist().index(2) + 1
        same = recomputed[:stop] == tokens[0].tolist()[:stop]
    return {
        "tokens": length,
        "cached_ms_per_token": 1000 * cached_seconds / length,
        "recomputed_ms_per_token": 1000 * full_seconds / (length - 1),
        "speedup": (full_seconds / (length - 1)) / (cached_seconds / length),
        "identical_tokens": bool(same),
    }


def export_check(model, tokenizer, prompts, out):
    import os
    import shutil
    import tempfile

    import tensorflow as tf

    from keras_adl.models.gpt import generate
    from keras_adl.recipes.pretraining.serving import make_generation_serving_fn
    from keras_adl.training.export import export_serving_fn

    max_length = 32
    directory = os.path.join(out or tempfile.mkdtemp(), "gpt_export")
    shutil.rmtree(directory, ignore_errors=True)
    export_serving_fn(model, directory, make_generation_serving_fn(model, tokenizer, max_length))
    serve = tf.saved_model.load(directory).signatures["serving_default"]
    settings = {"temperature": 0.0, "top_k": 0, "top_p": 1.0, "seed": 0}
    exported = serve(
        prompts=tf.constant(prompts), **{k: tf.constant(v) for k, v in settings.items()}
    )
    ids = tokenizer.tokenize(tf.constant(prompts))[:, : max_length - 1].to_tensor()
    eager = generate(model, ids, max_length).numpy()
    same = int((exported["tokens"].numpy() == eager).all(axis=1).sum())
    return {"prompts": len(prompts), "identical": same}


def train_for(model, data, minutes, steps_cap=10**7, report_every=1000, callbacks=()):
    """Trains for ``minutes`` or ``steps_cap`` steps, whichever ends first, printing every
    ``report_every`` steps the mean step rate since the start (first compilation included) and
    the mean loss over the last ``report_every`` steps."""
    import keras

    from keras_adl.training.callbacks import TimeLimit

    limit = TimeLimit(60 * minutes)
    last = {"steps": 0, "loss": 0.0}  # Keras' logged loss is the running mean of the epoch

    def report(batch, logs):
        if limit.steps % report_every == 0:
            mean = float((logs or {}).get("loss", float("nan")))
            interval = (mean * limit.steps - last["loss"] * last["steps"]) / (
                limit.steps - last["steps"]
            )
            last.update(steps=limit.steps, loss=mean)
            print(
                f"  step {limit.steps}: {limit.steps / limit.elapsed:.2f} steps/s, loss "
                f"{interval:.3f} over the last {report_every} steps",
                flush=True,
            )

    progress = keras.callbacks.LambdaCallback(on_train_batch_end=report)
    start = time.perf_counter()
    model.fit(
        data,
        steps_per_epoch=steps_cap,
        epochs=1,
        verbose=0,
        shuffle=False,  # the datasets shuffle themselves
        callbacks=[limit, progress, *callbacks],
    )
    return {"steps": limit.steps, "seconds": round(time.perf_counter() - start, 1)}


def save_pretrainer(directory, tokenizer, model=None):
    """The vocabulary and (if given) the pretrainer, as ``--load`` reads them."""
    from keras_adl.recipes.pretraining.data import save_tokenizer

    os.makedirs(directory, exist_ok=True)
    save_tokenizer(tokenizer, directory)
    if model is not None:
        model.save(os.path.join(directory, "pretrainer.keras"))


def mlm(tokenizer, train, held_out, args, start=None):
    """Masked-LM pretraining of the recipe's encoder from random weights, or from the
    pretrainer ``start`` (``--load``)."""
    import keras
    import numpy as np

    from keras_adl.recipes.pretraining.data import mlm_dataset
    from keras_adl.recipes.pretraining.spec import SIZES
    from keras_adl.recipes.pretraining.tasks import RECIPES

    keras.utils.set_random_seed(args.seed)
    length = SIZES["sequence_length"]
    # With --minutes the schedule assumes ~12 steps per second; the 8-minute runs measured
    # about 9 (2026-11-23), so their cosine decay stops short of its end. --steps is exact.
    steps = args.steps or int(args.minutes * 60 * 12)
    rate = {} if args.mlm_rate is None else {"learning_rate": args.mlm_rate}
    model = RECIPES["pretrain_mlm"].build_model("bert", tokenizer.size, total_steps=steps, **rate)
    if start is not None:
        model.set_weights(start.get_weights())
    documents = train.shuffled_documents(args.seed) if args.streamed else train
    data = mlm_dataset(tokenizer, documents, 64, length, seed=args.seed)
    callbacks = []
    if args.save and args.checkpoint_every:
        save_pretrainer(args.save, tokenizer)
        path = os.path.join(args.save, "pretrainer.keras")
        callbacks.append(keras.callbacks.ModelCheckpoint(path, save_freq=args.checkpoint_every))
    facts = train_for(
        model, data, 10**6 if args.steps else args.minutes, steps, callbacks=callbacks
    )
    evaluation = mlm_dataset(tokenizer, held_out, 64, length, seed=1).take(40).cache()
    figures = model.evaluate(evaluation, verbose=0, return_dict=True)
    targets = np.concatenate([t["mlm"].numpy()[w["mlm"].numpy() > 0] for _, t, w in evaluation])
    baseline = float(np.bincount(targets).max() / len(targets))
    facts.update(
        masked_accuracy=float(figures["mlm_accuracy"]),
        most_frequent_token_accuracy=baseline,
        ratio=float(figures["mlm_accuracy"]) / baseline,
        next_sentence_accuracy=float(figures.get("nsp_accuracy", float("nan"))),
        held_out_masked_tokens=int(len(targets)),
    )
    return model, facts


def linear_probe(model, data, steps, epochs, learning_rate=1e-3):
    """The first stage of LP-FT (Kumar et al. 2022): ``epochs`` of training the classifier
    layer alone on the frozen encoder (Adam at ``learning_rate``; the encoder's dropout stays
    on), before the whole model is fine-tuned with its own compile settings, which this leaves
    as they were (its optimizer not yet built)."""
    import keras

    trainable = {id(v): v.trainable for v in model.weights}
    for variable in model.weights:
        variable.trainable = variable.path.startswith("classifier/")
    try:
        probe = keras.Model(model.inputs, model.outputs)  # its own compile, the same layers
        probe.compile(keras.optimizers.Adam(learning_rate), loss=model.loss, metrics=["accuracy"])
        probe.fit(data, steps_per_epoch=steps, epochs=epochs, verbose=0, shuffle=False)
    finally:
        for variable in model.weights:
            variable.trainable = trainable[id(variable)]


def transfer(pretrainer, tokenizer, args):
    import keras
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from keras_adl.models.bert import encoder_of
    from keras_adl.recipes.documents import data as documents_data
    from keras_adl.recipes.pretraining.data import classifier_windows, text_classes
    from keras_adl.recipes.pretraining.evaluate import classifier_accuracy
    from keras_adl.recipes.pretraining.serving import make_text_classifier_serving_fn
    from keras_adl.recipes.pretraining.spec import SIZES
    from keras_adl.recipes.pretraining.tasks import RECIPES

    train_docs, train_labels, test_docs, test_labels, names, _ = documents_data.fortune_topics(
        args.fortunes, 10**9
    )
    vectorizer = TfidfVectorizer(sublinear_tf=True, min_df=2)
    regression = LogisticRegression(max_iter=2000, C=10.0)
    regression.fit(vectorizer.fit_transform(train_docs), train_labels)
    results = {
        "tfidf_logistic_regression": float(
            np.mean(regression.predict(vectorizer.transform(test_docs)) == test_labels)
        ),
        "test_documents": len(test_docs),
    }
    length, batch = SIZES["sequence_length"], 32
    weights = pretrainer.get_weights()
    data = text_classes(
        tokenizer, train_docs, train_labels, batch, length, True, max_windows=args.windows
    )
    steps = int(data.cardinality())
    counts = [
        len(classifier_windows("bert", tokenizer, docs, length, args.windows)[2])
        for docs in (train_docs, test_docs)
    ]
    results["windows"] = {
        "max": args.windows,
        "train": counts[0],
        "held_out": counts[1],
        "steps_per_epoch": steps,
    }
    finetune = RECIPES["finetune"]
    rates = args.finetune_rates or [finetune.spec.preset("bert")["learning_rate"]]
    for start in args.starts:
        for rate in rates:
            scores, firsts = [], []  # firsts: each fortune's first window alone
            for seed in args.seeds:
                keras.utils.set_random_seed(seed)
                encoder = None
                if start == "pretrained":
                    pretrainer.set_weights(weights)  # the same pretrained start for every seed
                    encoder = encoder_of(pretrainer)
                model = finetune.build_model(
                    "bert",
                    tokenizer.size,
                    num_classes=len(names),
                    total_steps=steps * args.finetune_epochs,
                    pretrained=encoder,
                    learning_rate=rate,
                )
                if args.probe_epochs:
                    linear_probe(model, data.repeat(), steps, args.probe_epochs)
                model.fit(
                    data.repeat(),
                    steps_per_epoch=steps,
                    epochs=args.finetune_epochs,
                    verbose=0,
                    shuffle=False,
                )
                for read, figures in ((args.windows, scores), (1, firsts)):
                    serve = make_text_classifier_serving_fn(
                        model, "bert", tokenizer, length, names, read
                    )
                    figures.append(classifier_accuracy(serve, test_docs, test_labels))
            results[f"{start} at {rate:g}"] = {
                "seeds": list(args.seeds),
                "accuracy": scores,
                "first_window_accuracy": firsts,
            }
            print(f"  {start} at {rate:g}: {scores}", flush=True)
    return results


def lstm_lm(vocab_size, target_parameters, sequence_length):
    """An LSTM language model with tied embeddings, its LSTM width chosen to match
    ``target_parameters``."""
    import keras

    from keras_adl.layers import TokenAndPositionEmbedding
    from keras_adl.metrics import Perplexity

    def build(units):
        ids = keras.Input((None,), dtype="int32")
        embed = TokenAndPositionEmbedding(vocab_size, sequence_length, 128, name="embedding")
        x = keras.layers.LSTM(units, return_sequences=True)(embed(ids))
        x = keras.layers.Dense(128)(x)
        return keras.Model(ids, embed(x, reverse=True), name="lstm_lm")

    units = min(range(32, 2048, 8), key=lambda u: abs(build(u).count_params() - target_parameters))
    model = build(units)
    model.compile(
        optimizer=keras.optimizers.Adam(1e-3, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[Perplexity()],
        jit_compile=True,
    )
    return model, units


def lm(tokenizer, train, held_out, args):
    import keras
    import numpy as np
    import tensorflow as tf

    from keras_adl.data.pretraining import lm_windows
    from keras_adl.recipes.pretraining.data import token_lists
    from keras_adl.recipes.pretraining.spec import SIZES
    from keras_adl.recipes.pretraining.tasks import RECIPES

    length = SIZES["sequence_length"]
    held_inputs, held_targets = lm_windows(token_lists(tokenizer, held_out), length)
    if args.streamed:  # the recipe's pieces on disk (`StreamedCorpus.encode`)
        from keras_adl.data.text_streams import temporary_file

        encoded = train.encode(tokenizer, temporary_file("keras-adl-pieces-"))
        counts, windows = encoded.counts + 1.0, encoded.windows(length)
        data = encoded.dataset(length, WINDOW_BATCH, seed=args.seed)
    else:
        inputs, targets = lm_windows(token_lists(tokenizer, train), length)
        counts = np.bincount(targets.ravel(), minlength=tokenizer.size) + 1.0
        windows = len(inputs)
        data = (
            tf.data.Dataset.from_tensor_slices((inputs, targets))
            .shuffle(len(inputs), seed=args.seed, reshuffle_each_iteration=True)
            .repeat()
            .batch(WINDOW_BATCH, drop_remainder=True)
            .prefetch(2)
        )
    unigram = float(np.exp(-np.log(counts / counts.sum())[held_targets.ravel()].mean()))
    results = {"unigram_perplexity": unigram, "train_windows": windows}
    keras.utils.set_random_seed(args.seed)
    minutes = args.lm_minutes or args.minutes
    steps = args.lm_steps or int(minutes * 60 * 10)
    minutes = 10**6 if args.lm_steps else minutes
    gpt = RECIPES["pretrain_lm"].build_model("gpt", tokenizer.size, total_steps=steps)
    keras.utils.set_random_seed(args.seed)
    lstm, units = lstm_lm(tokenizer.size, gpt.count_params(), length)
    for name, model in (("gpt", gpt), ("lstm", lstm)):
        facts = train_for(model, data, minutes, steps)
        figures = model.evaluate(
            held_inputs, held_targets, batch_size=64, verbose=0, return_dict=True
        )
        facts.update(
            parameters=int(model.count_params()),
            perplexity=float(figures["perplexity"]),
            over_unigram=float(figures["perplexity"]) / unigram,
        )
        if name == "lstm":
            facts["units"] = units
        results[name] = facts
        print(f"{name}: {json.dumps(facts)}", flush=True)
    return gpt, results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="pretraining corpus (default: GCIDE + fortunes)")
    parser.add_argument("--fortunes", help="a fortunes directory (default: the installed one)")
    parser.add_argument("--documents", type=int, default=10**7)
    parser.add_argument(
        "--streamed",
        action="store_true",
        help="mlm and lm: read --data (default: GCIDE) as `keras-adl train --data` does, "
        "streamed from disk (`StreamedCorpus`), not into memory",
    )
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument(
        "--case",
        choices=["keep", "fold"],
        default="keep",
        help="pieces of the text as written (the recipe's) or of normalised, case-folded text "
        "(earlier versions')",
    )
    parser.add_argument("--minutes", type=float, default=10.0, help="per pretrained model")
    parser.add_argument(
        "--steps",
        type=int,
        help="the mlm part: train exactly this many steps, however long they take (the schedule's "
        "length; default: --minutes of training)",
    )
    parser.add_argument("--lm-minutes", type=float, help="per language model (default: --minutes)")
    parser.add_argument(
        "--lm-steps",
        type=int,
        help="the lm part: train each language model exactly this many steps (default: "
        "--lm-minutes of training)",
    )
    parser.add_argument("--finetune-epochs", type=int, default=10)
    parser.add_argument(
        "--finetune-rates",
        type=float,
        nargs="+",
        help="peak fine-tuning rates tried for each start (default: the recipe's)",
    )
    parser.add_argument(
        "--probe-epochs",
        type=int,
        default=0,
        help="transfer: epochs of training the classifier alone on the frozen encoder before "
        "fine-tuning (LP-FT), for each start (default: 0, the recipe's fine-tuning)",
    )
    parser.add_argument(
        "--starts",
        nargs="+",
        choices=["pretrained", "random"],
        default=["pretrained", "random"],
        help="transfer: the starts to fine-tune from, pretrained and/or random (default: both)",
    )
    parser.add_argument(
        "--windows",
        type=int,
        help="transfer: train on up to this many consecutive windows of each fortune and "
        "classify a held-out one by all of them (default: the recipe's; 1: the first only)",
    )
    parser.add_argument(
        "--mlm-rate",
        type=float,
        help="the mlm part's peak learning rate (default: the recipe's)",
    )
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=0,
        help="the mlm part, with --save: also write the pretrainer every this many steps",
    )
    parser.add_argument("--save", help="write the masked-LM pretrainer and vocabulary here")
    parser.add_argument(
        "--load",
        help="a pretrainer saved by --save, and its vocabulary, which every part then uses: "
        "the transfer part fine-tunes it, the mlm part continues its training",
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--parts",
        nargs="+",
        default=["masking", "cache", "export", "mlm", "transfer", "lm"],
        help="masking, cache, export, mlm, transfer, lm",
    )
    parser.add_argument("--out", help="write the figures to this JSON file")
    args = parser.parse_args(argv)
    if args.lm_steps is not None and args.lm_steps < 1:
        parser.error(f"--lm-steps must be a positive number of steps; received {args.lm_steps}")
    if args.steps is not None and args.steps < 1:
        parser.error(f"--steps must be a positive number of steps; received {args.steps}")
    if args.checkpoint_every < 0 or (args.checkpoint_every and not args.save):
        parser.error(
            f"--checkpoint-every needs --save and 0 or more steps; received {args.checkpoint_every}"
        )
    if args.probe_epochs < 0:
        parser.error(f"--probe-epochs must be 0 or more; received {args.probe_epochs}")
    if args.windows is not None and args.windows < 1:
        parser.error(f"--windows must be 1 or more windows; received {args.windows}")
    if args.streamed and set(args.parts) - {"mlm", "lm", "cache", "transfer"}:
        parser.error("--streamed is for the mlm and lm parts (and transfer, after mlm)")

    from keras_adl.recipes.pretraining import data
    from keras_adl.recipes.pretraining.spec import FINETUNE_WINDOWS
    from keras_adl.recipes.pretraining.tasks import RECIPES

    if args.windows is None:
        args.windows = FINETUNE_WINDOWS

    start = time.perf_counter()
    results = {}
    pretrainer = gpt = None
    if args.load:
        import keras

        pretrainer = keras.saving.load_model(os.path.join(args.load, "pretrainer.keras"))
        tokenizer = data.load_tokenizer(args.load)
    if set(args.parts) - {"cache"} and not (args.load and set(args.parts) == {"transfer"}):
        # The cache part needs only a vocabulary size; a saved pretrainer brings its own.
        if args.streamed:
            from keras_adl.data.text_corpora import GCIDE_PATH
            from keras_adl.recipes.pretraining.streaming import StreamedCorpus

            train = StreamedCorpus(args.data or GCIDE_PATH, args.documents)
            held_out, sample, count = train.held_out, train.sample, train.train_documents
        else:
            train, held_out = data.corpus(args.data, args.documents)
            sample, count = train, len(train)
        if not args.load:
            tokenizer = data.learn_tokenizer(sample, args.vocab_size, args.case == "keep")
        results = {"documents": count, "held_out_documents": len(held_out)}
        results["case"] = args.case
        results["vocabulary"] = tokenizer.size
        print(
            f"{count} training and {len(held_out)} held-out documents, {tokenizer.size} "
            f"pieces ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
    for part in args.parts:
        if part == "masking":
            results[part] = masking(tokenizer, train, args)
        elif part == "cache":
            results[part] = cache_speed(results.get("vocabulary", args.vocab_size), args)
        elif part == "mlm":
            pretrainer, results[part] = mlm(tokenizer, train, held_out, args, pretrainer)
            if args.save:
                save_pretrainer(args.save, tokenizer, pretrainer)
        elif part == "transfer":
            if pretrainer is None:
                parser.error("the transfer part needs the mlm part before it")
            results[part] = transfer(pretrainer, tokenizer, args)
        elif part == "lm":
            gpt, results[part] = lm(tokenizer, train, held_out, args)
        elif part == "export":
            if gpt is None:  # untrained weights: the check is of the export, not the model
                gpt = RECIPES["pretrain_lm"].build_model("gpt", tokenizer.size)
            prompts = [" ".join(d.split()[:3]) for d in held_out[:20]]
            results[part] = export_check(gpt, tokenizer, prompts, None)
        else:
            parser.error(f"unknown part {part!r}")
        print(f"{part}: {json.dumps(results[part])}", flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()

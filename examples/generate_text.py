"""A GPT-style causal language model: pretrain on a dictionary's text, generate, export.

The corpus is Debian's GCIDE dictionary plus the fortunes except the held-out topic ones
(``make data``), or any UTF-8 text with ``--data``. The tokenizer (WordPiece, learned here), data (windows of the corpus),
model (`keras_adl.models.gpt_lm`, tied embeddings) and schedule are those of ``keras-adl train
pretrain_lm`` (`keras_adl.recipes.pretraining`). It prints held-out perplexity against a
unigram model, continues a prompt greedily and by nucleus sampling, exports a SavedModel whose
signature takes raw prompt strings and the sampling settings, reloads it and checks that its
greedy text equals the eager one.

    python examples/generate_text.py --documents 20000 --steps 600 --out runs/generate
"""

import argparse
import json
import os
import shutil

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402,F401  (the reloaded SavedModel's text ops)

from keras_adl.data.pretraining import lm_windows  # noqa: E402
from keras_adl.models.gpt import generate  # noqa: E402
from keras_adl.recipes.pretraining import data  # noqa: E402
from keras_adl.recipes.pretraining.serving import make_generation_endpoints  # noqa: E402
from keras_adl.recipes.pretraining.spec import SIZES  # noqa: E402
from keras_adl.recipes.pretraining.tasks import RECIPES  # noqa: E402
from keras_adl.training.export import export_serving_fn  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="a text file or directory (default: GCIDE + fortunes)")
    parser.add_argument("--documents", type=int, default=20000, help="(default: %(default)s)")
    parser.add_argument("--steps", type=int, default=600, help="(default: %(default)s)")
    parser.add_argument("--vocab-size", type=int, default=4000, help="(default: %(default)s)")
    parser.add_argument("--dim", type=int, default=SIZES["model_dim"], help="model width")
    parser.add_argument("--prompt", default="A small animal")
    parser.add_argument("--out", default="runs/generate")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    train, held_out = data.corpus(args.data, args.documents)
    tokenizer = data.learn_tokenizer(train, args.vocab_size)
    length = SIZES["sequence_length"]
    inputs, targets = lm_windows(data.token_lists(tokenizer, train), length)
    held_inputs, held_targets = lm_windows(data.token_lists(tokenizer, held_out), length)
    print(f"{len(train)} documents, {len(inputs)} windows of {length}, {tokenizer.size} pieces")
    model = RECIPES["pretrain_lm"].build_model(
        "gpt",
        tokenizer.size,
        total_steps=args.steps,
        model_dim=args.dim,
        intermediate_dim=4 * args.dim,
    )
    batches = (
        tf.data.Dataset.from_tensor_slices((inputs, targets))
        .shuffle(len(inputs), seed=0)
        .repeat()
        .batch(32, drop_remainder=True)
    )
    model.fit(batches, steps_per_epoch=args.steps, epochs=1, verbose=2, shuffle=False)
    perplexity = model.evaluate(held_inputs, held_targets, verbose=0, return_dict=True)
    counts = np.bincount(targets.ravel(), minlength=tokenizer.size) + 1.0
    unigram = float(np.exp(-np.log(counts / counts.sum())[held_targets.ravel()].mean()))
    figures = {"perplexity": float(perplexity["perplexity"]), "unigram_perplexity": unigram}
    print(json.dumps(figures))

    prompt = tokenizer.tokenize(tf.constant([args.prompt])).to_tensor()
    greedy = tokenizer.detokenize(generate(model, prompt, 32)).numpy()[0].decode()
    sampled = generate(model, prompt, 32, temperature=1.0, top_p=0.9, seed=0)
    sampled = tokenizer.detokenize(sampled).numpy()[0].decode()
    print(f"greedy:  {greedy}\nsampled: {sampled}")

    export_dir = os.path.join(args.out, "export")
    shutil.rmtree(export_dir, ignore_errors=True)
    endpoints = make_generation_endpoints(model, tokenizer, 32)
    serve = endpoints.pop("serve")
    export_serving_fn(model, export_dir, serve, endpoints=endpoints)
    signatures = tf.saved_model.load(export_dir).signatures
    prompts = tf.constant([args.prompt])
    reloaded = signatures["serving_default"](prompts=prompts)["texts"].numpy()[0].decode()
    print(f"reloaded export (greedy): {reloaded}")
    settings = dict(temperature=1.0, top_k=0, top_p=0.9, seed=0, max_new_tokens=8)
    settings = {k: tf.constant(v) for k, v in settings.items()}
    drawn = signatures["sample"](prompts=prompts, **settings)["texts"].numpy()[0].decode()
    print(f"reloaded export (sampled, seed 0, 8 new pieces): {drawn}")
    return {"figures": figures, "greedy": greedy, "reloaded": reloaded, "sampled": sampled}


if __name__ == "__main__":
    main()

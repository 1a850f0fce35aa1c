"""BERT-style pretraining, then fine-tuning: does a masked-LM-pretrained encoder classify
fortunes better than the same encoder trained from scratch?

Pretraining reads Debian's GCIDE dictionary plus the fortunes other than the held-out topic
ones (``make data``), or any UTF-8 text with ``--data``: whole documents, dynamically masked
(15%, 80/10/10) in ``tf.data`` (`keras_adl.data.pretraining`), the recipe's encoder
(`keras_adl.recipes.pretraining`). It prints held-out masked-token accuracy against the
most-frequent-token baseline, then fine-tunes two classifiers on the fortune topics (the
documents family's split) — one from the pretrained encoder, one from random weights with the
same vocabulary — and prints both held-out accuracies. Fine-tuning reads each fortune as the
recipe does: up to `FINETUNE_WINDOWS` windows of 62 pieces, trained on with its label and
classified by all of them (`make_text_classifier_serving_fn`).

    python examples/pretrain_and_finetune.py --documents 50000 --steps 2000 --out runs/bert
"""

import argparse
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_adl.models.bert import encoder_of  # noqa: E402
from keras_adl.recipes.documents import data as documents_data  # noqa: E402
from keras_adl.recipes.pretraining import data  # noqa: E402
from keras_adl.recipes.pretraining.evaluate import classifier_accuracy  # noqa: E402
from keras_adl.recipes.pretraining.serving import make_text_classifier_serving_fn  # noqa: E402
from keras_adl.recipes.pretraining.spec import FINETUNE_WINDOWS, SIZES  # noqa: E402
from keras_adl.recipes.pretraining.tasks import RECIPES  # noqa: E402


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", help="pretraining text (default: GCIDE + fortunes)")
    parser.add_argument("--fortunes", help="a fortunes directory (default: the installed one)")
    parser.add_argument("--documents", type=int, default=50000, help="(default: %(default)s)")
    parser.add_argument("--steps", type=int, default=2000, help="pretraining steps")
    parser.add_argument("--epochs", type=int, default=5, help="fine-tuning epochs")
    parser.add_argument("--vocab-size", type=int, default=8000, help="(default: %(default)s)")
    parser.add_argument("--dim", type=int, default=SIZES["model_dim"], help="model width")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/bert")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(args.seed)
    sizes = dict(model_dim=args.dim, intermediate_dim=4 * args.dim)
    length = SIZES["sequence_length"]
    train, held_out = data.corpus(args.data, args.documents)
    tokenizer = data.learn_tokenizer(train, args.vocab_size)
    pretrainer = RECIPES["pretrain_mlm"].build_model(
        "bert", tokenizer.size, total_steps=args.steps, **sizes
    )
    batches = data.mlm_dataset(tokenizer, train, 64, length, seed=args.seed)
    pretrainer.fit(batches, steps_per_epoch=args.steps, epochs=1, verbose=2, shuffle=False)
    evaluation = data.mlm_dataset(tokenizer, held_out, 64, length, seed=1).take(10).cache()
    figures = pretrainer.evaluate(evaluation, verbose=0, return_dict=True)
    targets = np.concatenate([t["mlm"].numpy()[w["mlm"].numpy() > 0] for _, t, w in evaluation])
    pretraining = {
        "masked_accuracy": float(figures["mlm_accuracy"]),
        "most_frequent_token_accuracy": float(np.bincount(targets).max() / len(targets)),
    }
    print(json.dumps(pretraining))

    train_docs, train_labels, test_docs, test_labels, names, _ = documents_data.fortune_topics(
        args.fortunes, 10**9
    )
    batch = min(32, len(train_docs))
    results = {}
    for start in ("pretrained", "random"):
        # Built anew for each start, so both see the same windows in the same order.
        batches = data.text_classes(
            tokenizer, train_docs, train_labels, batch, length, True, max_windows=FINETUNE_WINDOWS
        )
        steps = int(batches.cardinality())
        keras.utils.set_random_seed(args.seed)
        encoder = encoder_of(pretrainer) if start == "pretrained" else None
        classifier = RECIPES["finetune"].build_model(
            "bert",
            tokenizer.size,
            num_classes=len(names),
            total_steps=steps * args.epochs,
            pretrained=encoder,
            **sizes,
        )
        classifier.fit(
            batches.repeat(), steps_per_epoch=steps, epochs=args.epochs, verbose=0, shuffle=False
        )
        serve = make_text_classifier_serving_fn(
            classifier, "bert", tokenizer, length, names, FINETUNE_WINDOWS
        )
        results[start] = classifier_accuracy(serve, test_docs, test_labels)
        print(f"fine-tuned from {start} weights: held-out accuracy {results[start]:.3f}")
    return {"pretraining": pretraining, "finetuning": results}


if __name__ == "__main__":
    main()

"""Attention's central claim (Bahdanau et al. 2014, Fig. 2): accuracy by input length.

`attention_seq2seq` and the no-attention `encoder_decoder` are trained identically (same units,
data, epochs, seed) to reverse random strings of length 4-32; held-out exact match and
character accuracy are reported per length group. Without attention the whole input must pass
through one fixed vector, so accuracy should fall on the longest group; with attention it should
hold.

    python benchmarks/attention_vs_length.py            # full settings (≈ 5 min on 2 cores)
    python benchmarks/attention_vs_length.py --smoke    # tiny, checks the script runs
"""

import argparse
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_adl.models import attention_seq2seq, encoder_decoder, greedy_decode  # noqa: E402
from keras_adl.tasks.dates import CharVocabulary  # noqa: E402

VOCAB = CharVocabulary("abcdefghijklmnopqrstuvwxyz")
GROUPS = [(4, 10), (11, 20), (21, 32)]


def reversal_data(num, max_length, seed):
    rng = np.random.default_rng(seed)
    letters = np.array(list(VOCAB.chars))
    sources = ["".join(rng.choice(letters, size=rng.integers(4, max_length + 1))) for _ in range(num)]
    targets = [s[::-1] for s in sources]
    return {
        "source": VOCAB.encode(sources, max_length),
        "decoder_input": VOCAB.encode(targets, max_length + 1, add_start=True),
        "target": VOCAB.encode(targets, max_length + 1, add_end=True),
        "sources": sources,
        "targets": targets,
    }


def evaluate(model, test, max_length):
    tokens = keras.ops.convert_to_numpy(greedy_decode(model, test["source"], max_length + 1)[0])
    predictions = VOCAB.decode(tokens)
    rows = []
    for low, high in GROUPS:
        idx = [i for i, s in enumerate(test["sources"]) if low <= len(s) <= high]
        exact = np.mean([predictions[i] == test["targets"][i] for i in idx])
        chars = np.mean([
            np.mean([a == b for a, b in zip(predictions[i].ljust(len(test["targets"][i])),
                                            test["targets"][i])])
            for i in idx
        ])
        rows.append((f"{low}-{high}", len(idx), exact, chars))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--train", type=int, default=30000)
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--units", type=int, default=64)
    args = parser.parse_args(argv)
    max_length = 32
    if args.smoke:
        args.train, args.epochs, args.units = 128, 1, 8
    train = reversal_data(args.train, max_length, seed=0)
    test = reversal_data(300 if args.smoke else 1500, max_length, seed=1)
    results = {}
    for name, builder in (("attention_seq2seq", attention_seq2seq),
                          ("encoder_decoder", encoder_decoder)):
        keras.utils.set_random_seed(0)
        model = builder(len(VOCAB), len(VOCAB), embedding_dim=32, units=args.units)
        model.compile(keras.optimizers.Adam(3e-3, global_clipnorm=5.0),
                      keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                      jit_compile=True)
        start = time.perf_counter()
        model.fit({"source": train["source"], "decoder_input": train["decoder_input"]},
                  train["target"], batch_size=64, epochs=args.epochs, verbose=0)
        results[name] = (evaluate(model, test, max_length), time.perf_counter() - start)
    print(f"reversal of random strings; train {args.train} × {args.epochs} epochs, units "
          f"{args.units}; held-out {len(test['sources'])}")
    print(f"{'length':>8} {'n':>5} | {'attention exact':>15} {'chars':>6} | "
          f"{'no-attention exact':>18} {'chars':>6}")
    for a, b in zip(results["attention_seq2seq"][0], results["encoder_decoder"][0]):
        print(f"{a[0]:>8} {a[1]:5d} | {a[2]:15.3f} {a[3]:6.3f} | {b[2]:18.3f} {b[3]:6.3f}")
    print(f"training time: attention {results['attention_seq2seq'][1]:.0f} s, "
          f"no attention {results['encoder_decoder'][1]:.0f} s")
    return results


if __name__ == "__main__":
    main()

"""keras-adl attention layers in a functional model: learn to look up the token after a marker.

Each input is a variable-length sequence of digits 1-9 (padded with 0) containing one marker
token 10; the label is the digit right after the marker. A Transformer encoder block builds
position-aware token states and Bahdanau attention pools them, so a trained model must put its
attention on the answer position. The script trains the model, reports held-out accuracy and
how often attention peaks on the answer, draws the attention of a few examples to a PNG,
exports a SavedModel and checks the reloaded model gives the same predictions.

    python examples/attention_layers.py --out runs/attention_layers
"""

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import keras  # noqa: E402
import numpy as np  # noqa: E402

from keras_adl.layers import (  # noqa: E402
    BahdanauAttention,
    PositionalEncoding,
    TransformerEncoderBlock,
)

MARKER, VOCAB = 10, 11


def make_data(num, max_len, rng):
    """Token ids [num, max_len] (0 = padding), labels [num], answer positions [num]."""
    tokens = np.zeros((num, max_len), "int32")
    labels = np.zeros(num, "int32")
    answer = np.zeros(num, "int32")
    for i in range(num):
        length = rng.integers(4, max_len + 1)
        seq = rng.integers(1, 10, size=length)
        pos = rng.integers(0, length - 1)
        seq[pos] = MARKER
        tokens[i, :length] = seq
        labels[i], answer[i] = seq[pos + 1], pos + 1
    return tokens, labels, answer


def build_model(dim=32):
    tokens = keras.Input((None,), dtype="int32", name="tokens")
    x = keras.layers.Embedding(VOCAB, dim, mask_zero=True)(tokens)
    x = PositionalEncoding()(x)
    x = TransformerEncoderBlock(num_heads=4, intermediate_dim=2 * dim)(x)
    summary = keras.layers.GlobalAveragePooling1D()(x)  # mask-aware mean of the states
    context, weights = BahdanauAttention(dim)(summary, x, return_attention_scores=True)
    logits = keras.layers.Dense(VOCAB, name="logits")(context)
    # One model to train, one sharing its layers that also returns the attention weights.
    return keras.Model(tokens, logits), keras.Model(
        tokens, {"logits": logits, "attention": weights}
    )


def plot_attention(tokens, weights, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(tokens), 1, figsize=(7, 1.1 * len(tokens)))
    for ax, seq, w in zip(np.atleast_1d(axes), tokens, weights):
        length = int((seq > 0).sum())
        ax.imshow(w[None, :length], cmap="viridis", vmin=0, vmax=1, aspect="auto")
        ax.set_xticks(range(length), ["*" if t == MARKER else str(t) for t in seq[:length]])
        ax.set_yticks([])
    fig.suptitle("Bahdanau attention over the sequence (* = marker)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--samples", type=int, default=4000)
    parser.add_argument("--epochs", type=int, default=12)
    parser.add_argument("--max-len", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="runs/attention_layers")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    keras.utils.set_random_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    x_train, y_train, _ = make_data(args.samples, args.max_len, rng)
    x_test, y_test, answer = make_data(max(args.samples // 4, 8), args.max_len, rng)

    model, inspector = build_model()
    model.compile(
        optimizer=keras.optimizers.Adam(3e-3),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=True,
    )
    model.fit(x_train, y_train, epochs=args.epochs, batch_size=64, verbose=2)

    out = inspector.predict(x_test, verbose=0)
    accuracy = float((out["logits"].argmax(-1) == y_test).mean())
    hit = float((out["attention"].argmax(-1) == answer).mean())
    print(f"held-out accuracy {accuracy:.3f}; attention peaks on the answer in {hit:.3f}")

    picture = os.path.join(args.out, "attention.png")
    plot_attention(x_test[:4], out["attention"][:4], picture)
    print(f"attention picture: {picture}")

    export_dir = os.path.join(args.out, "saved_model")
    inspector.export(export_dir, format="tf_saved_model", verbose=False)
    import tensorflow as tf

    reloaded = tf.saved_model.load(export_dir)
    served = reloaded.serve(tf.constant(x_test[:8]))
    same = np.allclose(served["logits"].numpy(), out["logits"][:8], atol=1e-4)
    print(f"SavedModel exported to {export_dir}; reloaded predictions match: {same}")
    if not same:
        raise SystemExit("reloaded SavedModel disagrees with the in-memory model")
    return {"accuracy": accuracy, "attention_hit": hit, "picture": picture}


if __name__ == "__main__":
    main()

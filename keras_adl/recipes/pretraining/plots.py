"""The pretraining family's pictures: the training curves and each attention head's map over
one text."""

import os

import numpy as np
import tensorflow as tf

from keras_adl.data.pretraining import pack_for_lm, pack_inputs
from keras_adl.models import bert, gpt
from keras_adl.plotting import pyplot, save_figure
from keras_adl.recipes._pictures import draw, plot_step_log

ATTENTION_PICTURE = "attention.png"
# The picture's text: the first candidate of this many pieces (else the first, cut).
ATTENTION_PIECES = (6, 22)


def plot_attention_heads(weights, tokens, path, title=None):
    """Saves every head's self-attention for one text as a heatmap grid: one row per layer,
    one column per head; in each map the rows are the attending positions (queries) and the
    columns the attended ones (keys).

    Args:
        weights: ``[layers, heads, T, T]`` weights of one example (e.g. from
            `keras_adl.models.bert.attention_weights`); trimmed to ``len(tokens)``.
        tokens: the ``T`` labels (pieces) of the positions; those in a script no installed
            font covers are drawn as boxes.
        path: PNG file to write.
        title: optional title.

    Returns:
        ``path``.

    Raises:
        ValueError: ``weights`` is not 4-D or has fewer positions than ``tokens``.
    """
    weights = np.asarray(weights, dtype="float32")
    if weights.ndim != 4:
        raise ValueError(
            f"plot_attention_heads: `weights` must be [layers, heads, T, T]; received shape "
            f"{weights.shape}."
        )
    n = len(tokens)
    if weights.shape[2] < n or weights.shape[3] < n:
        raise ValueError(
            f"plot_attention_heads: `weights` covers {weights.shape[2:]} positions, fewer than "
            f"the {n} tokens."
        )
    weights = weights[:, :, :n, :n]
    layers, heads = weights.shape[:2]
    labels = [repr(str(t))[1:-1] for t in tokens]
    side = max(2.6, 0.16 * n + 1.2)
    plt = pyplot()
    fig, axes = plt.subplots(
        layers, heads, figsize=(side * heads + 0.8, side * layers + 0.4), squeeze=False
    )
    font = max(4, min(8, int(260 / max(n, 1))))
    for i in range(layers):
        for j in range(heads):
            ax = axes[i][j]
            ax.imshow(weights[i, j], cmap="viridis", vmin=0.0, vmax=1.0)
            ax.set_xticks(range(n), labels, rotation=90, fontsize=font)
            ax.set_yticks(range(n), labels, fontsize=font)
            ax.set_title(f"layer {i + 1}, head {j + 1}", fontsize=9)
    if title:
        fig.suptitle(title)
    save_figure(fig, path, dpi=100)
    plt.close(fig)
    return path


def _bert_attention(model, ids, length):
    packed = pack_inputs(ids, length)
    token_ids = packed["token_ids"]
    return token_ids, bert.attention_weights(model, token_ids, packed["segment_ids"])


def _gpt_attention(model, ids, length):
    token_ids = pack_for_lm(ids, length)[0]
    return token_ids, gpt.attention_weights(model, token_ids)


# ``(token_ids, weights)`` of a text's piece ids as each model reads them.
ATTENTION = {"bert": _bert_attention, "gpt": _gpt_attention}


def draw_attention(model, model_name, tokenizer, texts, sequence_length, out, title):
    """Draws each head's attention over one text (`plot_attention_heads`): the first of
    ``texts`` whose length in pieces lies within `ATTENTION_PIECES`."""
    texts = [t for t in texts if t.strip()][:200]
    if not texts:
        return None
    low, high = ATTENTION_PIECES
    lengths = tokenizer.tokenize(tf.constant(texts)).row_lengths().numpy()
    text = next((t for t, n in zip(texts, lengths) if low <= n <= high), texts[0])
    ids = tokenizer.tokenize(tf.constant([text]))[:, :high]
    length = min(sequence_length, high + 2)
    token_ids, weights = ATTENTION[model_name](model, ids, length)
    n = int(tf.reduce_sum(tf.cast(token_ids[0] > 0, tf.int32)))
    pieces = [p.decode() for p in tokenizer.id_to_piece(token_ids[0, :n]).numpy()]
    return draw(
        plot_attention_heads,
        tf.convert_to_tensor(weights)[:, 0].numpy(),
        pieces,
        os.path.join(out, ATTENTION_PICTURE),
        title,
    )


def pictures(run, model, log, tokenizer, texts, sequence_length, what):
    """The run's pictures: the training curves (``training.png``) and each head's attention
    over one of ``texts`` (`ATTENTION_PICTURE`)."""
    plot_step_log(log, run.out, what)
    draw_attention(
        model,
        run.model,
        tokenizer,
        texts,
        sequence_length,
        run.out,
        f"{what}: attention per layer and head",
    )

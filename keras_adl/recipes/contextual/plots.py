"""The contextual family's picture: the learned scalar-mix weights of the ELMo features."""

import numpy as np

from keras_adl.plotting import pyplot, save_figure


def plot_scalar_mix(weights, path, gammas=None, layer_names=None, title=None):
    """Saves the learned scalar-mix weights of one or more downstream models as grouped bars:
    one group per biLM layer, one bar per model (ELMo's ``softmax(s)``).

    Args:
        weights: ``{model or task name: [L] weights}`` (each a simplex).
        path: PNG file to write.
        gammas: optional ``{name: γ}``, shown in the legend.
        layer_names: the ``L`` layer labels (default ``layer 0`` (tokens), ``layer 1``, …).
        title: optional title.

    Returns:
        ``path``.

    Raises:
        ValueError: no weights, or weight vectors of different lengths.
    """
    if not weights:
        raise ValueError("plot_scalar_mix: `weights` must name at least one model.")
    lengths = {len(np.ravel(w)) for w in weights.values()}
    if len(lengths) != 1:
        raise ValueError(
            f"plot_scalar_mix: every weight vector must have one length; received {sorted(lengths)}."
        )
    count = lengths.pop()
    layer_names = layer_names or ["layer 0\n(tokens)"] + [f"layer {j}" for j in range(1, count)]
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(1.6 + 1.4 * count, 3.4))
    width = 0.8 / len(weights)
    for i, (name, values) in enumerate(weights.items()):
        label = name if not gammas or name not in gammas else f"{name} (γ = {gammas[name]:.2f})"
        ax.bar(np.arange(count) + i * width - 0.4 + width / 2, np.ravel(values), width, label=label)
    ax.axhline(1.0 / count, color="grey", lw=0.8, ls="--")
    ax.set_xticks(np.arange(count))
    ax.set_xticklabels(layer_names)
    ax.set_ylabel("softmax(s)")
    ax.set_ylim(0, 1)
    ax.legend(fontsize=8)
    ax.set_title(title or "ELMo scalar-mix weights (dashed: uniform)")
    save_figure(fig, path, dpi=110)
    plt.close(fig)
    return path

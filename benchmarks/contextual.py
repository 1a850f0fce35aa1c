"""Contextual embeddings on two CPU cores: ELMo's biLM against a unigram model, its character
encoder on unseen inflections, CoVe's translation pretraining, and word vectors, CoVe and ELMo
as features of the fortunes classifier.

    python benchmarks/contextual.py --parts vectors bilm characters --out runs/bench   # ~15 min
    python benchmarks/contextual.py --parts cove --out runs/bench                      # ~10 min
    python benchmarks/contextual.py --parts fortunes --out runs/bench --seeds 0 1      # ~35 min

Every part trains through the contextual recipe (`keras_adl.recipes.contextual`) with its
defaults, so the figures are those of ``keras-adl train``; runs go under ``--out`` and later
parts read the earlier ones' (``vectors`` → ``cove`` and ``fortunes``; ``bilm`` →
``characters`` and ``fortunes``). Parts and their figures (issue 16):

- ``vectors``: the word2vec run (skip-gram on GCIDE, the embeddings family's defaults) whose
  vectors are the static features and CoVe's fixed inputs.
- ``bilm``: ``pretrain_bilm`` on GCIDE for at most ``--minutes`` of training; held-out forward
  and backward perplexities against a unigram model of the same words (goal ≤ 0.6× each) and
  the training / held-out perplexity ratio after every epoch (goal ≤ 2).
- ``characters``: inflections (``-s``, ``-ed``, ``-ing``) of words of Debian's ``wamerican``
  list (``make data``), by whether the form is in the word2vec vocabulary: how often each
  form's nearest neighbour among all the forms is another form of the same stem, by the
  character encoder's output (after the highway layers and the projection), by its
  max-pooled convolution features (before them) and by the word vectors with one ``<unk>``
  vector for unseen words; and whether every word of the list absent from the corpus gets a
  finite vector.
- ``cove``: the ``cove`` task on ``gettext:fr``: held-out token accuracy, BLEU and chrF greedy
  and with beam search (4), and the attention picture of a held-out message (``attention.png``
  in the run).
- ``fortunes``: ``fortunes_features`` with ``static``, ``cove``, ``elmo`` and ``elmo_top``
  features, per seed: held-out accuracy and the learned scalar-mix weights (goals: elmo ≥
  elmo_top, elmo ≥ static, cove ≥ static).
"""

import argparse
import json
import os
import time

INFLECTIONS = ("s", "ed", "ing")


def _train(task, out, **kwargs):
    import keras

    from keras_adl import recipes

    keras.utils.set_random_seed(kwargs.pop("seed", 0))
    start = time.perf_counter()
    _, history, metrics = recipes.train(task, out, overwrite=True, **kwargs)
    metrics["seconds"] = round(time.perf_counter() - start, 1)
    return metrics


def vectors(args):
    return _train("word2vec", os.path.join(args.out, "w2v"))


def bilm(args):
    from keras_adl.training.callbacks import TimeLimit

    limit = TimeLimit(args.minutes * 60)
    metrics = _train("pretrain_bilm", os.path.join(args.out, "bilm"), callbacks=[limit])
    metrics["training_steps"] = limit.steps
    metrics["training_seconds"] = round(limit.elapsed, 1)
    return metrics


def _inflected_forms(words, count, seed):
    """``count`` stems of ``words`` with every inflection of `INFLECTIONS` also in ``words``
    (regular forms only: stem + suffix), as ``{stem: [forms]}``."""
    import numpy as np

    known = set(words)
    stems = sorted(
        w
        for w in known
        if w.isalpha() and w.islower() and len(w) >= 4 and all(w + s in known for s in INFLECTIONS)
    )
    chosen = np.random.default_rng(seed).permutation(len(stems))[:count]
    return {stems[i]: [stems[i]] + [stems[i] + s for s in INFLECTIONS] for i in sorted(chosen)}


def _nearest_same_stem_rate(vectors, stems, which):
    """The share of the forms in ``which`` whose nearest neighbour (cosine, among all forms, not
    itself) is a form of the same stem; identical vectors (``<unk>``) count as a miss."""
    import numpy as np

    unit = vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-8)
    scores = unit @ unit.T
    np.fill_diagonal(scores, -np.inf)
    hits = []
    for i in np.nonzero(which)[0]:
        best = scores[i].max()
        ties = np.nonzero(scores[i] >= best - 1e-6)[0]
        hits.append(len(ties) == 1 and stems[ties[0]] == stems[i])
    return float(np.mean(hits)) if hits else None, len(hits)


def characters(args):
    import keras
    import numpy as np
    import tensorflow as tf

    from keras_adl.conventions import NUM_SPECIAL_TOKENS, UNK
    from keras_adl.models.word2vec import word_vectors
    from keras_adl.text.characters import character_ids

    with open("/usr/share/dict/american-english", encoding="utf-8") as f:
        dictionary = [line.strip() for line in f if line.strip()]
    groups = _inflected_forms(dictionary, args.stems, args.seed)
    forms = [form for group in groups.values() for form in group]
    stems = [stem for stem, group in groups.items() for _ in group]
    bilm = keras.models.load_model(os.path.join(args.out, "bilm", "model.keras"))
    length = bilm.input.shape[-1]
    ids = character_ids(tf.constant([forms]), length)
    encoder = bilm.get_layer("token_encoder")
    token_vectors = keras.ops.convert_to_numpy(encoder(ids))[0]
    convolutions = keras.ops.convert_to_numpy(encoder.convolution_features(ids))[0]
    w2v_dir = os.path.join(args.out, "w2v")
    with open(os.path.join(w2v_dir, "vocabulary.json")) as f:
        vocabulary = {w: i + NUM_SPECIAL_TOKENS for i, w in enumerate(json.load(f)["words"])}
    table = word_vectors(keras.models.load_model(os.path.join(w2v_dir, "model.keras")))
    rows = [vocabulary.get(form, UNK) for form in forms]
    seen = np.array([r != UNK for r in rows])
    word_level = table[rows]
    figures = {"stems": len(groups), "forms": len(forms), "forms_in_vocabulary": int(seen.sum())}
    from keras_adl.data.text_corpora import load_corpus, tokenize_documents

    corpus_words = {w for document in tokenize_documents(load_corpus(None)) for w in document}
    unseen = sorted({w.lower() for w in dictionary} - corpus_words)
    finite = all(
        np.isfinite(
            keras.ops.convert_to_numpy(
                encoder(character_ids(tf.constant([unseen[i : i + 4096]]), length))
            )
        ).all()
        for i in range(0, len(unseen), 4096)
    )
    figures["wamerican_words_absent_from_corpus"] = len(unseen)
    figures["wamerican_absent_all_finite"] = bool(finite)
    for name, which in (("seen", seen), ("unseen", ~seen), ("all", np.ones_like(seen))):
        for method, vectors_ in (
            ("character_encoder", token_vectors),
            ("character_convolutions", convolutions),
            ("word_vectors_unk", word_level),
        ):
            rate, count = _nearest_same_stem_rate(vectors_, stems, which)
            figures[f"{method}_{name}"] = rate
        figures[f"count_{name}"] = count
    return figures


def cove(args):
    return _train(
        "cove",
        os.path.join(args.out, "cove"),
        data=args.cove_data,
        vectors=os.path.join(args.out, "w2v"),
    )


def fortunes(args):
    results = {}
    for features in args.features:
        for seed in args.seeds:
            metrics = _train(
                "fortunes_features",
                os.path.join(args.out, f"fortunes_{features}_{seed}"),
                seed=seed,
                features=features,
                vectors=os.path.join(args.out, "w2v"),
                bilm=os.path.join(args.out, "bilm"),
                cove=os.path.join(args.out, "cove"),
            )
            results[f"{features}_seed{seed}"] = metrics
            print(json.dumps({f"{features}_seed{seed}": metrics}), flush=True)
    for features in args.features:
        accuracies = [results[f"{features}_seed{s}"]["held_out_accuracy"] for s in args.seeds]
        results[f"{features}_mean"] = sum(accuracies) / len(accuracies)
    return results


PARTS = {
    "vectors": vectors,
    "bilm": bilm,
    "characters": characters,
    "cove": cove,
    "fortunes": fortunes,
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", nargs="+", choices=list(PARTS), default=list(PARTS))
    parser.add_argument("--out", default="runs/bench_contextual")
    parser.add_argument("--minutes", type=float, default=10.0, help="biLM training budget")
    parser.add_argument("--stems", type=int, default=300, help="stems of the characters part")
    parser.add_argument("--cove-data", default="gettext:fr")
    parser.add_argument("--features", nargs="+", default=["static", "cove", "elmo", "elmo_top"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    for part in args.parts:
        figures = PARTS[part](args)
        print(json.dumps({part: figures}), flush=True)


if __name__ == "__main__":
    main()

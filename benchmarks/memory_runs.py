"""Where a translation memory helps: ``pairs`` runs compared on held-out pairs by the score of
each source's best match, the model alone, the memory alone and both, with and without the
match given to the model (``--memory input``, neural fuzzy repair).

    python benchmarks/memory_runs.py HELD_OUT.tsv runs/ru runs/ru_input --out ru_runs.json

Each run is scored as ``keras-adl evaluate`` scores it (the final code: fuzzy-match repair, a
match missing a placeholder of its source left to the model), and also:

- by match score (exact, 0.9-1, 0.7-0.9, 0.5-0.7, below 0.5): the model's chrF and the memory's;
- for a run whose model reads its matches, the same model given none (an ablation: how much
  of what it writes comes from the match);
- the combination without the rule that leaves those matches to the model.
"""

import argparse
import json
import os
import sys

BUCKETS = (("exact", None, None), ("0.9-1", 0.9, 1.0), ("0.7-0.9", 0.7, 0.9))
BUCKETS += (("0.5-0.7", 0.5, 0.7), ("<0.5", 0.0, 0.5))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("held_out", help="a source<TAB>target file the runs did not train on")
    parser.add_argument("runs", nargs="+", help="run directories of `keras-adl train pairs`")
    parser.add_argument("--out", help="write every figure and output to this JSON file")
    args = parser.parse_args(argv)

    from keras_adl.recipes.sequences import data

    sources, targets = data.load_pairs(args.held_out)
    results = {run_dir: score_run(run_dir, sources, targets) for run_dir in args.runs}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, ensure_ascii=False, indent=1)
    return 0


def score_run(run_dir, sources, targets):
    """The figures and outputs of one run on the held-out pairs."""
    import keras
    import numpy as np
    import sacrebleu
    import tensorflow as tf

    from keras_adl.recipes.sequences import data
    from keras_adl.recipes.sequences.evaluate import memory_lookup, translate, with_memory
    from keras_adl.recipes.sequences.retrieval import MatchInput
    from keras_adl.text import TranslationMemory
    from keras_adl.text.copy_through import copied_spans

    record = json.load(open(os.path.join(run_dir, "run.json")))
    tokenizer = data.read_tokenizer(run_dir)
    stored = data.read_memory(run_dir)
    if stored is None:
        raise SystemExit(f"{run_dir}: a run without a memory (--memory off) has nothing to compare")
    model = keras.saving.load_model(os.path.join(run_dir, "model.keras"))
    memory = TranslationMemory(stored["sources"], stored["targets"])
    found = memory_lookup(memory, sources, tokenizer.copy)
    length = record["max_length"]
    references = [t.decode() for t in tokenizer.normalize_target(tf.constant(targets)).numpy()]
    retrieved = tokenizer.normalize_target(tf.constant(list(found["target"]), tf.string))
    retrieved = [t.decode() for t in retrieved.numpy()]
    systems = {"memory": retrieved}
    encode = None
    if stored["input"]:
        match_input = MatchInput(tokenizer)

        def encode(batch):
            return match_input.encode(memory, batch, length)

        def unmatched(batch):  # the ablation: no match given
            none = memory.lookup(batch)
            none = dict(
                none, index=-tf.ones_like(none["index"]), target=tf.fill(tf.shape(batch), "")
            )
            return match_input.ids(batch, none, length)

        systems["model without its matches"] = translate(
            record["model"], model, tokenizer, sources, length, unmatched
        )[0]
    alone = translate(record["model"], model, tokenizer, sources, length, encode)[0]
    systems["model"] = alone
    normalised = dict(found, target=retrieved)
    threshold = stored["threshold"]
    systems["model + memory"] = with_memory(alone, normalised, threshold)[0]
    loose = {k: v for k, v in normalised.items() if k != "complete"}
    systems["model + memory, incomplete matches too"] = with_memory(alone, loose, threshold)[0]
    score = np.asarray(found["score"])
    exact = np.asarray(found["exact"])
    figures = {}
    for name, outputs in systems.items():
        row = {
            "chrf": sacrebleu.corpus_chrf(outputs, [references]).score,
            "bleu": sacrebleu.corpus_bleu(outputs, [references]).score,
            "exact_match": float(np.mean([o == r for o, r in zip(outputs, references)])),
            "spans": copied_spans(sources, targets, outputs)["all"]["reproduced"],
        }
        for bucket, low, high in BUCKETS:
            inside = exact if low is None else (~exact & (score >= low) & (score < high))
            if inside.any():
                picked = np.flatnonzero(inside)
                row[bucket] = {
                    "pairs": int(inside.sum()),
                    "chrf": sacrebleu.corpus_chrf(
                        [outputs[i] for i in picked], [[references[i] for i in picked]]
                    ).score,
                }
        figures[name] = row
        print(f"{run_dir} {name}: " + json.dumps(row), flush=True)
    return {"figures": figures, "threshold": threshold, "outputs": systems}


if __name__ == "__main__":
    sys.exit(main())

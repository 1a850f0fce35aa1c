"""Translation on real text: gettext English→<lang> messages, the models of the ``pairs`` task
against a translation memory, on one seeded held-out split.

    python benchmarks/translation.py --lang fr --minutes 10 --out fr.json
    python benchmarks/translation.py --lang de --minutes 10 --systems tm attention_seq2seq/subword
    python benchmarks/translation.py --languages de fr es it pl zh_CN --minutes 30 \
        --systems tm transformer_seq2seq/subword+tm --out results/

The data is `keras_adl.data.gettext_catalogs.load_gettext_pairs(lang)` (the ``.mo`` catalogs
installed on the machine), held out as ``keras-adl train pairs --data gettext:LANG`` holds it
out (the recipe's seed and fraction; all the other pairs train, as ``--samples`` allows). Systems:

- ``tm``, the anchor: a translation memory, what a translator would use. It returns the stored
  translation of the training source most similar to the input (cosine of character 2-4-gram
  tf-idf vectors, scikit-learn).
- ``MODEL/TOKENS+tm``: the ``pairs`` recipe's default, the model completed by the translation
  memory (``--memory auto``): the training pairs are the memory
  (`keras_adl.text.TranslationMemory`, the same similarity as ``tm``); 10% of the training
  pairs that fit the model (at most 500) are set aside from its training to choose the score
  from which a match is trusted; an exact match always is. Its entry also gives the figures of
  the same model alone (``model``) and the share answered by the memory.
- ``MODEL/TOKENS+input``: the same, and the model reads each source's best match and its
  score as well (``--memory input``, neural fuzzy repair, `keras_adl.recipes.sequences.retrieval`):
  trained on each pair with its best match among the other training pairs.
- ``MODEL/TOKENS``: a model of the ``pairs`` task (``attention_seq2seq``, ``encoder_decoder``,
  ``transformer_seq2seq``) with ``subword`` (WordPiece, ``--vocab-size`` per side) or ``word``
  tokens (the pipeline before subwords: every training word kept), built, compiled and fed by
  the sequences recipe (its settings, XLA on), trained for ``--minutes`` of wall-clock time
  (``MODEL/TOKENS:MINUTES`` sets one system's own; the time to learn the vocabulary is not
  included), then decoded greedily.

The headline figures are sacreBLEU's on raw text, as a user reads it: outputs and references
as written (`keras_adl.text.normalization.surface_text`: NFC, single spaces; the subword
models keep the target's case and spacing, ``--target-case keep``). ``normalized`` repeats them
with every output and reference normalised one way (NFKC, case folding, words, punctuation and
symbols separated by spaces: `keras_adl.text.normalization.joined_words`), as this benchmark
scored before, so that systems with different tokenizers are scored alike. Figures: corpus BLEU and chrF
(sacrebleu), exact match, each in all and by source length in words; each system's chrF as a
ratio of the translation memory's; and, for each pair of models differing only in attention,
the mean per-sentence chrF difference by source length with its standard error (the Bahdanau
figure on real data).
"""

import argparse
import json
import math
import os
import sys
import time

DEFAULT_SYSTEMS = (
    "tm",
    "transformer_seq2seq/subword+tm",
    "attention_seq2seq/subword",
    "encoder_decoder/subword",
    "transformer_seq2seq/subword",
    "attention_seq2seq/word",
)


def surface(texts):
    """Each string as written, in NFC with single spaces (the raw-text scoring)."""
    import tensorflow as tf

    from keras_adl.text.normalization import surface_text

    return [t.decode() for t in surface_text(tf.constant(texts)).numpy()]


def canonical(texts):
    """Each string normalised the one way every system is scored in."""
    import tensorflow as tf

    from keras_adl.text.normalization import joined_words

    return [t.decode() for t in joined_words(tf.constant(texts)).numpy()]


def translation_memory(train_sources, train_targets, sources, batch=512):
    """The stored target of the most similar training source (character n-gram tf-idf)."""
    import numpy as np
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, lowercase=True
    )
    memory = vectorizer.fit_transform(train_sources)
    outputs = []
    for start in range(0, len(sources), batch):
        similarity = vectorizer.transform(sources[start : start + batch]) @ memory.T
        nearest = np.asarray(similarity.argmax(axis=1)).ravel()
        outputs += [train_targets[i] for i in nearest]
    return outputs


def train_model(model_name, tokens, minutes, train, held_sources, args, memory=None):
    """Trains one model for ``minutes`` and returns its outputs and training facts; with
    ``memory`` (``"auto"`` or ``"input"``, as the recipe's ``--memory``), the outputs completed
    by the translation memory of the training pairs (a development split set aside from
    training chooses its threshold, as the recipe does), and with ``"input"`` the model reads
    each source's best match."""
    import tensorflow as tf

    from keras_adl.recipes.sequences.data import fitting_pairs
    from keras_adl.recipes.sequences.evaluate import translate
    from keras_adl.recipes.sequences.tasks import RECIPES
    from keras_adl.text import TextPairTokenizer
    from keras_adl.training.callbacks import TimeLimit

    tf.keras.utils.set_random_seed(args.seed)
    start = time.perf_counter()
    vocab_size = args.vocab_size if tokens == "subword" else None  # word: every word, as before
    tokenizer = TextPairTokenizer.build(
        *train,
        level=tokens,
        vocab_size=vocab_size,
        cased_target=tokens == "subword",
        copy_through=args.copy_through if tokens == "subword" else "off",
    )
    vocabulary_seconds = time.perf_counter() - start
    sources, targets, too_long = fitting_pairs(tokenizer, *train, args.max_length)
    development = ([], [])
    if memory:
        from keras_adl.recipes._development import development_rows
        from keras_adl.recipes.sequences.spec import MEMORY_DEVELOPMENT_PAIRS

        rows = development_rows(len(sources), MEMORY_DEVELOPMENT_PAIRS)
        if rows is None:
            raise SystemExit(f"{len(sources)} training pairs: too few to set some aside")
        development = ([sources[i] for i in rows[1]], [targets[i] for i in rows[1]])
        sources, targets = [sources[i] for i in rows[0]], [targets[i] for i in rows[0]]
    match_input, encode = None, {}
    if memory == "input":
        from keras_adl.recipes.sequences.retrieval import MatchInput
        from keras_adl.text.translation_memory import TranslationMemory

        match_input = MatchInput(tokenizer)
    source_size = match_input.vocab_size if match_input else tokenizer.source_size
    model = RECIPES["pairs"].build_model(
        model_name, source_size, tokenizer.target_size, jit_compile=True
    )
    start = time.perf_counter()
    if match_input is None:
        dataset = tokenizer.dataset(
            sources, targets, args.batch_size, args.max_length, args.max_length, seed=args.seed
        )
    else:  # each pair with its best match among the other training pairs
        dataset = match_input.dataset(
            TranslationMemory(sources, targets),
            sources,
            targets,
            args.batch_size,
            args.max_length,
            seed=args.seed,
        )

        def reads(stored):  # `translate`'s encode: the sources with their matches in `stored`
            return lambda batch: match_input.encode(stored, batch, args.max_length)

        encode = {"encode": reads}
    retrieval_seconds = time.perf_counter() - start
    limit = TimeLimit(60 * minutes)
    start = time.perf_counter()
    history = model.fit(dataset, epochs=10_000, callbacks=[limit], verbose=0)
    train_seconds = time.perf_counter() - start
    start = time.perf_counter()
    everything = TranslationMemory(*train) if match_input else None
    outputs, _, _ = translate(
        model_name,
        model,
        tokenizer,
        held_sources,
        args.max_length,
        encode["encode"](everything) if encode else None,
    )
    extra = {"retrieval_seconds": round(retrieval_seconds, 1)} if encode else {}
    if memory:
        from keras_adl.recipes.sequences.evaluate import (
            choose_memory_threshold,
            memory_lookup,
            with_memory,
        )
        from keras_adl.text.translation_memory import TranslationMemory

        aside = set(development[0])
        kept = TranslationMemory(*zip(*[(s, t) for s, t in zip(*train) if s not in aside]))
        dev_outputs, _, _ = translate(
            model_name,
            model,
            tokenizer,
            development[0],
            args.max_length,
            encode["encode"](kept) if encode else None,
        )
        found = memory_lookup(kept, development[0], tokenizer.copy)
        threshold, figures = choose_memory_threshold(tokenizer, dev_outputs, found, development[1])
        found = memory_lookup(everything or TranslationMemory(*train), held_sources, tokenizer.copy)
        extra = {
            **extra,
            "model_outputs": surface(outputs),
            "memory_threshold": threshold,
            "memory_development": figures,
            "development_pairs": len(development[0]),
        }
        outputs, chosen = with_memory(outputs, found, threshold)
        extra["from_memory"] = float(chosen.mean())
    return outputs, {
        **extra,
        "vocabulary_seconds": round(vocabulary_seconds, 1),
        "train_seconds": round(train_seconds, 1),
        "decode_seconds": round(time.perf_counter() - start, 1),
        "steps": limit.steps,
        "epochs": len(history.history["loss"]),
        "final_loss": float(history.history["loss"][-1]),
        "copy_through": list(tokenizer.copy.classes)
        + (["foreign"] if tokenizer.copy.foreign else []),
        "foreign_words_kept": len((tokenizer.copy.foreign or {}).get("kept", [])),
        "source_vocabulary": tokenizer.source_size,
        "target_vocabulary": tokenizer.target_size,
        "train_pairs": len(sources),
        "train_pairs_too_long": too_long,
        "parameters": model.count_params(),
    }


def bucket_names():
    from keras_adl.recipes.sequences.evaluate import LENGTH_BUCKETS, length_bucket_name

    return [length_bucket_name(low, high) for low, high in LENGTH_BUCKETS]


def bucket_of(length):
    from keras_adl.recipes.sequences.evaluate import LENGTH_BUCKETS

    for (low, high), name in zip(LENGTH_BUCKETS, bucket_names()):
        if length >= low and (high is None or length <= high):
            return name
    return None


def attention_effect(with_attention, without, lengths):
    """Mean per-sentence chrF difference (with − without attention) and its standard error,
    in all and by source-length bucket."""
    import numpy as np

    difference = np.asarray(with_attention) - np.asarray(without)
    groups = {"all": np.ones(len(difference), bool)}
    for name in bucket_names():
        inside = np.array([bucket_of(n) == name for n in lengths])
        if inside.any():
            groups[name] = inside
    return {
        name: {
            "mean": float(difference[m].mean()),
            "standard_error": float(difference[m].std(ddof=1) / math.sqrt(m.sum()))
            if m.sum() > 1
            else float("nan"),
            "pairs": int(m.sum()),
        }
        for name, m in groups.items()
    }


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lang", default="fr")
    parser.add_argument(
        "--languages",
        nargs="+",
        help="several languages, one after the other (each alone on the machine); --out is "
        "then a directory, one LANG.json each, and a summary table is printed at the end",
    )
    parser.add_argument("--systems", nargs="+", default=list(DEFAULT_SYSTEMS))
    parser.add_argument("--minutes", type=float, default=10.0, help="training time per model")
    parser.add_argument("--vocab-size", type=int, default=4000)
    parser.add_argument("--max-length", type=int, default=32)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--copy-through",
        default="auto",
        choices=("auto", "off"),
        help="subword systems: copy placeholders… exactly (the recipe's default, auto)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=0, help="TensorFlow threads (0: all)")
    parser.add_argument("--out", help="write every figure and output to this JSON file")
    parser.add_argument(
        "--append",
        action="store_true",
        help="keep the systems already in --out (same language) and add these",
    )
    args = parser.parse_args(argv)
    if not args.languages:
        run(args)
        return 0
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    everything = {}
    for lang in args.languages:
        one = argparse.Namespace(**vars(args))
        one.lang = lang
        one.out = os.path.join(args.out, f"{lang}.json") if args.out else None
        everything[lang] = run(one)
    print(summary(everything))
    return 0


def run(args):
    """One language: every system of ``args.systems`` trained and scored; the results dict."""
    import sacrebleu
    import tensorflow as tf

    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    from keras_adl.data.gettext_catalogs import load_gettext_pairs
    from keras_adl.data.text_pairs import split_pairs
    from keras_adl.recipes.sequences.evaluate import translation_scores
    from keras_adl.recipes.sequences.spec import SPLIT_SEED, VALIDATION_SPLIT
    from keras_adl.text.copy_through import copied_spans
    from keras_adl.text.normalization import word_tokens

    sources, targets = load_gettext_pairs(args.lang)
    train, (held_sources, held_targets) = split_pairs(
        sources, targets, VALIDATION_SPLIT, SPLIT_SEED
    )
    references = surface(held_targets)
    normalized_references = canonical(held_targets)
    lengths = [int(n) for n in word_tokens(tf.constant(held_sources)).row_lengths().numpy()]
    print(
        f"gettext en→{args.lang}: {len(sources)} pairs, {len(train[0])} for training, "
        f"{len(held_sources)} held out; {args.minutes:g} min per model",
        flush=True,
    )
    results = {"lang": args.lang, "minutes": args.minutes, "systems": {}}
    if args.append and args.out and os.path.isfile(args.out):
        with open(args.out) as f:
            results = json.load(f)
        if results["lang"] != args.lang:
            raise SystemExit(f"{args.out} holds en→{results['lang']}, not en→{args.lang}")
        if results.get("held_out") != held_sources:  # e.g. a package added a catalog since
            raise SystemExit(f"{args.out} was scored on other held-out pairs; start a new file")
    results["held_out"] = held_sources
    for system in args.systems:
        start = time.perf_counter()
        if system == "tm":
            outputs, facts = translation_memory(*train, held_sources), {}
        else:
            model_name, tokens = system.split(":")[0].split("/")
            suffix = tokens.partition("+")[2]
            if suffix not in ("", "tm", "input"):
                raise SystemExit(f"{system}: a system ends in +tm, +input or nothing")
            memory = {"tm": "auto", "input": "input"}.get(suffix)
            tokens = tokens.partition("+")[0]
            minutes = float(system.split(":")[1]) if ":" in system else args.minutes
            outputs, facts = train_model(
                model_name, tokens, minutes, train, held_sources, args, memory=memory
            )
            facts["minutes"] = minutes
            if memory:  # the same model alone, scored as every system is
                alone = facts.pop("model_outputs")
                facts["model"] = translation_scores(alone, references, lengths)
                facts["model"]["copied_spans"] = copied_spans(held_sources, held_targets, alone)
                del facts["model"]["by_source_length"]
        outputs = surface(outputs)
        scores = translation_scores(outputs, references, lengths)
        normalized = translation_scores(canonical(outputs), normalized_references, lengths)
        scores["normalized"] = {k: normalized[k] for k in ("bleu", "chrf", "exact_match")}
        scores["copied_spans"] = copied_spans(held_sources, held_targets, outputs)
        scores["sentence_chrf"] = [
            sacrebleu.sentence_chrf(o, [r]).score for o, r in zip(outputs, references)
        ]
        scores.update(facts, seconds=round(time.perf_counter() - start, 1))
        scores["examples"] = list(zip(held_sources[:5], outputs[:5], references[:5]))
        results["systems"][system] = scores
        print(
            f"{system}: raw text BLEU {scores['bleu']:.1f} chrF {scores['chrf']:.1f} exact "
            f"{scores['exact_match']:.3f}; normalized BLEU {normalized['bleu']:.1f} chrF "
            f"{normalized['chrf']:.1f}; spans reproduced "
            f"{scores['copied_spans']['all']['reproduced']} ({json.dumps(facts)})",
            flush=True,
        )
        if args.out:
            with open(args.out, "w") as f:
                json.dump(results, f, ensure_ascii=False, indent=1)
    systems = results["systems"]
    for attention, plain in (
        ("attention_seq2seq/subword", "encoder_decoder/subword"),
        ("attention_seq2seq/word", "encoder_decoder/word"),
    ):
        if attention in systems and plain in systems:
            results[f"attention_effect {attention} - {plain}"] = attention_effect(
                systems[attention]["sentence_chrf"], systems[plain]["sentence_chrf"], lengths
            )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, ensure_ascii=False, indent=1)
    print(report(results))
    return results


def summary(everything):
    """One row per language: the memory's chrF, and each system's with its ratio to it."""
    names = sorted({name for results in everything.values() for name in results["systems"]})
    names = [n for n in names if n != "tm"]
    lines = [
        "| language | held-out pairs | TM chrF | "
        + " | ".join(f"{n} chrF (÷ TM)" for n in names)
        + " | spans reproduced |",
        "|---|---:|---:|" + "---:|" * len(names) + "---|",
    ]
    for lang, results in everything.items():
        systems = results["systems"]
        anchor = systems.get("tm", {}).get("chrf")
        cells = []
        for name in names:
            s = systems.get(name)
            if s is None:
                cells.append("-")
                continue
            ratio = f" ({s['chrf'] / anchor:.2f})" if anchor else ""
            alone = f"; alone {s['model']['chrf']:.1f}" if "model" in s else ""
            cells.append(f"{s['chrf']:.1f}{ratio}{alone}")
        spans = "; ".join(
            f"{n}: {s['copied_spans']['all']['reproduced']:.1%}"
            for n, s in systems.items()
            if s["copied_spans"]["all"]["reproduced"] is not None
        )
        pairs = next(iter(systems.values()))["pairs"] if systems else 0
        tm = f"{anchor:.1f}" if anchor else "-"
        lines.append(f"| {lang} | {pairs} | {tm} | " + " | ".join(cells) + f" | {spans} |")
    return "\n".join(lines)


def report(results):
    """The markdown table of RESULTS.md from a results dict."""
    systems = results["systems"]
    anchor = systems.get("tm", {}).get("chrf")
    lines = [
        f"gettext en→{results['lang']} (held-out pairs: "
        f"{next(iter(systems.values()))['pairs'] if systems else 0})",
        "",
        "| system | minutes | steps | BLEU | chrF | chrF / TM | exact | chrF 1-6 | chrF 7-12 | "
        "chrF 13+ |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name, s in systems.items():
        by = s.get("by_source_length", {})
        cells = [f"{by[b]['chrf']:.1f}" if b in by else "-" for b in bucket_names()]
        ratio = f"{s['chrf'] / anchor:.2f}" if anchor else "-"
        lines.append(
            f"| {name.split(':')[0]} | {s.get('minutes', '-')} | {s.get('steps', '-')} | "
            f"{s['bleu']:.1f} | {s['chrf']:.1f} | {ratio} | {s['exact_match']:.3f} | "
            + " | ".join(cells)
            + " |"
        )
        if "model" in s:  # a +tm or +input system: its model alone, then the memory's share
            m = s["model"]
            ratio = f"{m['chrf'] / anchor:.2f}" if anchor else "-"
            lines.append(
                f"| {name.split(':')[0]} model alone (same weights) | | | "
                f"{m['bleu']:.1f} | {m['chrf']:.1f} | {ratio} | {m['exact_match']:.3f} | - | - | - |"
            )
            lines.append(
                f"| (threshold {s['memory_threshold']:.2f}: the memory answered "
                f"{s['from_memory']:.1%}) | | | | | | | | | |"
            )
    for key, effect in results.items():
        if key.startswith("attention_effect"):
            lines += ["", f"{key[len('attention_effect ') :]}, per-sentence chrF:"]
            lines += [
                f"- {bucket}: {e['mean']:+.2f} ± {e['standard_error']:.2f} ({e['pairs']} pairs)"
                for bucket, e in effect.items()
            ]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())

"""Retrieval-augmented translation (``--memory input``): the encoder's input of a source and
its best match, a pair never retrieving itself in training, a model that learns to use the
matches of pairs it never trained on, and matches missing a placeholder left to the model."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.conventions import NUM_SPECIAL_TOKENS
from keras_adl.models import (
    attention_seq2seq,
    greedy_decode,
    transformer_greedy_decode,
    transformer_seq2seq,
)
from keras_adl.recipes.sequences.build import compile_seq2seq
from keras_adl.recipes.sequences.retrieval import (
    MIN_MATCH_SCORE,
    SCORE_LEVELS,
    MatchInput,
    complete_matches,
)
from keras_adl.recipes.sequences.serving import make_text_pair_serving_fn
from keras_adl.text import TextPairTokenizer, TranslationMemory

SOURCES = ["open the file", "save the file", "close the window", "quit"]
TARGETS = ["ouvrir le fichier", "enregistrer le fichier", "fermer la fenêtre", "quitter"]


def _word_input():
    return MatchInput(TextPairTokenizer.build(SOURCES, TARGETS, level="word"))


def test_the_input_is_the_source_its_score_in_tenths_and_the_match_in_target_ids():
    inputs = _word_input()
    tok = inputs.tokenizer
    memory = TranslationMemory(SOURCES, TARGETS)
    queries = tf.constant(["open the files", "quit", "zzz", "", "close the window"])
    found = {k: v.numpy() for k, v in memory.lookup(queries).items()}
    ids = inputs.encode(memory, queries, 4).numpy()
    assert ids.shape == (5, 9) and ids.dtype == np.int32
    assert inputs.vocab_size == tok.source_size + SCORE_LEVELS + tok.target_size
    source = tok.encode_source(queries, 4).numpy()
    # "open the files": its 3 source ids, the score's tenth, the 3 target ids of its match.
    level = int(np.floor(found["score"][0] * 10))
    assert 5 <= level < 10
    target_ids = tok.encode_target(tf.constant(["ouvrir le fichier"]), 4)[1].numpy()[0, :3]
    expected = [*source[0, :3], tok.source_size + level]
    expected += [tok.source_size + SCORE_LEVELS + int(t) for t in target_ids]
    np.testing.assert_array_equal(ids[0], expected + [0] * (9 - len(expected)))
    # An exact match: score token 10, the stored target.
    assert ids[1, 1] == tok.source_size + SCORE_LEVELS - 1
    assert found["score"][2] < MIN_MATCH_SCORE  # no match given: the source alone
    np.testing.assert_array_equal(ids[2], np.pad(source[2], (0, 5)))
    assert not ids[3].any()  # a blank input: nothing
    # Every id is inside the embedding table; the match's never collide with the source's.
    assert ids.max() < inputs.vocab_size
    assert (ids[0, 4:7] >= tok.source_size + SCORE_LEVELS + NUM_SPECIAL_TOKENS).all()


def test_each_part_is_cut_to_max_length():
    inputs = _word_input()
    long_source = " ".join(["open"] * 9)
    memory = TranslationMemory([long_source], [" ".join(["ouvrir"] * 9)])
    ids = inputs.encode(memory, tf.constant([long_source + " the"]), 3).numpy()
    tok = inputs.tokenizer
    open_id = tok.encode_source(tf.constant(["open"]), 1).numpy()[0, 0]
    ouvrir = tok.encode_target(tf.constant(["ouvrir"]), 1)[1].numpy()[0, 0]
    assert ids.shape == (1, 7)
    assert ids[0, :3].tolist() == [open_id] * 3
    assert ids[0, 3] >= tok.source_size  # the score
    assert ids[0, 4:].tolist() == [tok.source_size + SCORE_LEVELS + ouvrir] * 3


def test_a_fuzzy_match_is_repaired_and_slotted_as_the_target_of_its_query():
    sources = ["Cannot open %s", "Cannot read %d files", "Use --all"]
    targets = ["Impossible d'ouvrir %s", "Impossible de lire %d fichiers", "Utilisez --all"]
    tok = TextPairTokenizer.build(sources * 4, targets * 4, vocab_size=80, copy_through=["format"])
    inputs = MatchInput(tok)
    memory = TranslationMemory(sources, targets)
    query = tf.constant(["Cannot read %s files"])
    ids = inputs.encode(memory, query, 12).numpy()[0]
    # The match's %d became the query's %s: its target reads as the query's own target would.
    wanted = tok.ragged_ids(tf.constant(["Impossible de lire %s fichiers"]), "target", query)
    source = tok.ragged_ids(query, "source")
    start = int(source.row_lengths()[0]) + 1
    got = ids[start : start + int(wanted.row_lengths()[0])] - tok.source_size - SCORE_LEVELS
    assert got.tolist() == wanted[0].numpy().tolist()


def test_a_training_pair_never_retrieves_itself():
    inputs = _word_input()
    sources, targets = ["open the file", "open the files"], ["ouvrir", "enregistrer"]
    memory = TranslationMemory(sources, targets)
    batches = inputs.dataset(memory, sources, targets, 2, 4, shuffle=False)
    ((x, _),) = list(batches)
    tok = inputs.tokenizer
    offset = tok.source_size + SCORE_LEVELS
    ouvrir, enregistrer = (
        tok.encode_target(tf.constant([t]), 1)[1].numpy()[0, 0] + offset for t in targets
    )
    # Each reads the other's translation; held out (not stored), each reads its own.
    assert ouvrir not in x["source"][0] and enregistrer in x["source"][0]
    assert enregistrer not in x["source"][1] and ouvrir in x["source"][1]
    held = inputs.dataset(memory, sources, targets, 2, 4, stored=False, shuffle=False)
    ((x, _),) = list(held)
    assert ouvrir in x["source"][0] and enregistrer in x["source"][1]
    served = inputs.encode(memory, tf.constant(sources), 4).numpy()  # as the export reads them
    np.testing.assert_array_equal(x["source"], served)


@pytest.mark.slow  # ~400 training steps
def test_the_model_learns_to_translate_from_matches_of_pairs_it_never_saw():
    """Each concept (a made-up word) has an arbitrary three-word translation, shared by its
    variants (a trailing word). Trained with leave-one-out matches, the model answers a
    variant of a concept it never trained on from the memory's other variant of it."""
    rng = np.random.default_rng(0)
    letters = list("abcdefghijklmnopqrstuvwxyz")
    words = [f"w{i}" for i in range(12)]
    variants = ["alpha", "beta", "gamma"]

    def concepts(count):
        names = ["".join(rng.choice(letters, 9)) for _ in range(count)]
        meanings = [" ".join(rng.choice(words, 3)) for _ in range(count)]
        return names, meanings

    def pairs(names, meanings, which):
        return [f"{n} {v}" for n in names for v in which], [m for m in meanings for _ in which]

    seen, unseen = concepts(120), concepts(40)
    sources, targets = pairs(*seen, variants)
    tok = TextPairTokenizer.build(sources, targets, level="word")
    inputs = MatchInput(tok)
    keras.utils.set_random_seed(0)
    model = transformer_seq2seq(
        inputs.vocab_size, tok.target_size, model_dim=32, num_heads=2, intermediate_dim=64
    )
    compile_seq2seq(model, 3e-3, jit_compile=False)
    memory = TranslationMemory(sources, targets)
    model.fit(inputs.dataset(memory, sources, targets, 36, 4), epochs=40, verbose=0)
    # The unseen concepts' "alpha" variants are in the memory; their "beta" ones are asked.
    stored = pairs(*unseen, ["alpha"])
    queries, references = pairs(*unseen, ["beta"])
    ids = inputs.encode(TranslationMemory(*stored), tf.constant(queries), 4)
    tokens, _, _ = transformer_greedy_decode(model, ids, 4)
    outputs = [t.decode() for t in tok.decode_target(tokens).numpy()]
    exact = np.mean([o == r for o, r in zip(outputs, references)])
    assert exact >= 0.9, list(zip(outputs, references))[:5]


def test_a_fuzzy_match_missing_a_placeholder_of_its_input_is_left_to_the_model():
    sources = ["Cannot open %s", "Cannot open the file"]
    targets = ["Impossible d'ouvrir %s", "Impossible d'ouvrir le fichier"]
    queries = tf.constant(["Cannot open %s now", "Cannot open %d files", "Cannot open the files"])
    complete = complete_matches(queries, tf.constant([targets[0], targets[0], targets[1]]))
    assert complete.numpy().tolist() == [True, False, True]
    tok = TextPairTokenizer.build(sources, targets, level="word")
    model = attention_seq2seq(tok.source_size, tok.target_size, 8, 16)
    memory = TranslationMemory(sources, targets)
    serve = make_text_pair_serving_fn(model, tok, 6, 6, greedy_decode, memory, threshold=0.0)
    out = serve(queries)
    assert out["from_memory"].numpy().tolist() == [True, False, True]
    assert [o.decode() for o in out["output"].numpy()][::2] == targets

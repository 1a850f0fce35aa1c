"""Pretraining data: packing with [CLS]/[SEP] and segments, BERT's masking statistics, whole
words, next-sentence pairs, causal-LM windows and the windows of a text a classifier reads."""

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.data.pretraining import (
    CLS,
    FIRST_PIECE,
    MASK,
    MASK_PIECE,
    SEP,
    continuation_table,
    lm_windows,
    mask_tokens,
    pack_for_lm,
    pack_inputs,
    pretraining_vocabulary,
    sentence_pairs,
    text_windows,
    word_starts_of,
)
from keras_adl.text.wordpiece import WordPieceTokenizer

VOCAB = 300


def _packed_batch(rows=1600, length=128, seed=0):
    rng = np.random.default_rng(seed)
    first = [list(rng.integers(FIRST_PIECE, VOCAB, rng.integers(1, 70))) for _ in range(rows)]
    second = [list(rng.integers(FIRST_PIECE, VOCAB, rng.integers(1, 70))) for _ in range(rows)]
    return pack_inputs(tf.ragged.constant(first), length, tf.ragged.constant(second))


def test_packing_puts_specials_and_segments_and_trims_round_robin():
    packed = pack_inputs(tf.ragged.constant([[7, 8, 9, 10, 11], [5]]), 7, [[6, 12, 13], [14]])
    ids = packed["token_ids"].numpy().tolist()
    # Budget 4: the long first segment and the second share it round-robin.
    assert ids == [[CLS, 7, 8, SEP, 6, 12, SEP], [CLS, 5, SEP, 14, SEP, 0, 0]]
    assert packed["segment_ids"].numpy().tolist() == [[0, 0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 0, 0]]
    assert packed["padding_mask"].numpy().tolist()[1] == [True] * 5 + [False] * 2
    single = pack_inputs(tf.ragged.constant([[7, 8]]), 5)
    assert single["token_ids"].numpy().tolist() == [[CLS, 7, 8, SEP, 0]]
    with pytest.raises(ValueError, match="`sequence_length` must be at least 4"):
        pack_inputs([[7]], 3, [[8]])


def test_masking_statistics_follow_bert():
    packed = _packed_batch()
    ids = packed["token_ids"]
    out = mask_tokens(ids, VOCAB, seed=[3, 4], max_predictions=40)
    ids, masked = ids.numpy(), out["token_ids"].numpy()
    positions, targets = out["mask_positions"].numpy(), out["mask_ids"].numpy()
    weights = out["mask_weights"].numpy()
    eligible = ids >= FIRST_PIECE
    assert eligible.sum() >= 100_000
    rows, slots = np.nonzero(weights)
    chosen = positions[rows, slots]
    assert (targets[rows, slots] == ids[rows, chosen]).all()
    assert eligible[rows, chosen].all()  # never [CLS], [SEP] or padding
    assert len(rows) / eligible.sum() == pytest.approx(0.15, abs=0.005)
    replaced = masked[rows, chosen]
    as_mask = np.mean(replaced == MASK)
    kept = np.mean(replaced == ids[rows, chosen])
    random = 1 - as_mask - kept
    # A random replacement equals the original 1/295 of the time: counted as kept.
    assert as_mask == pytest.approx(0.8, abs=0.015)
    assert kept == pytest.approx(0.1 + 0.1 / (VOCAB - FIRST_PIECE), abs=0.015)
    assert random == pytest.approx(0.1, abs=0.015)
    assert (replaced >= FIRST_PIECE).sum() + (replaced == MASK).sum() == len(replaced)
    # Positions not selected are untouched; padded slots are zero with zero weight.
    untouched = np.ones_like(ids, bool)
    untouched[rows, chosen] = False
    assert (masked[untouched] == ids[untouched]).all()
    assert (positions[weights == 0] == 0).all() and (targets[weights == 0] == 0).all()
    # Per row: round(15% of its real tokens).
    expected = np.maximum(1, np.round(0.15 * eligible.sum(1)))
    np.testing.assert_array_equal(weights.sum(1), np.minimum(expected, 40))
    # Sorted positions, and a new seed draws anew.
    assert all((np.diff(p[w > 0]) > 0).all() for p, w in zip(positions, weights))
    again = mask_tokens(packed["token_ids"], VOCAB, seed=[3, 5], max_predictions=40)
    assert not np.array_equal(again["mask_positions"].numpy(), positions)


def test_max_predictions_caps_the_selection_and_bad_rates_are_refused():
    ids = tf.constant([[CLS] + list(range(10, 40)) + [SEP]])
    out = mask_tokens(ids, VOCAB, seed=[0, 1], max_predictions=2)
    assert out["mask_weights"].numpy().tolist() == [[1.0, 1.0]]
    with pytest.raises(ValueError, match="`mask_rate \\+ random_rate` must be at most 1"):
        mask_tokens(ids, VOCAB, seed=[0, 1], mask_rate=0.95)
    with pytest.raises(ValueError, match="`vocab_size` must exceed 5"):
        mask_tokens(ids, 5, seed=[0, 1])


def test_whole_word_masking_masks_every_piece_of_a_chosen_word():
    tokenizer = WordPieceTokenizer(pretraining_vocabulary(["un", "##break", "##able", "a", "b"]))
    assert tokenizer.tokenize(tf.constant([MASK_PIECE])).to_list() != [[MASK]]  # never from text
    table = continuation_table(tokenizer.vocabulary)
    text = tf.constant(["unbreakable a b unbreakable a"] * 400)
    packed = pack_inputs(tokenizer.tokenize(text), 12)
    starts = word_starts_of(packed["token_ids"], table)
    out = mask_tokens(
        packed["token_ids"], tokenizer.size, seed=[1, 2], max_predictions=12, word_starts=starts
    )
    ids, masked = packed["token_ids"].numpy(), out["token_ids"].numpy()
    changed = masked != ids
    # "unbreakable" is pieces 1-3 and 6-8: when one piece of it is masked, all three are.
    for a, b in ((1, 4), (6, 9)):
        masked_word = masked[:, a:b] == MASK
        partial = masked_word.any(1) & ~masked_word.all(1)
        assert not partial.any()
    assert changed.any()


def test_sentence_pairs_half_true_next_and_random_from_other_documents():
    documents = [[f"d{d}s{s}" for s in range(4)] for d in range(30)]
    pairs = list(sentence_pairs(documents, seed=0).take(4000).as_numpy_iterator())
    labels = np.array([p[2] for p in pairs])
    assert labels.mean() == pytest.approx(0.5, abs=0.03)
    for first, second, is_next in pairs:
        d1, s1 = first.decode()[1:].split("s")
        d2, s2 = second.decode()[1:].split("s")
        if is_next:
            assert (d1, int(s1) + 1) == (d2, int(s2))
        else:
            assert d1 != d2
    with pytest.raises(ValueError, match="need at least two documents"):
        sentence_pairs([["only", "one document"]], seed=0)


def test_lm_windows_shift_by_one_and_end_documents():
    inputs, targets = lm_windows([[5, 6, 7], [8, 9]], 3)
    assert inputs.tolist() == [[5, 6, 7], [SEP, 8, 9]]
    assert targets.tolist() == [[6, 7, SEP], [8, 9, SEP]]
    with pytest.raises(ValueError, match="fewer than one window"):
        lm_windows([[5]], 4)


def test_unicode_text_packs_and_masks():
    text = ["Ça coûte 5\u00a0€ : «\u202fÉté\u202f»", "Привет, мир", "東京は晴れ"]
    chars = list(dict.fromkeys("çacoûte5€:«»étпривет,мир東京は晴れ"))
    tokenizer = WordPieceTokenizer(pretraining_vocabulary(chars + ["##" + c for c in chars]))
    packed = pack_inputs(tokenizer.tokenize(tf.constant(text)), 24)
    ids = packed["token_ids"].numpy()
    assert (ids[:, 0] == CLS).all() and (ids != 3).sum() == ids.size  # no <unk>
    out = mask_tokens(packed["token_ids"], tokenizer.size, seed=[0, 0], max_predictions=5)
    assert out["mask_weights"].numpy().sum() >= 3  # at least one per row


def test_pack_for_lm_frames_with_separators_and_shifts_the_targets():
    token_ids, next_ids = pack_for_lm(np.array([[7, 8, 9, 10, 11], [5, 0, 0, 0, 0]]), 5)
    assert token_ids.numpy().tolist() == [[SEP, 7, 8, 9, SEP], [SEP, 5, SEP, 0, 0]]
    assert next_ids.numpy().tolist() == [[7, 8, 9, SEP, 0], [5, SEP, 0, 0, 0]]
    with pytest.raises(ValueError, match="pack_for_lm"):
        pack_for_lm([[5]], 2)


def test_text_windows_cut_full_windows_from_the_start_up_to_the_cap():
    lengths = [19, 9, 13, 1, 0, 4]
    ids = [list(range(10 * i + 5, 10 * i + 5 + n)) for i, n in enumerate(lengths)]
    windows, owner = text_windows(tf.ragged.constant(ids, dtype=tf.int32), 4, 3)
    # 19 pieces: four full windows, capped at 3; 9: two, the last piece left out; 13: three;
    # 1 and 0: shorter than a window, each its own window; 4: exactly one.
    expected = []
    for i, pieces in enumerate(ids):
        count = min(3, max(1, len(pieces) // 4))
        expected += [(i, pieces[4 * k : 4 * k + 4]) for k in range(count)]
    assert owner.numpy().tolist() == [i for i, _ in expected] == [0, 0, 0, 1, 1, 2, 2, 2, 3, 4, 5]
    assert windows.to_list() == [w for _, w in expected]
    assert windows.dtype == tf.int32 and owner.dtype == tf.int32
    # One window reads the first pieces only; dense input with 0 padding reads the same.
    first, owner = text_windows(tf.ragged.constant(ids).to_tensor(), 4, 1)
    assert first.to_list() == [p[:4] for p in ids] and owner.numpy().tolist() == list(range(6))
    # In a graph with unknown sizes (a serving function).
    spec = tf.RaggedTensorSpec([None, None], tf.int32)
    graph = tf.function(lambda x: text_windows(x, 4, 3), input_signature=[spec])
    assert graph(tf.ragged.constant(ids, dtype=tf.int32))[0].to_list() == windows.to_list()
    with pytest.raises(ValueError, match="`width` must be at least 1; received 0"):
        text_windows(ids, 0, 3)
    with pytest.raises(ValueError, match="`max_windows` must be at least 1; received 0"):
        text_windows(ids, 4, 0)
    with pytest.raises(TypeError, match="`max_windows` must be an int; received float"):
        text_windows(ids, 4, 2.0)

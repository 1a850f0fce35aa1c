"""pretrain_bilm's corpus streamed from disk: held-out documents chosen by a hash of their words
and never trained on, the training words counted for the vocabulary and the unigram baseline,
the windows read again each pass."""

import numpy as np
import pytest

from keras_adl import recipes
from keras_adl.conventions import NUM_SPECIAL_TOKENS, UNK
from keras_adl.data.bilm import word_windows
from keras_adl.data.text_corpora import read_text_documents, tokenize_documents
from keras_adl.recipes.contextual.streaming import StreamedWindows

WORDS = "chat chien oiseau été Élan Москва ёж 東京 🙂 rivière pierre nuage".split()


def _corpus(path, count, seed=0):
    rng = np.random.default_rng(seed)
    paragraphs = [
        " ".join(rng.choice(WORDS, 9)) + f" n{i},\n\u00a0" + " ".join(rng.choice(WORDS, 8))
        for i in range(count)
    ]
    path.write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
    return str(path)


def test_held_out_documents_never_train_and_the_counts_are_the_training_words(tmp_path):
    path = _corpus(tmp_path / "corpus.txt", 600)
    corpus = StreamedWindows(path, 10**6, vocab_size=8, max_words=32)
    assert corpus.documents == 600
    documents = tokenize_documents(read_text_documents(path))
    all_windows = word_windows(documents, 32)
    held = {tuple(w) for w in corpus.held}
    assert held and len(corpus.held) == len(held)  # each document is distinct
    trained = [
        [w.decode() for w in row if w]
        for row in corpus.windows().take(corpus.train_windows).as_numpy_iterator()
    ]
    assert len(trained) + len(held) == len(all_windows) == corpus.train_windows + len(held)
    assert not held & {tuple(w) for w in trained}
    # the counts: the training windows' words (each training document's words are all in its
    # window here: 13 to 18 words, the emoji dropped), in the vocabulary's ids, the others as <unk>
    words = [w for window in trained for w in window]
    assert corpus.counts.sum() == len(words)
    kept = corpus.vocabulary.words
    assert len(kept) == 8 and corpus.counts[UNK] == sum(w not in kept for w in words)
    for i, word in enumerate(kept):
        assert corpus.counts[NUM_SPECIAL_TOKENS + i] == words.count(word)


def test_a_small_corpus_holds_its_first_document_out_and_bad_text_is_one_line(tmp_path):
    corpus = StreamedWindows(_corpus(tmp_path / "small.txt", 6), 10**6, 50, 4)
    first = corpus.held[0]
    trained = list(corpus.windows().take(corpus.train_windows).as_numpy_iterator())
    assert first not in [[w.decode() for w in row if w] for row in trained]
    assert corpus.train_windows == len(trained) and corpus.counts.sum() > 0
    (tmp_path / "bad.txt").write_bytes(b"fine words\n\xff\n")
    with pytest.raises(recipes.RecipeError, match=r"bad.txt:2: not valid UTF-8"):
        StreamedWindows(str(tmp_path / "bad.txt"), 10**6, 50, 4)

"""The in-graph translation memory: the fuzzy match of a translator's tool (scikit-learn's
character n-gram tf-idf cosine), exact matches byte for byte, a pair never retrieving itself,
any batch, and the memory carried by a SavedModel."""

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.text.translation_memory import TranslationMemory

SOURCES = [
    "Open file",
    "Save file",
    "Save file as…",
    "Quit the application",
    "Cannot open %s: %s",
    "Straße 😀 not found",
    "Файл не найден",
    "東京 is a city",
]
TARGETS = [
    "Ouvrir le fichier",
    "Enregistrer le fichier",
    "Enregistrer le fichier sous…",
    "Quitter l’application",
    "Impossible d’ouvrir %s\u00a0: %s",
    "Straße 😀 introuvable",
    "Fichier introuvable",
    "東京 est une ville",
]
QUERIES = ["Open files", "save FILE as", "Quit application", "cannot open %d", "Straße", "東京"]


def _sklearn_nearest(sources, queries):
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(
        analyzer="char_wb", ngram_range=(2, 4), sublinear_tf=True, lowercase=True
    )
    similarity = vectorizer.fit(sources).transform(queries) @ vectorizer.transform(sources).T
    similarity = similarity.toarray()
    return similarity.argmax(axis=1), similarity.max(axis=1)


def test_fuzzy_matches_are_scikit_learns_char_ngram_tfidf_cosine():
    memory = TranslationMemory(SOURCES, TARGETS, buckets=2**20)  # no collision at this size
    found = memory.lookup(tf.constant(QUERIES))
    nearest, scores = _sklearn_nearest(SOURCES, QUERIES)
    assert found["index"].numpy().tolist() == nearest.tolist()
    np.testing.assert_allclose(found["score"].numpy(), scores, atol=1e-5)
    assert [t.decode() for t in found["target"].numpy()] == [TARGETS[i] for i in nearest]
    assert not found["exact"].numpy().any()


def test_a_stored_source_returns_its_target_exactly():
    memory = TranslationMemory(SOURCES, TARGETS)
    found = memory.lookup(tf.constant(SOURCES))
    assert [t.decode() for t in found["target"].numpy()] == TARGETS  # byte for byte
    assert found["exact"].numpy().all() and (found["score"].numpy() == 1.0).all()
    assert found["index"].numpy().tolist() == list(range(len(SOURCES)))
    folded = memory.lookup(tf.constant(["open file"]))  # case differs: fuzzy, not exact
    assert not folded["exact"].numpy()[0] and folded["index"].numpy()[0] == 0


def test_a_pair_never_retrieves_itself():
    memory = TranslationMemory(SOURCES, TARGETS)
    found = memory.lookup(tf.constant(SOURCES), exclude=tf.range(len(SOURCES)))
    index = found["index"].numpy()
    assert (index != np.arange(len(SOURCES))).all() and not found["exact"].numpy().any()
    assert index[1] == 2 and index[2] == 1  # "Save file" and "Save file as…" find each other
    alone = TranslationMemory(["a"], ["b"]).lookup(tf.constant(["a"]), exclude=tf.constant([0]))
    assert alone["index"].numpy().tolist() == [-1] and alone["target"].numpy().tolist() == [b""]


def test_any_batch_is_answered_and_chunks_do_not_change_the_answer():
    small, large = TranslationMemory(SOURCES, TARGETS, chunk=3), TranslationMemory(SOURCES, TARGETS)
    queries = tf.constant(QUERIES * 3 + ["", "   ", b"\xff\xfe"])
    a, b = small.lookup(queries), large.lookup(queries)
    assert a["index"].numpy().tolist() == b["index"].numpy().tolist()
    np.testing.assert_allclose(a["score"].numpy(), b["score"].numpy(), atol=1e-6)
    assert (a["score"].numpy()[-3:-1] == 0).all()  # blank: nothing in common with anything
    assert (a["index"].numpy()[-3:-1] == -1).all() and (a["target"].numpy()[-3:-1] == b"").all()
    empty = large.lookup(tf.constant([], tf.string))
    assert {k: v.shape.as_list() for k, v in empty.items()} == {
        k: [0] for k in ("index", "score", "source", "target", "exact")
    }


def test_the_memory_travels_inside_a_saved_model(tmp_path):
    memory = TranslationMemory(SOURCES, TARGETS)
    module = tf.Module()
    module.memory = memory
    module.lookup = tf.function(
        lambda q: memory.lookup(q), input_signature=[tf.TensorSpec([None], tf.string)]
    )
    tf.saved_model.save(module, str(tmp_path / "tm"))
    loaded = tf.saved_model.load(str(tmp_path / "tm"))
    queries = tf.constant(QUERIES + SOURCES[:2])
    again, now = loaded.lookup(queries), memory.lookup(queries)
    assert again["target"].numpy().tolist() == now["target"].numpy().tolist()
    np.testing.assert_allclose(again["score"].numpy(), now["score"].numpy())


def test_a_source_stored_twice_matches_its_first_pair_exactly():
    memory = TranslationMemory(["Open", "Save", "Open"], ["Ouvrir", "Enregistrer", "Ouvrez"])
    found = memory.lookup(tf.constant(["Open"]))
    assert found["target"].numpy().tolist() == [b"Ouvrir"] and found["exact"].numpy()[0]


def test_bad_memories_are_refused_in_one_line():
    with pytest.raises(ValueError, match="non-empty lists of one length; received 0 and 0"):
        TranslationMemory([], [])
    with pytest.raises(ValueError, match="received 2 and 1"):
        TranslationMemory(["a", "b"], ["c"])
    with pytest.raises(ValueError, match="`buckets` must be a positive integer below 2\\*\\*31"):
        TranslationMemory(["a"], ["b"], buckets=0)
    with pytest.raises(ValueError, match="`chunk` must be a positive integer"):
        TranslationMemory(["a"], ["b"], chunk=2.5)


def test_every_stored_source_retrieves_its_nearest_other_pair_as_lookup_does():
    """Leave one out (the matches a model trains on): the sparse products of `lookup_stored`
    give what `lookup` with each pair excluded gives (up to float rounding), a repeated source its other copy, and a
    blank source or a memory of one pair nothing."""
    sources = SOURCES + ["Open file", "  ", "Open the file"]
    targets = TARGETS + ["Ouvrez le fichier", " ", "Ouvrir ce fichier"]
    memory = TranslationMemory(sources, targets, chunk=3)
    stored = memory.lookup_stored(block=4)
    slow = memory.lookup(tf.constant(sources), exclude=tf.range(len(sources)))
    assert stored["index"].tolist() == slow["index"].numpy().tolist()
    assert stored["target"].tolist() == slow["target"].numpy().tolist()
    assert stored["exact"].tolist() == slow["exact"].numpy().tolist()
    np.testing.assert_allclose(stored["score"], slow["score"].numpy(), atol=1e-6)
    assert stored["index"][0] == 8 and stored["index"][8] == 0 and stored["exact"][8]
    assert stored["index"][9] == -1 and stored["target"][9] == b""  # blank: nothing
    others = np.delete(stored["index"], 9)
    assert (others != np.delete(np.arange(len(sources)), 9)).all()  # never itself
    single = TranslationMemory(["Open"], ["Ouvrir"]).lookup_stored()
    assert single["index"].tolist() == [-1] and single["score"].tolist() == [0.0]

"""`Word2VecHyperModel`: it builds the searched settings and scores WordSim-353."""

import keras_tuner

from keras_adl.data.skipgrams import WordVocabulary
from keras_adl.data.text_streams import TextStream
from keras_adl.recipes.embeddings.hypermodels import Word2VecHyperModel


def test_word2vec_hypermodel_builds_searched_settings_and_scores_wordsim(tmp_path):
    corpus = [["king", "queen", "man", "woman", "tiger", "cat"] * 3] * 40
    (tmp_path / "corpus.txt").write_text("".join(" ".join(d) + "\n" for d in corpus))
    vocabulary = WordVocabulary.build(corpus, min_count=1)
    stream = TextStream(str(tmp_path / "corpus.txt"))
    hypermodel = Word2VecHyperModel("skipgram", stream, vocabulary)
    hp = keras_tuner.HyperParameters()
    hp.Fixed("dim", 50)
    hp.Fixed("negatives", 2)
    hp.Fixed("subsample", 0.0)
    model = hypermodel.build(hp)
    assert model.get_layer("input_embedding").output_dim == 50
    assert model.input["contexts"].shape[-1] == 3  # 1 positive + 2 negatives
    result = hypermodel.fit(hp, model, epochs=1, verbose=0)
    # WordSim-353 holds (tiger, cat), (king, queen)…: a Spearman over the known pairs.
    assert -1.0 <= result["wordsim353_spearman"] <= 1.0

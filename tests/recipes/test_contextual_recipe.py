"""The contextual recipe's pieces: CoVe's pair tokenizer, the features' checks, the in-graph
feature encoder and the HyperModel."""

import json

import keras_tuner
import numpy as np
import pytest
import tensorflow as tf

from keras_adl.recipes import RecipeError, contextual
from keras_adl.text.characters import character_ids
from keras_adl.text.tokenizer import TextPairTokenizer, WordVectorPairTokenizer


def test_cove_sources_are_word_vector_rows_and_targets_wordpiece():
    tokenizer = WordVectorPairTokenizer(["fichier", "été", "ёж"], ["le", "fichier", "##s"])
    ids = tokenizer.encode_source(tf.constant(["Fichier\u00a0: ÉTÉ, ЁЖ 東京!"]), 6).numpy()
    assert ids.tolist() == [[4, 5, 6, 3, 0, 0]]  # 東京 is one unknown word
    decoder_input, target = tokenizer.encode_target(tf.constant(["le fichiers"]), 5)
    assert target.numpy().tolist() == [[4, 5, 6, 2, 0]]
    again = WordVectorPairTokenizer.from_config(json.loads(json.dumps(tokenizer.to_config())))
    assert isinstance(again, WordVectorPairTokenizer) and isinstance(again, TextPairTokenizer)
    assert again.encode_source(tf.constant(["été"]), 2).numpy().tolist() == [[5, 0]]
    words = tokenizer.source_tokens(tf.constant(["L'été"])).to_list()
    assert words == [[b"l", "été".encode()]]


@pytest.mark.parametrize(
    "features, options, message",
    [
        ("static", {}, "--features static needs --vectors"),
        ("elmo", {"vectors": "x"}, "--features elmo needs --bilm"),
        ("elmo_top", {}, "needs --vectors and --bilm"),
        ("cove", {"vectors": "x"}, "--features cove needs --cove"),
    ],
)
def test_features_name_the_runs_they_need(features, options, message):
    with pytest.raises(RecipeError, match=message):
        contextual.RECIPE.sources(features, options)


def test_a_run_of_another_task_is_refused_in_one_line(tmp_path):
    (tmp_path / "run.json").write_text(json.dumps({"task": "dates", "status": "finished"}))
    with pytest.raises(RecipeError, match="expected a finished `keras-adl train word2vec` run"):
        contextual.RECIPE.sources("static", {"vectors": str(tmp_path)})
    with pytest.raises(RecipeError, match="holds no keras-adl run"):
        contextual.RECIPE.sources("elmo", {"vectors": str(tmp_path / "nothing"), "bilm": "x"})


def test_feature_encoder_reads_words_and_characters_of_any_script():
    encode = contextual.make_feature_encoder(
        {"words": (5,), "characters": (5, 7)}, ["été", "мир", "東京"]
    )
    feed = encode(tf.constant(["Été\u00a0: МИР 東京 inconnu", ""]))
    assert feed["words"].numpy().tolist() == [[4, 5, 6, 3, 0], [0, 0, 0, 0, 0]]
    expected = character_ids(tf.constant([["été", "мир", "東京", "inconnu", ""]]), 7).numpy()
    np.testing.assert_array_equal(feed["characters"].numpy()[:1], expected)
    assert not feed["characters"].numpy()[1].any()
    words_only = contextual.make_feature_encoder({"words": (3,)}, ["a"])
    assert set(words_only(tf.constant(["a"]))) == {"words"}
    shapes = contextual.RECIPE.input_shapes("elmo_top", {"max_characters": 9})
    assert shapes == {
        "words": (contextual.DOCUMENT_WORDS,),
        "characters": (contextual.DOCUMENT_WORDS, 9),
    }


def test_hypermodel_builds_the_recipes_classifier_with_searched_sizes():
    sources = {"words": ["a", "b"], "vectors": np.eye(6, 4, dtype="float32")}
    hypermodel = contextual.ContextualClassifierHyperModel(contextual.RECIPE, "static", sources, 3)
    hp = keras_tuner.HyperParameters()
    hp.Fixed("units", 32)
    model = hypermodel.build(hp)
    assert model.get_layer("encoder").forward_layer.units == 32
    assert model.output.shape[-1] == 3
    assert not model.get_layer("word_vectors").trainable
    assert len(model.trainable_weights) == 8  # two GRUs (3 each) and the logits

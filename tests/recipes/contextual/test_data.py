"""The contextual family's data: CoVe's pair tokenizer and the classifier's in-graph feature
encoder and input shapes."""

import json

import numpy as np
import tensorflow as tf

from keras_adl.recipes.contextual import data
from keras_adl.recipes.contextual.spec import DOCUMENT_WORDS
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


def test_feature_encoder_reads_words_and_characters_of_any_script():
    encode = data.make_feature_encoder(
        {"words": (5,), "characters": (5, 7)}, ["été", "мир", "東京"]
    )
    feed = encode(tf.constant(["Été\u00a0: МИР 東京 inconnu", ""]))
    assert feed["words"].numpy().tolist() == [[4, 5, 6, 3, 0], [0, 0, 0, 0, 0]]
    expected = character_ids(tf.constant([["été", "мир", "東京", "inconnu", ""]]), 7).numpy()
    np.testing.assert_array_equal(feed["characters"].numpy()[:1], expected)
    assert not feed["characters"].numpy()[1].any()
    words_only = data.make_feature_encoder({"words": (3,)}, ["a"])
    assert set(words_only(tf.constant(["a"]))) == {"words"}
    shapes = data.input_shapes("elmo_top", {"max_characters": 9})
    assert shapes == {
        "words": (DOCUMENT_WORDS,),
        "characters": (DOCUMENT_WORDS, 9),
    }

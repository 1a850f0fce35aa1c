"""The embeddings family's data: an epoch is whole compiled calls."""

from keras_adl.data.skipgrams import WordVocabulary
from keras_adl.data.text_corpora import text_documents, tokenize_documents, topic_corpus
from keras_adl.recipes.embeddings import data
from keras_adl.recipes.embeddings.spec import STEPS_PER_EXECUTION, WORD2VEC_TASK


def test_an_epoch_is_whole_compiled_calls():
    settings = WORD2VEC_TASK.preset("skipgram")
    tokenized = tokenize_documents(text_documents(topic_corpus(500, 20_000)))
    vocabulary = WordVocabulary.build(tokenized, min_count=5)
    steps = [data.steps_per_epoch(vocabulary, settings, b) for b in (64, 256, 16_384)]
    assert steps[0] > steps[1] > STEPS_PER_EXECUTION > steps[2]
    assert steps[0] % STEPS_PER_EXECUTION == steps[1] % STEPS_PER_EXECUTION == 0

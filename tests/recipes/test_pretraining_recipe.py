"""The pretraining recipe's data: the default corpus keeps the held-out topic fortunes out and
weights the fortunes, and masked-LM examples are whole documents or sentence pairs."""

import numpy as np
import pytest

from keras_adl.recipes import pretraining
from keras_adl.recipes.pretraining import RECIPE, default_corpus


def test_default_corpus_excludes_held_out_fortunes_and_weights_the_rest(monkeypatch):
    import keras_adl.recipes.documents as documents
    import keras_adl.tasks.fortunes as fortunes
    import keras_adl.tasks.text_corpora as text_corpora

    definitions = [f"definition {i}." for i in range(400)]
    train_topics = [f"topic fortune {i}." for i in range(40)]
    test_topics = ["a held-out fortune."]
    seen = {}

    def other_fortunes(exclude=()):
        seen["exclude"] = list(exclude)
        return [f"other fortune {i}." for i in range(10)]

    monkeypatch.setattr(text_corpora, "load_corpus", lambda path=None: definitions)
    monkeypatch.setattr(fortunes, "read_other_fortunes", other_fortunes)
    monkeypatch.setattr(
        documents.RECIPE,
        "load",
        lambda *a: (train_topics, np.zeros(40), test_topics, np.zeros(1), ["x", "y"], None),
    )
    train, held_out = default_corpus()
    assert seen["exclude"] == test_topics  # the other files are read without them
    assert not set(test_topics) & (set(train) | set(held_out))
    fortune_count = sum(not t.startswith("definition") for t in train)
    assert abs(fortune_count / len(train) - pretraining.FORTUNE_SHARE) < 0.05
    assert not set(train) & set(held_out)  # repeats stay on the training side
    assert len(held_out) == int(400 * pretraining.HELD_OUT_FRACTION) + int(
        50 * pretraining.HELD_OUT_FRACTION
    )
    assert len(default_corpus(samples=30)[0]) == 30


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_masked_lm_examples_are_documents_or_sentence_pairs():
    from keras_adl.tasks.pretraining import pretraining_vocabulary
    from keras_adl.text.wordpiece import WordPieceTokenizer

    words = "the cat sat on mat Été ça Привет 東京".split()
    tokenizer = WordPieceTokenizer(pretraining_vocabulary([w.lower() for w in words]))
    documents = ["The cat sat. Été ça!", "Привет mat.", "東京 the cat. On mat."]
    assert RECIPE.mlm_examples(documents, "documents") == 3
    assert RECIPE.mlm_examples(documents, "pairs") == 2
    inputs, targets, weights = next(iter(RECIPE.mlm_dataset(tokenizer, documents, 4, 12, 0)))
    assert set(targets) == {"mlm"} and inputs["token_ids"].shape == (4, 12)
    assert (inputs["segment_ids"].numpy() == 0).all()  # one segment per example
    inputs, targets, weights = next(
        iter(RECIPE.mlm_dataset(tokenizer, documents, 4, 12, 0, segments="pairs"))
    )
    assert set(targets) == {"mlm", "nsp"} and (inputs["segment_ids"].numpy() == 1).any()
    with pytest.raises(ValueError, match="`segments` must be 'documents' or 'pairs'"):
        RECIPE.mlm_dataset(tokenizer, documents, 4, 12, 0, segments="sentences")
    model = RECIPE.build_model("pretrain_mlm", "bert", tokenizer.size, jit_compile=False)
    assert set(model.output) == {"mlm"}
    batch = RECIPE.mlm_dataset(tokenizer, documents, 4, 64, 0).take(1)
    assert set(model.evaluate(batch, verbose=0, return_dict=True)) == {"loss", "mlm_accuracy"}
    model = RECIPE.build_model("pretrain_mlm", "bert", tokenizer.size, segments="pairs")
    assert set(model.output) == {"mlm", "nsp"}

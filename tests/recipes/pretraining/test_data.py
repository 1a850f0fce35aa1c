"""The pretraining family's data: the default corpus keeps the held-out topic fortunes out and
weights the fortunes, masked-LM examples are whole documents or sentence pairs, and a
classifier reads each text window by window."""

import numpy as np
import pytest

from keras_adl.recipes.pretraining import data, spec
from keras_adl.recipes.pretraining.data import default_corpus
from keras_adl.recipes.pretraining.evaluate import classifier_accuracy
from keras_adl.recipes.pretraining.serving import make_text_classifier_serving_fn
from keras_adl.recipes.pretraining.tasks import RECIPES
from tests.recipes.pretraining.windows import (
    WINDOW_LABELS,
    WINDOW_TEXTS,
    window_tokenizer,
    windows_of,
)


def test_default_corpus_excludes_held_out_fortunes_and_weights_the_rest(monkeypatch):
    from keras_adl.recipes.documents import data as documents_data

    definitions = [f"definition {i}." for i in range(400)]
    train_topics = [f"topic fortune {i}." for i in range(40)]
    test_topics = ["a held-out fortune."]
    seen = {}

    def other_fortunes(exclude=()):
        seen["exclude"] = list(exclude)
        return [f"other fortune {i}." for i in range(10)]

    monkeypatch.setattr(data, "load_corpus", lambda path=None: definitions)
    monkeypatch.setattr(data, "read_other_fortunes", other_fortunes)
    monkeypatch.setattr(
        documents_data,
        "fortune_topics",
        lambda *a: (train_topics, np.zeros(40), test_topics, np.zeros(1), ["x", "y"], None),
    )
    train, held_out = default_corpus()
    assert seen["exclude"] == test_topics  # the other files are read without them
    assert not set(test_topics) & (set(train) | set(held_out))
    fortune_count = sum(not t.startswith("definition") for t in train)
    assert abs(fortune_count / len(train) - spec.FORTUNE_SHARE) < 0.05
    assert not set(train) & set(held_out)  # repeats stay on the training side
    assert len(held_out) == int(400 * spec.HELD_OUT_FRACTION) + int(50 * spec.HELD_OUT_FRACTION)
    assert len(default_corpus(samples=30)[0]) == 30


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_masked_lm_examples_are_documents_or_sentence_pairs():
    from keras_adl.data.pretraining import pretraining_vocabulary
    from keras_adl.text.wordpiece import WordPieceTokenizer

    words = "the cat sat on mat Été ça Привет 東京".split()
    tokenizer = WordPieceTokenizer(pretraining_vocabulary([w.lower() for w in words]))
    documents = ["The cat sat. Été ça!", "Привет mat.", "東京 the cat. On mat."]
    assert data.mlm_examples(documents, "documents") == 3
    assert data.mlm_examples(documents, "pairs") == 2
    inputs, targets, weights = next(iter(data.mlm_dataset(tokenizer, documents, 4, 12, 0)))
    assert set(targets) == {"mlm"} and inputs["token_ids"].shape == (4, 12)
    assert (inputs["segment_ids"].numpy() == 0).all()  # one segment per example
    inputs, targets, weights = next(
        iter(data.mlm_dataset(tokenizer, documents, 4, 12, 0, segments="pairs"))
    )
    assert set(targets) == {"mlm", "nsp"} and (inputs["segment_ids"].numpy() == 1).any()
    with pytest.raises(ValueError, match="`segments` must be 'documents' or 'pairs'"):
        data.mlm_dataset(tokenizer, documents, 4, 12, 0, segments="sentences")
    mlm = RECIPES["pretrain_mlm"]
    model = mlm.build_model("bert", tokenizer.size, jit_compile=False)
    assert set(model.output) == {"mlm"}
    batch = data.mlm_dataset(tokenizer, documents, 4, 64, 0).take(1)
    assert set(model.evaluate(batch, verbose=0, return_dict=True)) == {"loss", "mlm_accuracy"}
    model = mlm.build_model("bert", tokenizer.size, segments="pairs")
    assert set(model.output) == {"mlm", "nsp"}


def test_finetuning_trains_on_every_window_of_a_text_with_its_label():
    from keras_adl.data.pretraining import CLS, PAD, SEP

    tokenizer, ids = window_tokenizer()
    expected = windows_of(ids, 4, 3)
    assert [i for i, _ in expected] == [0, 0, 0, 1, 1, 2, 2, 2, 3]
    batches = list(
        data.text_classes(tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 4, 6, False, max_windows=3)
    )
    rows = np.concatenate([x["token_ids"].numpy() for x, _ in batches]).tolist()
    labels = np.concatenate([y.numpy() for _, y in batches]).tolist()
    assert rows == [([CLS, *w, SEP] + [PAD] * 6)[:6] for _, w in expected]
    assert labels == [WINDOW_LABELS[i] for i, _ in expected]
    assert all(not x["segment_ids"].numpy().any() for x, _ in batches)
    # Shuffled for training: the same windows, the last partial batch dropped, and the
    # cardinality is the steps of an epoch.
    shuffled = data.text_classes(tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 4, 6, True, max_windows=3)
    assert int(shuffled.cardinality()) == 9 // 4 == len(list(shuffled))
    seen = [tuple(r) for x, _ in shuffled for r in x["token_ids"].numpy().tolist()]
    assert len(seen) == 8 and set(seen) <= {tuple(r) for r in rows}
    # One window: each text's first 4 pieces, as before windows.
    first = data.text_classes(tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 8, 6, False)
    ((x, y),) = list(first)
    assert x["token_ids"].numpy().tolist() == [([CLS, *p[:4], SEP] + [PAD] * 6)[:6] for p in ids]
    # GPT reads the same windows between separators, with next-token targets.
    gpt = data.text_classes(
        tokenizer, WINDOW_TEXTS, WINDOW_LABELS, 16, 6, False, "gpt", True, max_windows=3
    )
    ((token_ids, targets),) = list(gpt)
    assert token_ids.numpy().tolist() == [([SEP, *w, SEP] + [PAD] * 6)[:6] for _, w in expected]
    assert targets["classes"].numpy().tolist() == labels
    assert targets["lm"].numpy().tolist() == [([*w, SEP] + [PAD] * 6)[:6] for _, w in expected]


def test_classifier_data_and_serving_refuse_bad_arguments():
    tokenizer, _ = window_tokenizer()
    with pytest.raises(
        ValueError, match="`model_name` must be one of 'bert', 'gpt'; received 'GPT'"
    ):
        make_text_classifier_serving_fn(None, "GPT", tokenizer, 6, "abc")
    with pytest.raises(ValueError, match="`sequence_length` must be at least 3; received 2"):
        data.classifier_windows("bert", tokenizer, WINDOW_TEXTS, 2)
    with pytest.raises(TypeError, match="`sequence_length` must be an int; received float"):
        data.classifier_windows("gpt", tokenizer, WINDOW_TEXTS, 6.0)
    with pytest.raises(ValueError, match="one label per text: 4 texts; received 3 labels"):
        data.text_classes(tokenizer, WINDOW_TEXTS, [0, 1, 2], 4, 6, False)
    with pytest.raises(ValueError, match="`texts` is empty"):
        classifier_accuracy(None, [], [])

import numpy as np
import pytest

from keras_adl.data.splits import split_dataset


def test_split_dataset():
    images, labels = np.arange(50)[:, None] * np.ones((50, 3)), np.arange(50)
    (x, y), (xt, yt) = split_dataset(images, labels, 0.2, seed=0)
    assert len(x) == 40 and len(xt) == 10
    np.testing.assert_array_equal(x[:, 0], y)  # images and labels stay paired
    np.testing.assert_array_equal(np.sort(np.concatenate([y, yt])), labels)
    assert not np.array_equal(y, np.arange(40))  # shuffled
    np.testing.assert_array_equal(split_dataset(images, labels, 0.2, seed=0)[1][1], yt)
    assert not np.array_equal(split_dataset(images, labels, 0.2, seed=1)[1][1], yt)
    message = "`test_fraction` must be a float in \\(0, 1\\); received 1.5"
    with pytest.raises(ValueError, match=message):
        split_dataset(images, labels, 1.5)
    with pytest.raises(ValueError, match="each side needs at least one"):
        split_dataset(images[:2], labels[:2], 0.1)
    with pytest.raises(ValueError, match="same length"):
        split_dataset(images, labels[:3])


def test_split_dataset_of_documents():
    documents = ["Grüße aus Köln.", "日本語の文書。", "naïve café", "Ελληνικά!", "plain"]
    labels = np.array([0, 1, 0, 1, 0])
    (train, train_labels), (test, test_labels) = split_dataset(documents, labels, 0.4, seed=3)
    assert len(train) == 3 and len(test) == 2
    assert sorted(train.tolist() + test.tolist()) == sorted(documents)  # strings kept intact
    for document, label in zip(
        np.concatenate([train, test]), np.concatenate([train_labels, test_labels])
    ):
        assert labels[documents.index(document)] == label  # documents and labels stay paired

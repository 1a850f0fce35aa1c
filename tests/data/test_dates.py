import datetime

import numpy as np

from keras_adl.conventions import END, PAD, START, UNK
from keras_adl.data.dates import (
    SOURCE_LENGTH,
    SOURCE_VOCAB,
    TARGET_VOCAB,
    date_arrays,
    generate_dates,
)


def test_generation_is_seeded_and_targets_are_the_same_dates():
    a, b = generate_dates(200, seed=5), generate_dates(200, seed=5)
    assert a == b
    assert generate_dates(200, seed=6) != a
    sources, targets = a
    months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    for source, target in zip(sources, targets):
        date = datetime.date.fromisoformat(target)
        # The year is always written in full, and a textual month names the right month.
        assert str(date.year) in source
        named = [i + 1 for i, m in enumerate(months) if m in source]
        assert not named or named == [date.month]
    assert len({s.split(" ")[0].isdigit() for s in sources}) == 2  # formats vary


def test_arrays_are_fixed_shape_padded_and_shifted():
    data = date_arrays(50, seed=1)
    assert data["source"].shape == (50, SOURCE_LENGTH)
    assert data["decoder_input"].shape == data["target"].shape == (50, 12)
    assert np.all(data["decoder_input"][:, 0] == START)
    # decoder_input is the target shifted right by one, behind <s>.
    np.testing.assert_array_equal(data["decoder_input"][:, 1:11], data["target"][:, :10])
    assert np.all(data["target"][:, 10] == END) and np.all(data["target"][:, 11] == PAD)
    assert TARGET_VOCAB.decode(data["target"]) == data["target_text"]
    assert SOURCE_VOCAB.decode(data["source"]) == data["source_text"]


def test_characters_outside_the_source_vocabulary_are_unknown():
    ids = SOURCE_VOCAB.encode(["3 mär 2001", "１２/３"], max_length=SOURCE_LENGTH)
    assert ids[0, 3] == UNK and ids[0].tolist().count(UNK) == 1  # "ä" only
    assert ids[1, :4].tolist() == [UNK, UNK, SOURCE_VOCAB.encode(["/"], 1)[0, 0], UNK]
    assert SOURCE_VOCAB.decode(ids) == ["3 mr 2001", "/"]  # <unk> is skipped when decoding

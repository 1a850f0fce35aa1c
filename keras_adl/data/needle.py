"""A synthetic document task whose label can only be read at the sentence level.

`needle_documents`: one *key* sentence holds the marker word `NEEDLE_WORD` next to the class
word of the label, and every other sentence holds the class word of a random class. A
sentence-attention model solves it by attending to the key sentence, and
`keras_adl.recipes.documents.evaluate.sentence_attention_hit_rate` measures how often it does.

Everything here is pure Python and numpy.

References:
    Yang, Yang, Dyer, He, Smola, Hovy (2016). Hierarchical Attention Networks for Document
    Classification. NAACL-HLT 2016.
"""

import numpy as np

from keras_adl.data._checks import check_int, check_range, check_seed

NEEDLE_WORD = "needle"

# Class words of `needle_documents`: class ``c`` is ``CLASS_WORDS[c]``.
CLASS_WORDS = (
    "apple",
    "river",
    "candle",
    "forest",
    "garden",
    "hammer",
    "island",
    "ladder",
    "mirror",
    "pencil",
    "rocket",
    "violin",
)


def _filler_words():
    """280 distinct two-syllable consonant-vowel pseudo-words, independent of any seed."""
    syllables = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]  # 70 syllables
    words = []
    for a, first in enumerate(syllables):
        for j in range(4):  # 17·j mod 70 is distinct for j < 4: no duplicates
            words.append(first + syllables[(a + 17 * j + 5) % len(syllables)])
    return tuple(w for w in words if w not in CLASS_WORDS and w != NEEDLE_WORD)


# Filler words of `needle_documents`: lowercase pronounceable pseudo-words ("bafa", "kimo", ...).
FILLER_WORDS = _filler_words()


def needle_documents(
    num_documents, num_classes=4, num_sentences=(4, 10), sentence_length=(4, 10), seed=0
):
    """Synthetic documents whose label is the word sharing a sentence with a marker.

    A document has ``n ~ U{num_sentences}`` sentences of ``L ~ U{sentence_length}`` words
    each. One sentence, at a uniform index ``k``, is the *key*: it holds `NEEDLE_WORD` and the
    class word ``CLASS_WORDS[label]`` at two random positions. Every other sentence holds
    exactly one class word of a uniformly random class (a distractor) and never the marker. The
    remaining words are uniform draws from `FILLER_WORDS`. Labels are uniform over classes.

    Class-word counts alone are a weak cue (the label's word has only one extra occurrence on
    average, and ties are frequent), so a bag of words does poorly; a model must find the
    sentence with the marker and read the class word in it, which is what sentence-level
    attention is for (`keras_adl.recipes.documents.evaluate.sentence_attention_hit_rate`).

    Words are lowercase and separated by single spaces; each sentence ends with ``.`` and the
    sentences are joined by a single space, so ``document[:-1].split(". ")`` gives the
    sentences (without their full stops) and the key is at index ``k``.

    Args:
        num_documents: number of documents, a positive integer.
        num_classes: number of classes, in ``2..len(CLASS_WORDS)``.
        num_sentences: ``(low, high)`` sentences per document, ``1 <= low <= high``.
        sentence_length: ``(low, high)`` words per sentence, ``2 <= low <= high`` (the key
            sentence holds two special words).
        seed: non-negative integer seed; the documents are a function of all the arguments.

    Returns:
        ``(documents, labels, key_sentences)``: a list of strings, int64 ``[N]`` labels and
        int64 ``[N]`` indices of the key sentences.

    Raises:
        ValueError: an argument is out of range.

    Example:

    >>> documents, labels, keys = needle_documents(2, num_sentences=(2, 3),
    ...                                            sentence_length=(3, 4), seed=0)
    >>> sentences = documents[0][:-1].split(". ")
    >>> NEEDLE_WORD in sentences[keys[0]].split()
    True
    >>> CLASS_WORDS[labels[0]] in sentences[keys[0]].split()
    True
    >>> labels.dtype, keys.dtype
    (dtype('int64'), dtype('int64'))
    """
    where = "needle_documents: "
    num_documents = check_int("num_documents", num_documents, 1, where=where)
    num_classes = check_int("num_classes", num_classes, 2, len(CLASS_WORDS), where=where)
    s_low, s_high = check_range("num_sentences", num_sentences, 1, where=where)
    w_low, w_high = check_range("sentence_length", sentence_length, 2, where=where)
    rng = np.random.default_rng(check_seed(seed, where=where))
    filler = np.array(FILLER_WORDS)
    labels = rng.integers(0, num_classes, size=num_documents)
    counts = rng.integers(s_low, s_high + 1, size=num_documents)
    keys = rng.integers(0, counts)
    documents = []
    for label, count, key in zip(labels, counts, keys):
        lengths = rng.integers(w_low, w_high + 1, size=count)
        words = filler[rng.integers(0, len(filler), size=lengths.sum())].tolist()
        distractors = rng.integers(0, num_classes, size=count)
        positions = (rng.random(count) * lengths).astype("int64")
        key_positions = rng.choice(lengths[key], size=2, replace=False)
        sentences, start = [], 0
        for i, length in enumerate(lengths):
            sentence = words[start : start + length]
            start += length
            if i == key:
                sentence[key_positions[0]] = NEEDLE_WORD
                sentence[key_positions[1]] = CLASS_WORDS[label]
            else:
                sentence[positions[i]] = CLASS_WORDS[distractors[i]]
            sentences.append(" ".join(sentence) + ".")
        documents.append(" ".join(sentences))
    return documents, labels.astype("int64"), keys.astype("int64")

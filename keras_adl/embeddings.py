"""Word vectors to query and to evaluate: nearest neighbours, analogies, similarity, and the
standard word-analogy and word-similarity benchmarks.

`Embeddings` holds unit-length vectors of a vocabulary (from
`keras_adl.models.word2vec.word_vectors` or any other source). `evaluate_analogies` reads the
Google analogy format (``questions-words.txt``) and `evaluate_word_pairs` the WordSim-353 /
SimLex-999 format, as gensim does, so its figures are comparable; `gensim_test_file` finds those
three files in the installed ``gensim`` package (the ``bench`` extra), which ships them.

Plain numpy: no TensorFlow needed.
"""

import os

import numpy as np

__all__ = ["Embeddings", "evaluate_analogies", "evaluate_word_pairs", "gensim_test_file"]


_EPSILON = 1e-8


class Embeddings:
    """Unit-length word vectors with the usual queries.

    Args:
        words: the words, most frequent first (``restrict_vocab`` keeps a prefix).
        vectors: ``[len(words), D]`` vectors (normalised here, with an epsilon).

    Example:

    >>> e = Embeddings(["king", "queen", "man", "woman"], [[1, 1], [1, -1], [0.2, 1], [0.2, -1]])
    >>> [(w, round(s, 3)) for w, s in e.analogy("man", "king", "woman")]  # man : king :: woman : ?
    [('queen', 0.963)]
    >>> round(e.similarity("king", "man"), 3)
    0.832
    """

    def __init__(self, words, vectors):
        vectors = np.asarray(vectors, dtype="float32")
        self.words = list(words)
        if vectors.ndim != 2 or len(self.words) != vectors.shape[0]:
            raise ValueError(
                f"Embeddings: `vectors` must be [len(words), dim] = [{len(self.words)}, D]; "
                f"received shape {vectors.shape}."
            )
        self.vectors = vectors / (np.linalg.norm(vectors, axis=1, keepdims=True) + _EPSILON)
        self.index = {w: i for i, w in enumerate(self.words)}

    def __contains__(self, word):
        return word in self.index

    def vector(self, word):
        """The unit vector of ``word``; ``KeyError`` naming it if it is unknown."""
        if word not in self.index:
            raise KeyError(f"{word!r} is not in the vocabulary ({len(self.words)} words)")
        return self.vectors[self.index[word]]

    def similarity(self, first, second):
        """Cosine similarity of two words."""
        return float(self.vector(first) @ self.vector(second))

    def _nearest(self, query, exclude, k, restrict_vocab=None):
        limit = len(self.words) if restrict_vocab is None else min(restrict_vocab, len(self.words))
        query = query / (np.linalg.norm(query) + _EPSILON)
        scores = self.vectors[:limit] @ query
        for word in exclude:
            if self.index.get(word, limit) < limit:
                scores[self.index[word]] = -np.inf
        best = np.argsort(-scores, kind="stable")[:k]
        return [(self.words[i], float(scores[i])) for i in best if np.isfinite(scores[i])]

    def most_similar(self, word, k=10, restrict_vocab=None):
        """The ``k`` nearest words to ``word`` by cosine (itself excluded), with their
        similarities, among the first ``restrict_vocab`` words."""
        return self._nearest(self.vector(word), [word], k, restrict_vocab)

    def analogy(self, a, b, c, k=1, restrict_vocab=None):
        """3CosAdd: the words nearest to ``b - a + c`` ("``a`` is to ``b`` as ``c`` is to ?"),
        the three question words excluded, among the first ``restrict_vocab`` words."""
        query = self.vector(b) - self.vector(a) + self.vector(c)
        return self._nearest(query, [a, b, c], k, restrict_vocab)


def gensim_test_file(name):
    """The path of one of the evaluation files gensim's wheel ships (``questions-words.txt``,
    ``wordsim353.tsv``, ``simlex999.txt``).

    Args:
        name: the file's name.

    Returns:
        The file's path.

    Raises:
        ImportError: gensim is not installed (it is in the ``bench`` extra).
        FileNotFoundError: the installed gensim has no such file.
    """
    try:
        import gensim
    except ImportError:
        raise ImportError(
            f"the standard evaluation file {name!r} is read from the gensim package; install "
            "it with `pip install keras-adl[bench]` (or pass the file's path)"
        ) from None
    path = os.path.join(os.path.dirname(gensim.__file__), "test", "test_data", name)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} not found in the installed gensim")
    return path


def _lines(path):
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            yield number, line.strip()


# Analogy questions scored at once: a [batch, vocabulary] matrix of scores.
_ANALOGY_BATCH = 256


def _best_answers(embeddings, questions, restrict_vocab):
    """`Embeddings.analogy`'s best answer (an index, -1 for none) to each row of
    ``questions`` (int ``[B, 4]`` word indices), as one matrix product."""
    limit = min(restrict_vocab, len(embeddings.words))
    vectors = embeddings.vectors
    queries = vectors[questions[:, 1]] - vectors[questions[:, 0]] + vectors[questions[:, 2]]
    queries /= np.linalg.norm(queries, axis=1, keepdims=True) + _EPSILON
    scores = queries @ vectors[:limit].T
    rows = np.arange(len(questions))[:, None]
    scores[rows, questions[:, :3]] = -np.inf  # the question's own words
    best = np.argmax(scores, axis=1)  # the first of equal scores, as a stable sort's
    return np.where(np.isfinite(scores[rows[:, 0], best]), best, -1)


def evaluate_analogies(embeddings, path, restrict_vocab=300000, lowercase=True):
    """Accuracy on word analogies in the Google format, scored as gensim's
    ``evaluate_word_analogies``: 3CosAdd among the first ``restrict_vocab`` words; a question
    with a word outside them is not asked (counted in ``unknown``).

    Args:
        embeddings: an `Embeddings`.
        path: a file of ``: section`` lines and ``a b c d`` questions (``a`` is to ``b`` as
            ``c`` is to ``d``).
        restrict_vocab: how many of the most frequent words are candidates and known.
        lowercase: lower-case the questions first (as gensim does).

    Returns:
        ``{"accuracy", "correct", "asked", "unknown", "sections": {name: {"accuracy",
        "correct", "asked", "unknown"}}}``; accuracies over the asked questions (0.0 if none).

    Raises:
        ValueError: a line is neither a section nor four words (the message names the file
            and line).

    Example:

    >>> import tempfile
    >>> e = Embeddings(["king", "queen", "man", "woman"], [[1, 1], [1, -1], [0.2, 1], [0.2, -1]])
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     path = os.path.join(directory, "questions-words.txt")
    ...     with open(path, "w", encoding="utf-8") as f:
    ...         _ = f.write(": gender\\nman king woman queen\\nKing man queen woman\\n"
    ...                     "man king girl queen\\n")  # "girl" is unknown: not asked
    ...     figures = evaluate_analogies(e, path)
    >>> figures["accuracy"], figures["asked"], figures["unknown"]
    (1.0, 2, 1)
    >>> figures["sections"]["gender"]["correct"]
    2
    """
    known = set(embeddings.words[:restrict_vocab])
    sections, current, asked = {}, None, []
    for number, line in _lines(path):
        if not line:
            continue
        if line.startswith(":"):
            current = sections.setdefault(
                line[1:].strip(), {"correct": 0, "asked": 0, "unknown": 0}
            )
            continue
        words = line.lower().split() if lowercase else line.split()
        if len(words) != 4 or current is None:
            raise ValueError(f"{path}:{number}: expected ': section' or 4 words; found {line!r}")
        if not set(words) <= known:
            current["unknown"] += 1
            continue
        current["asked"] += 1
        asked.append((current, [embeddings.index[w] for w in words]))
    for start in range(0, len(asked), _ANALOGY_BATCH):
        batch = asked[start : start + _ANALOGY_BATCH]
        guesses = _best_answers(embeddings, np.array([q for _, q in batch]), restrict_vocab)
        for (figures, question), guess in zip(batch, guesses):
            figures["correct"] += int(guess == question[3])
    for figures in sections.values():
        figures["accuracy"] = figures["correct"] / figures["asked"] if figures["asked"] else 0.0
    total = {k: sum(s[k] for s in sections.values()) for k in ("correct", "asked", "unknown")}
    accuracy = total["correct"] / total["asked"] if total["asked"] else 0.0
    return {"accuracy": accuracy, **total, "sections": sections}


def evaluate_word_pairs(embeddings, path, lowercase=True):
    """Spearman correlation between cosine similarities and human scores, on the pairs whose
    two words are known (as gensim's ``evaluate_word_pairs``).

    Args:
        embeddings: an `Embeddings`.
        path: ``word1<TAB>word2<TAB>score`` lines; ``#`` lines are comments (WordSim-353,
            SimLex-999 as gensim ships them).
        lowercase: lower-case the words first.

    Returns:
        ``{"spearman", "pearson", "pairs", "unknown"}`` (``spearman``/``pearson`` are NaN when
        fewer than 2 pairs are known).

    Raises:
        ValueError: a line is not two words and a number (the message names the file and
            line).

    Example:

    >>> import tempfile
    >>> e = Embeddings(["king", "queen", "man", "apple"], [[1, 1], [1, -1], [0.2, 1], [-1, 0.1]])
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     path = os.path.join(directory, "wordsim.tsv")
    ...     with open(path, "w", encoding="utf-8") as f:
    ...         _ = f.write("# word1\\tword2\\tscore\\nking\\tman\\t8.0\\nKing\\tqueen\\t5.5\\n"
    ...                     "king\\tapple\\t0.5\\nking\\tgirl\\t5.0\\n")  # "girl" is unknown
    ...     figures = evaluate_word_pairs(e, path)
    >>> round(figures["spearman"], 3), figures["pairs"], figures["unknown"]
    (1.0, 3, 1)
    """
    from scipy import stats

    human, model, unknown = [], [], 0
    for number, line in _lines(path):
        if not line or line.startswith("#"):
            continue
        parts = line.split("\t")
        try:
            first, second, score = parts[0], parts[1], float(parts[2])
        except (IndexError, ValueError):
            raise ValueError(
                f"{path}:{number}: expected 'word1<TAB>word2<TAB>score'; found {line!r}"
            ) from None
        if lowercase:
            first, second = first.lower(), second.lower()
        if first not in embeddings or second not in embeddings:
            unknown += 1
            continue
        human.append(score)
        model.append(embeddings.similarity(first, second))
    if len(human) < 2:
        return {
            "spearman": float("nan"),
            "pearson": float("nan"),
            "pairs": len(human),
            "unknown": unknown,
        }
    return {
        "spearman": float(stats.spearmanr(human, model).statistic),
        "pearson": float(stats.pearsonr(human, model).statistic),
        "pairs": len(human),
        "unknown": unknown,
    }

"""A translation memory in the TensorFlow graph: the stored pair whose source is most similar to
a query, retrieved inside ``tf.data``, a recipe or an exported SavedModel alike.

Similarity is a translator's fuzzy match, as CAT tools and scikit-learn's character n-grams
compute it: the cosine of tf-idf vectors of the character 2-, 3- and 4-grams of each word
(padded with a space on both sides, as ``TfidfVectorizer(analyzer="char_wb")`` does), lower
case, sublinear term frequencies, smoothed idf, the n-grams hashed into ``buckets`` columns;
a query's n-grams that no stored source has are left out, as scikit-learn leaves out those
outside its vocabulary (the score is the stored pair's share of what they have in common).
A query equal, byte for byte, to a stored source is an exact match: that pair, score 1.

The memory is a ``tf.Module``: its pairs, their vectors and idf are variables, so an export that
tracks it carries it and retrieves with no file beside the SavedModel.
"""

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

__all__ = ["TranslationMemory"]

GRAM_SIZES = (2, 3, 4)
_SPACES = r"[\s\pZ\x{0B}\x{85}]+"


def _gram_ids(strings, buckets):
    """``(rows, ids)``: for each character n-gram of each string's words, its string's row
    (int64) and its hashed column (int64)."""
    words = tf_text.regex_split(tf.strings.lower(strings, encoding="utf-8"), _SPACES)
    words = tf.ragged.boolean_mask(words, tf.strings.length(words) > 0)
    padded = tf.strings.join([" ", words.flat_values, " "])
    chars = tf.strings.unicode_split(padded, "UTF-8", errors="replace")
    grams = tf.concat(
        [
            tf_text.ngrams(chars, n, axis=-1, reduction_type=tf_text.Reduction.STRING_JOIN)
            for n in GRAM_SIZES
        ],
        axis=1,
    )
    rows = tf.gather(words.value_rowids(), grams.value_rowids())
    return rows, tf.strings.to_hash_bucket_fast(grams.flat_values, buckets)


def _counts(rows, ids, buckets):
    """``(rows, ids, counts)``: each distinct (row, column) once, with its count, row-major."""
    keys, _, counts = tf.unique_with_counts(rows * buckets + ids)
    order = tf.argsort(keys)
    keys, counts = tf.gather(keys, order), tf.gather(counts, order)
    return keys // buckets, keys % buckets, tf.cast(counts, tf.float32)


class TranslationMemory(tf.Module):
    """Pairs retrievable by fuzzy match of their sources.

    Args:
        sources: the stored sources (a list of str, at least one).
        targets: their translations (a list of str of the same length).
        buckets: columns the character n-grams are hashed into.
        chunk: queries scored at once (memory: ``buckets × chunk`` floats).
        name: the module's name.

    Example:

    >>> memory = TranslationMemory(["Open file", "Save file", "Quit"],
    ...                            ["Ouvrir le fichier", "Enregistrer le fichier", "Quitter"])
    >>> found = memory.lookup(tf.constant(["Open file", "Open files", "quit"]))
    >>> [t.decode() for t in found["target"].numpy()], found["exact"].numpy().tolist()
    (['Ouvrir le fichier', 'Ouvrir le fichier', 'Quitter'], [True, False, False])
    >>> [round(float(s), 2) for s in found["score"].numpy()]
    [1.0, 0.95, 1.0]
    """

    def __init__(self, sources, targets, buckets=2**18, chunk=32, name=None):
        super().__init__(name=name)
        sources, targets = list(sources), list(targets)
        if not sources or len(sources) != len(targets):
            raise ValueError(
                "TranslationMemory: `sources` and `targets` must be non-empty lists of one "
                f"length; received {len(sources)} and {len(targets)}."
            )
        for name_, value in (("buckets", buckets), ("chunk", chunk)):
            if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**31:
                raise ValueError(
                    f"TranslationMemory: `{name_}` must be a positive integer below 2**31; "
                    f"received {value!r}."
                )
        self.buckets, self.chunk, self.size = buckets, chunk, len(sources)
        rows, ids, counts = [], [], []
        for start in range(0, len(sources), 4096):
            batch = tf.constant(sources[start : start + 4096], tf.string)
            r, i, c = _counts(*_gram_ids(batch, self.buckets), self.buckets)
            rows.append(r.numpy() + start)
            ids.append(i.numpy())
            counts.append(c.numpy())
        rows, ids, counts = (np.concatenate(x) for x in (rows, ids, counts))
        document_frequency = np.bincount(ids, minlength=self.buckets)
        idf = np.log((1 + self.size) / (1 + document_frequency)) + 1.0
        idf[document_frequency == 0] = 0.0  # a query's n-gram no source has counts for nothing
        weights = (1.0 + np.log(counts)) * idf[ids]
        norms = np.sqrt(np.bincount(rows, weights**2, minlength=self.size))
        weights = weights / np.maximum(norms[rows], 1e-12)
        self.idf = tf.Variable(idf.astype("float32"), trainable=False, name="idf")
        # int32 (half an export's size): rows and hashed columns both fit
        indices = np.stack([rows, ids], 1).astype("int32")
        self.indices = tf.Variable(indices, trainable=False, name="indices")
        self.weights = tf.Variable(weights.astype("float32"), trainable=False, name="weights")
        self.sources = tf.Variable(sources, trainable=False, dtype=tf.string, name="sources")
        self.targets = tf.Variable(targets, trainable=False, dtype=tf.string, name="targets")
        first = {}  # a source stored twice: its first pair is the exact match
        for index, source in enumerate(sources):
            first.setdefault(source, index)
        self.exact_table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                tf.constant(list(first), tf.string), tf.constant(list(first.values()), tf.int64)
            ),
            default_value=-1,
        )

    def features(self, strings):
        """The L2-normalised tf-idf vectors of ``[B]`` strings: ``(rows, ids, weights)``, the
        non-zero entries of a ``[B, buckets]`` matrix (a blank string has none)."""
        rows, ids, counts = _counts(*_gram_ids(strings, self.buckets), self.buckets)
        weights = (1.0 + tf.math.log(counts)) * tf.gather(self.idf, ids)
        norms = tf.math.unsorted_segment_sum(
            weights**2, rows, tf.cast(tf.shape(strings)[0], tf.int64)
        )
        return rows, ids, weights / tf.maximum(tf.sqrt(tf.gather(norms, rows)), 1e-12)

    def lookup(self, queries, exclude=None):
        """The most similar stored pair of each query.

        Args:
            queries: ``[B]`` strings.
            exclude: optional ``[B]`` int: a stored pair each query may not retrieve (its own
                index in training, so that a pair never retrieves itself; -1: none).

        Returns:
                A dict: ``index`` int64 ``[B]``, ``score`` float32 ``[B]`` (cosine, 1 for an
            exact match), ``source`` and ``target`` strings ``[B]``, ``exact`` bool ``[B]``
            (the query is a stored source, byte for byte, and not excluded). A query with no
            n-gram in common with any stored source (a blank one), or left nothing by
            ``exclude``, gets index -1, score 0 and ``""``.
        """
        queries = tf.convert_to_tensor(queries, tf.string)
        if exclude is None:
            exclude = -tf.ones(tf.shape(queries)[:1], tf.int64)
        exclude = tf.cast(exclude, tf.int64)
        return self._answer(queries, exclude, *self._scan(queries, exclude))

    def _answer(self, queries, exclude, index, score):
        """`lookup`'s dict from each query's nearest fuzzy match ``(index, score)``: an exact
        match (not excluded) wins, and a query with nothing in common gets no match."""
        exact_index = self.exact_table.lookup(queries)
        exact = (exact_index >= 0) & (exact_index != exclude)
        index = tf.where(exact, exact_index, index)
        score = tf.where(exact, 1.0, score)
        found = exact | (score > 0.0)  # nothing in common (a blank query): no match
        safe = tf.where(found, index, 0)
        return {
            "index": tf.where(found, index, -1),
            "score": tf.maximum(score, 0.0),
            "source": tf.where(found, tf.gather(self.sources, safe), ""),
            "target": tf.where(found, tf.gather(self.targets, safe), ""),
            "exact": exact,
        }

    def lookup_stored(self, block=512):
        """`lookup` of every stored source, each excluding its own pair (leave one out: the
        matches a model trains on), computed as sparse products of the stored vectors
        (scipy), much faster than `lookup` over all of them and the same up to float rounding
        (a score within 1e-6 of another can pick the other pair).

        Args:
            block: stored sources scored at once (memory: a few times ``block × size``
                floats).

        Returns:
            `lookup`'s dict for the stored sources in order, as numpy arrays.
        """
        import scipy.sparse

        indices = self.indices.numpy()
        vectors = scipy.sparse.csr_matrix(
            (self.weights.numpy(), (indices[:, 0], indices[:, 1])),
            shape=(self.size, self.buckets),
            dtype=np.float32,
        )
        transposed = vectors.T.tocsr()
        index = np.empty(self.size, np.int64)
        score = np.empty(self.size, np.float32)
        for start in range(0, self.size, block):
            end = min(start + block, self.size)
            similarity = (vectors[start:end] @ transposed).toarray()
            similarity[np.arange(end - start), np.arange(start, end)] = -1.0  # not itself
            index[start:end] = similarity.argmax(axis=1)
            score[start:end] = similarity[np.arange(end - start), index[start:end]]
        own = tf.range(self.size, dtype=tf.int64)
        found = self._answer(tf.convert_to_tensor(self.sources), own, index, score)
        return {k: v.numpy() for k, v in found.items()}

    def _scan(self, queries, exclude):
        """``(index, score)`` of each query's most similar stored source, ``exclude``\'s
        excluded (score -1 where nothing is left)."""
        rows, ids, weights = self.features(queries)
        count = tf.shape(queries, out_type=tf.int64)[0]
        indices = tf.cast(self.indices, tf.int64)
        memory = tf.SparseTensor(indices, self.weights, [self.size, self.buckets])
        stored = tf.range(self.size, dtype=tf.int64)

        def scores(start):
            end = tf.minimum(start + self.chunk, count)
            inside = (rows >= start) & (rows < end)
            # The chunk's queries as a dense [buckets, chunk] matrix: one product scores them.
            dense = tf.scatter_nd(
                tf.stack([tf.boolean_mask(ids, inside), tf.boolean_mask(rows, inside) - start], 1),
                tf.boolean_mask(weights, inside),
                tf.stack([tf.cast(self.buckets, tf.int64), end - start]),
            )
            return tf.transpose(tf.sparse.sparse_dense_matmul(memory, dense)), end

        def body(start, best_index, best_score):
            similarity, end = scores(start)
            mine = exclude[start:end, None] == stored[None, :]
            similarity = tf.where(mine, -1.0, similarity)
            best_index = tf.concat([best_index, tf.argmax(similarity, axis=1)], 0)
            best_score = tf.concat([best_score, tf.reduce_max(similarity, axis=1)], 0)
            return end, best_index, best_score

        empty = (tf.zeros([0], tf.int64), tf.zeros([0], tf.float32))
        _, index, score = tf.while_loop(
            lambda start, *_: start < count,
            body,
            (tf.constant(0, tf.int64), *empty),
            shape_invariants=(tf.TensorShape([]), tf.TensorShape([None]), tf.TensorShape([None])),
        )
        return index, score

"""The embeddings family: word2vec (skip-gram or CBOW with negative sampling) on a text corpus.

Task (`spec`): ``word2vec``, on ``--data`` a UTF-8 text file or directory, Debian's
``gcide.dict.dz`` or a WordNet directory (default: the installed GCIDE dictionary,
``make data``). Training draws skip-gram examples in ``tf.data`` (`data`, with
`keras_adl.data.skipgrams`) for the model of `build`; the run reports the word analogy
accuracy and the WordSim-353 and SimLex-999 Spearman correlations (the files gensim's wheel
ships; ``bench`` extra) and prints a few nearest neighbours (`evaluate`), and writes
``embeddings.png`` (t-SNE of chosen words and their neighbours), ``vectors.tsv`` and
``metadata.tsv`` (TensorBoard's projector) (`plots`). The export maps a batch of words to
vectors, a ``known`` flag and nearest neighbours; ``predict`` prints the neighbours
(`serving`). `hypermodels` holds `Word2VecHyperModel`; `tasks` the `Word2VecTask`.
"""

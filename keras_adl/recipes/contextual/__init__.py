"""The contextual family: ELMo's bidirectional LM, CoVe's translation encoder, and both as
features of a downstream classifier on Debian's fortunes.

Tasks (`spec`): ``pretrain_bilm`` (ELMo's character-level biLM on a text corpus, exported as
raw strings → every biLM layer), ``cove`` (CoVe's MT-LSTM: an attention encoder-decoder
translating English over fixed word2vec vectors, ``--vectors``, exported as raw English →
``[GloVe; CoVe]`` vectors) and ``fortunes_features`` (the fortune topics classified by a
bidirectional GRU over frozen ``--features``: ``static`` word vectors, ``cove`` of a ``--cove``
run, ``elmo`` or ``elmo_top`` of a ``--bilm`` run).

Modules: `spec` (tasks, presets, options), `sources` (the runs a task reads), `data`, `build`,
`evaluate`, `plots` (the scalar-mix picture), `serving`, `hypermodels` (the ``tuner`` extra)
and `tasks` (``RECIPES``: `BilmTask`, `CoveTask`, `FeaturesTask`).
"""

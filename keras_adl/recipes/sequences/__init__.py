"""The sequences family: attention encoder-decoders, the Transformer and the pointer network.

Tasks (`spec`): ``dates`` (human-written dates to ISO ``YYYY-MM-DD``, character by character,
generated), ``pairs`` (translation of the user's ``source<TAB>target`` file or of gettext
catalogs, WordPiece subwords by default, scored on other pairs by ``keras-adl evaluate``) and
``sort`` (the pointer network outputs the positions that sort a list of numbers). Each task is
a class of `tasks` composing `data` (the generated examples; the text pairs, their splits and
the `keras_adl.text.TextPairTokenizer` saved beside the model), `build` (the models and their
decoders), `evaluate` (exact match, BLEU and chrF), `plots` (the attention heatmap), `serving`
(raw strings in, decoded strings out) and `hypermodels`.
"""

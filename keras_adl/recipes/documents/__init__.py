"""The documents family: the Hierarchical Attention Network classifying raw documents.

Tasks (`spec`): ``needle`` (generated documents whose class is given by one key sentence),
``fortunes`` (Debian's fortune topics, ``make data``) and ``documents`` (your own
``<label>/<doc>.txt`` tree or ``label<TAB>text`` file). Tokenization runs in ``tf.data`` with a
`keras_adl.text.DocumentTokenizer` saved beside the model (`data`); the exported SavedModel
takes raw strings (`serving`).
"""

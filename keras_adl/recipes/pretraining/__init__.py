"""The pretraining family: BERT-style masked-LM and GPT-style causal-LM pretraining on a text
corpus, and fine-tuning on Debian's fortunes.

Tasks (`spec`): ``pretrain_mlm`` (model ``bert``: masked LM on whole documents, or with
``--segments pairs`` on sentence pairs with next-sentence prediction), ``pretrain_lm`` (model
``gpt``: next-token prediction on windows of the corpus, exported as a generator of text) and
``finetune`` (models ``bert`` and ``gpt``: fortune topics, from scratch or from a pretraining
run, ``--init RUN``, each fortune read as up to ``--windows`` windows).

Modules: `spec` (tasks, presets, options), `data` (the corpus and its splits, the WordPiece
vocabulary saved as ``tokenizer.json``, masked-LM batches, causal-LM windows, the fortunes'
windows), `build` (the models and their warm-up + cosine schedule), `evaluate` (the figures),
`plots` (the training curves and the attention heads), `serving` (generation and
classification from raw text, export, predict), `hypermodels` (`PretrainingHyperModel`) and
`tasks` (``RECIPES``: `MaskedLmPretraining`, `LanguageModelPretraining`, `Finetuning`).
"""

"""The vision family: the Recurrent Attention Model on translated and cluttered digits (beside
the paper's whole-image baselines, a 2-layer MLP and a 2-layer convnet), Show, Attend and Tell
captioning digit strips, and the Deep Recurrent Attention Model reading them glimpse by glimpse.

Tasks (`spec`): ``translated_digits``, ``cluttered_digits`` and ``cluttered_digits_100`` (RAM
classification: `tasks.RamClassification`), ``digit_strips`` (captioning: `tasks.Captioning`)
and ``digit_strips_glimpses`` (DRAM reading: `tasks.GlimpseReading`). Digits are
scikit-learn's (16×16) or MNIST / Fashion-MNIST IDX files given with ``--data`` (28×28), placed
on canvases or side by side in strips (`data`); the models are built and compiled in `build`,
searched by the HyperModels of `hypermodels`, scored by `evaluate`, drawn by `plots`, and
exported and read back by `serving`.
"""

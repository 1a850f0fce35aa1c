"""The memory family: the Neural Turing Machine, the Differentiable Neural Computer and their
LSTM baseline on the papers' algorithmic tasks.

Tasks (`spec`, fresh random sequences every step): ``copy``, ``repeat_copy``,
``associative_recall``, ``priority_sort``; one preset per (task, model) in `spec`. The models
are built and compiled in `build` (`compile_memory_model`), their data drawn in `data`, scored
in `evaluate` with the addressing picture of `plots`, served in `serving`, searched by the
HyperModel of `hypermodels`; `tasks` holds ``RECIPES``.
"""

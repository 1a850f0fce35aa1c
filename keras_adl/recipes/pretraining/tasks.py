"""The pretraining family's tasks by name: masked-LM pretraining (`MaskedLmPretraining`) and
causal-LM pretraining (`LanguageModelPretraining`) on a corpus (`pretrain`), and fine-tuning on
the fortune topics (`Finetuning`, `finetune`), each a `TransformerTask` (`transformer_task`)."""

from keras_adl.recipes.pretraining import spec
from keras_adl.recipes.pretraining.finetune import Finetuning
from keras_adl.recipes.pretraining.pretrain import LanguageModelPretraining, MaskedLmPretraining

RECIPES = {
    "pretrain_mlm": MaskedLmPretraining(spec.PRETRAIN_MLM),
    "pretrain_lm": LanguageModelPretraining(spec.PRETRAIN_LM),
    "finetune": Finetuning(spec.FINETUNE),
}

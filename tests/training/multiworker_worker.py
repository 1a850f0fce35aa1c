"""One worker of the two-process MultiWorkerMirroredStrategy test (run by test_distribute.py).

Usage: python multiworker_worker.py INDEX PORT0 PORT1 OUT.npz
"""

import json
import os
import sys

index, port0, port1, out = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
os.environ["TF_CONFIG"] = json.dumps(
    {
        "cluster": {"worker": [f"127.0.0.1:{port0}", f"127.0.0.1:{port1}"]},
        "task": {"type": "worker", "index": index},
    }
)
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

from keras_adl.models import attention_seq2seq  # noqa: E402
from keras_adl.tasks.dates import SOURCE_VOCAB, TARGET_VOCAB, date_arrays  # noqa: E402
from keras_adl.training.distribute import custom_train_loop, get_strategy  # noqa: E402

strategy = get_strategy(tf.distribute.MultiWorkerMirroredStrategy())
keras.utils.set_random_seed(index)  # different seeds: the strategy must sync initial weights
with strategy.scope():
    model = attention_seq2seq(len(SOURCE_VOCAB), len(TARGET_VOCAB), 8, 16)
    optimizer = keras.optimizers.SGD(0.5)

data = date_arrays(128, seed=0)
dataset = (
    tf.data.Dataset.from_tensor_slices(
        ({"source": data["source"], "decoder_input": data["decoder_input"]}, data["target"])
    )
    .batch(32, drop_remainder=True)
    .repeat()
)
options = tf.data.Options()
options.experimental_distribute.auto_shard_policy = tf.data.experimental.AutoShardPolicy.DATA
dataset = dataset.with_options(options)


def per_example_loss(targets, logits):
    return tf.reduce_mean(
        keras.losses.sparse_categorical_crossentropy(targets, logits, from_logits=True), axis=-1
    )


losses = custom_train_loop(model, dataset, per_example_loss, optimizer, strategy, steps=4)
np.savez(out, *[np.asarray(w) for w in model.get_weights()], losses=np.array(losses))
print(json.dumps({"worker": index, "losses": losses}))

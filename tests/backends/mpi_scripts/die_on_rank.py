"""Rank 1 dies (os._exit, as a crash) while rank 0 waits in a collective: the job must end."""

import os

import simdist as tf

tf.config.set_virtual_devices(gpus=1)
strategy = tf.distribute.MultiWorkerMirroredStrategy()
if strategy.extended._worker_index == 1:
    os._exit(3)
strategy.reduce("SUM", strategy.run(lambda: tf.constant(1.0)), axis=None)
print("unreachable", flush=True)

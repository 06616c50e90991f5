"""Worker 1 makes a reduction the others do not make; every rank must stop, none hang."""

import simdist as tf
from simdist.backends.mpi import run_worker_main


def main():
    tf.config.set_virtual_devices(gpus=1)
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    ids = strategy.run(
        lambda: tf.reshape(
            tf.cast(tf.distribute.get_replica_context().replica_id_in_sync_group, tf.float32), [1]
        )
    )
    if strategy.extended._worker_index == 1:
        strategy.reduce("SUM", ids, axis=None)
    strategy.gather(ids, axis=0)
    print("unreachable")


run_worker_main(main)

"""Every cross-worker operation of MultiWorkerMirroredStrategy, as one program whose results
are printed as a digest: run under mpiexec, and (imported) by the virtual cluster."""

from __future__ import annotations

import hashlib
import json
import sys

import numpy as np

import simdist as tf


def program(local: int) -> dict:
    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    n = strategy.num_replicas_in_sync
    rng = np.random.default_rng(7)
    values = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(n)]
    ragged = [rng.standard_normal((r % 3, 2)).astype(np.float32) for r in range(n)]
    ints = [np.arange(5, dtype=np.int32) * (r + 1) for r in range(n)]
    v = strategy.experimental_distribute_values_from_function(
        lambda c: values[c.replica_id_in_sync_group]
    )
    g = strategy.experimental_distribute_values_from_function(
        lambda c: ragged[c.replica_id_in_sync_group]
    )
    i = strategy.experimental_distribute_values_from_function(
        lambda c: ints[c.replica_id_in_sync_group]
    )
    with strategy.scope():
        metric = tf.keras.metrics.Mean()
        total = tf.Variable(
            0.0,
            synchronization=tf.VariableSynchronization.ON_READ,
            aggregation=tf.VariableAggregation.SUM,
        )

    def step(x, y):
        ctx = tf.distribute.get_replica_context()
        metric.update_state(x)
        total.assign_add(tf.reduce_sum(x))
        return ctx.all_reduce("SUM", x), ctx.all_reduce("MEAN", x), ctx.all_gather(y, axis=0)

    s, m, ag = strategy.run(step, args=(v, g))
    out = [
        strategy.reduce("SUM", v, axis=None),
        strategy.reduce("MEAN", v, axis=None),
        strategy.reduce("MEAN", g, axis=0),
        strategy.reduce("SUM", g, axis=0),
        strategy.reduce("MEAN", i, axis=None),
        strategy.gather(g, axis=0),
        metric.result(),
        total.value(),
        *strategy.experimental_local_results(s),
        *strategy.experimental_local_results(m),
        *strategy.experimental_local_results(ag),
    ]
    h = hashlib.sha256()
    for t in out:
        h.update(np.ascontiguousarray(t.numpy()).tobytes())
    return {"worker": strategy.extended._worker_index, "digest": h.hexdigest()[:16], "replicas": n}


if __name__ == "__main__":
    from simdist.backends.mpi import run_worker_main

    local = int(sys.argv[1])
    tf.config.set_virtual_devices(gpus=local)
    result = run_worker_main(lambda: program(local))
    print("RESULT " + json.dumps(result), flush=True)

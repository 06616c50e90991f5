"""An adapter for another implementation in under 50 lines (the README's example)."""

import numpy as np

from simdist.testing.adapters import Adapter


class ExampleAdapter(Adapter):
    """Maps four catalogue operations onto a module with TF's face; the rest SKIP."""

    name = "example"

    def __init__(self, max_replicas=4):
        super().__init__(max_replicas)
        import simdist as impl  # <- your implementation of the tf.distribute API

        self.tf = impl

    def _run(self, per_replica, fn):  # fn(strategy, distributed value) in a fresh strategy
        devices = [f"GPU:{i}" for i in range(len(per_replica))]
        strategy = self.tf.distribute.MirroredStrategy(devices)
        tensors = [self.tf.constant(v) for v in per_replica]
        value = strategy.experimental_distribute_values_from_function(
            lambda ctx: tensors[ctx.replica_id_in_sync_group]
        )
        return strategy, fn(strategy, value)

    def _in_replicas(self, per_replica, step):  # step(x) on every replica, local results
        strategy, out = self._run(per_replica, lambda s, v: s.run(step, args=(v,)))
        return [np.asarray(r) for r in strategy.experimental_local_results(out)]

    def reduce(self, op, per_replica, axis):
        return np.asarray(self._run(per_replica, lambda s, v: s.reduce(op, v, axis=axis))[1])

    def gather(self, per_replica, axis):
        return np.asarray(self._run(per_replica, lambda s, v: s.gather(v, axis=axis))[1])

    def all_reduce(self, op, per_replica):
        ctx = self.tf.distribute.get_replica_context
        return self._in_replicas(per_replica, lambda x: ctx().all_reduce(op, x))

    def compute_average_loss(self, per_replica_losses, global_batch_size):
        loss = self.tf.nn.compute_average_loss
        return self._in_replicas(
            per_replica_losses, lambda x: loss(x, global_batch_size=global_batch_size)
        )

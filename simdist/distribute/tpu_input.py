"""Distributed input over every host of a TPU slice, from one client, in a chosen host order.

``TPUStrategy`` is single-client: one program feeds all hosts. Each host (TPU worker) has its
own input pipeline: for ``experimental_distribute_dataset`` the dataset auto-sharded to that
worker and split over its replicas (TF's rules, :mod:`simdist.distribute.rebatch`); for
``distribute_datasets_from_function`` ``dataset_fn(InputContext(hosts, h, replicas))``. A
step takes one element per replica from every pipeline; whether it exists is decided over all
hosts (partial and empty batches as in :mod:`simdist.distribute.input_lib`).

**Host order.** TF does not guarantee the order in which hosts deliver their data (the API
page, seed). By default simdist gives host ``h``'s replicas pipeline ``h``'s data. With a
host-order seed, each step draws a permutation ``pi`` of the hosts from ``(seed, step)``
(NumPy's PCG64): host ``h``'s replicas get pipeline ``pi[h]``'s batches that step. What
changes is only which replica processes which examples: every step still holds the same
examples with the same per-replica batch sizes, so code that does not depend on the order
(losses summed over replicas, results re-ordered by an index carried with each example)
gives the same answers up to the rounding of the cross-replica sum.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from simdist.distribute.input_lib import _DistributedInput

__all__ = ["MultiHostInput", "host_order"]


def host_order(seed: int | None, step: int, num_hosts: int) -> list[int]:
    """Which pipeline each host reads at ``step``: identity without a seed, else a seeded
    permutation of ``range(num_hosts)`` (the same for the same ``(seed, step)``)."""
    if seed is None or num_hosts == 1:
        return list(range(num_hosts))
    return [int(i) for i in np.random.default_rng([int(seed), int(step)]).permutation(num_hosts)]


class MultiHostInput(_DistributedInput):
    """One distributed input made of one per-host input each (host order, see module doc).

    Args:
        hosts: per-host ``DistributedDataset`` / ``DistributedDatasetsFromFunction`` built with
            ``num_workers = len(hosts)`` and ``worker_index = h``, in host order.
        options: the ``InputOptions`` they were built with.
        host_order_seed: None for the identity order; an int for seeded permutations.
        replica_devices: the strategy's devices in replica order, when it is not host by
            host (a ``DeviceAssignment`` may interleave hosts): values are handed out in it.
    """

    def __init__(
        self,
        hosts: list[_DistributedInput],
        options,
        host_order_seed=None,
        replica_devices: tuple[str, ...] | None = None,
    ) -> None:
        by_host = [d for host in hosts for d in host._devices]
        devices = by_host if replica_devices is None else list(replica_devices)
        if sorted(devices) != sorted(by_host):
            raise ValueError("replica_devices must be the hosts' devices in another order.")
        self._replica_slots = [by_host.index(d) for d in devices]
        super().__init__(devices, options, 1, 0, None)
        self._num_workers = len(hosts)  # steps exist while any host has data
        self._hosts = list(hosts)
        self._seed = host_order_seed
        first = hosts[0]
        self._finish_spec(first._replica_spec, first._cardinality)

    def _pipelines(self) -> list:
        return [dataset for host in self._hosts for dataset in host._pipelines()]

    def _make_pull(self) -> Callable[[], list]:
        pulls = [host._make_pull() for host in self._hosts]
        steps = itertools.count()

        def pull() -> list:
            per_pipeline = [p() for p in pulls]
            order = host_order(self._seed, next(steps), len(pulls))
            by_host = [value for k in order for value in per_pipeline[k]]
            return [by_host[slot] for slot in self._replica_slots]

        return pull

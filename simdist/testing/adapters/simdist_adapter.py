"""The simdist adapter: the catalogue run against ``import simdist as tf`` on virtual GPUs,
and on virtual clusters (``simdist.sim.launch``) for the multi-worker properties."""

from __future__ import annotations

import logging

from simdist.testing.adapters import worker_program
from simdist.testing.adapters.cluster_adapter import ClusterAdapter
from simdist.testing.adapters.module_adapter import ModuleAdapter


class SimdistAdapter(ClusterAdapter, ModuleAdapter):
    """simdist's MirroredStrategy over virtual ``GPU:0 .. GPU:{max_replicas-1}``.

    Creating it raises the host's virtual GPU count to ``max_replicas`` when it is lower
    (``simdist.config.set_virtual_devices``); it never lowers it. Multi-worker operations
    run ``MultiWorkerMirroredStrategy`` on a virtual cluster of ``simdist.sim.launch``
    (up to ``max_workers`` workers of ``max_devices_per_worker`` virtual GPUs).
    """

    name = "simdist"

    def __init__(self, max_replicas: int = 4) -> None:
        import simdist

        have = len(simdist.config.list_logical_devices("GPU"))
        if have < max_replicas:
            simdist.config.set_virtual_devices(gpus=max_replicas)
        super().__init__(simdist, [f"GPU:{i}" for i in range(max_replicas)], max_replicas)

    def strategy_names(self) -> list[str]:
        return ["mirrored", "one_device", "central_storage", "default"]

    def make_strategy(self, name: str, num_replicas: int):
        if name == "central_storage":
            return self.tf.distribute.experimental.CentralStorageStrategy(
                self.devices[:num_replicas]
            )
        if name == "default":
            return self.tf.distribute.get_strategy()
        return super().make_strategy(name, num_replicas)

    def run_on_cluster(self, workers, devices_per_worker, program, kwargs):
        from simdist.sim import launch

        log = logging.getLogger("simdist")
        level = log.level
        if program == "auto_shard":  # AUTO on in-memory data warns, as TF does, every time
            log.setLevel(logging.ERROR)
        try:
            return launch(
                worker_program.run_with_new_strategy,
                workers=workers,
                devices_per_worker=devices_per_worker,
                args=(self.tf, program, kwargs),
            )
        finally:
            log.setLevel(level)

"""``CentralStorageStrategy``: compute mirrored on every device, variables in one place."""

from __future__ import annotations

from simdist.core.device import device as device_scope
from simdist.core.variables import VariableSynchronization
from simdist.distribute import distributed_variables as dv
from simdist.distribute.cross_device_ops import ReductionToOneDevice
from simdist.distribute.mirrored_strategy import _resolve_devices
from simdist.distribute.strategy import Strategy
from simdist.distribute.strategy_extended import StrategyExtended, _initial_value
from simdist.distribute.virtual_devices import resolve_device

__all__ = ["CentralStorageStrategy"]


class CentralStorageExtended(StrategyExtended):
    """One copy of each variable on the parameter device; replicas read and update it."""

    _parameter_device_name: str | None = None  # as TF shows it, when it differs

    @property
    def worker_devices(self) -> list[str]:
        """The compute devices (a list, as TF's central storage gives them)."""
        return list(self._devices)

    @property
    def parameter_devices(self) -> tuple[str, ...]:
        """The parameter device as TF names it (``("/device:CPU:0",)`` by default)."""
        if self._parameter_device_name is not None:
            return (self._parameter_device_name,)
        return self._parameter_devices

    def _local_devices(self) -> tuple[str, ...]:
        return self._devices

    def _create_distributed(self, next_creator, **kwargs):
        name = kwargs.get("name") or "Variable"
        sync = dv.check_synchronization(
            kwargs.get("synchronization", VariableSynchronization.AUTO), name
        )
        if sync is VariableSynchronization.ON_READ:  # per-replica state (metrics) stays local
            components = []
            initial = _initial_value(kwargs)
            for i, device in enumerate(self._devices):
                kw = dict(
                    kwargs, initial_value=initial, name=name if i == 0 else f"{name}/replica_{i}"
                )
                with device_scope(device):
                    components.append(next_creator(**kw))
            return dv.SyncOnReadVariable(
                self._container_strategy, components, components[0].aggregation
            )
        with device_scope(self._parameter_devices[0]):
            variable = next_creator(**dict(kwargs, initial_value=_initial_value(kwargs)))
        return dv.MirroredVariable(self._container_strategy, [variable], variable.aggregation)


class CentralStorageStrategy(Strategy):
    """``tf.distribute.experimental.CentralStorageStrategy(compute_devices, parameter_device)``.

    Variables live on ``parameter_device`` (the CPU when there are several compute devices,
    else the one compute device); each replica reads them and the replicas' updates are
    aggregated before they are applied once.
    """

    def __init__(self, compute_devices=None, parameter_device: str | None = None) -> None:
        devices = _resolve_devices(compute_devices)
        shown = "/device:CPU:0" if parameter_device is None and len(devices) > 1 else None
        if parameter_device is None:
            parameter_device = "CPU:0" if len(devices) > 1 else devices[0]
        params = (resolve_device(parameter_device),)
        extended = CentralStorageExtended(
            self, devices, ReductionToOneDevice(), parameter_devices=params
        )
        extended._parameter_device_name = shown
        super().__init__(extended)

"""``MirroredStrategy``: synchronous data parallelism over the devices of one host."""

from __future__ import annotations

import logging

from simdist.core.device import device as device_scope
from simdist.core.variables import VariableSynchronization
from simdist.distribute import distributed_variables as dv
from simdist.distribute.cross_device_ops import CrossDeviceOps, NcclAllReduce
from simdist.distribute.strategy import Strategy
from simdist.distribute.strategy_extended import StrategyExtended, _initial_value
from simdist.distribute.virtual_devices import local_devices, resolve_device

__all__ = ["MirroredStrategy"]

_log = logging.getLogger("simdist")


def _resolve_devices(devices) -> tuple[str, ...]:
    if devices is None:
        devices = local_devices("GPU") or local_devices("CPU")
    if isinstance(devices, str):
        raise TypeError(
            f"devices must be a list of device names, got the string {devices!r}; write "
            f"devices=[{devices!r}]."
        )
    resolved = tuple(resolve_device(d) for d in devices)
    if not resolved:
        raise ValueError("Must specify at least one device in `devices`.")
    if len(set(resolved)) != len(resolved):
        raise ValueError(f"No duplicates allowed in `devices` argument: {list(devices)}.")
    return resolved


class MirroredExtended(StrategyExtended):
    """Mirrored variables: one copy per replica device, the same value in each."""

    def _create_distributed(self, next_creator, **kwargs):
        name = kwargs.get("name") or "Variable"
        sync = dv.check_synchronization(
            kwargs.get("synchronization", VariableSynchronization.AUTO), name
        )
        initial = _initial_value(kwargs)
        components = []
        for i, device in enumerate(self._devices):
            component_kwargs = dict(kwargs, initial_value=initial)
            if sync is VariableSynchronization.AUTO:  # TF: mirrored means ON_WRITE
                component_kwargs["synchronization"] = VariableSynchronization.ON_WRITE
            component_kwargs["name"] = name if i == 0 else f"{name}/replica_{i}"
            with device_scope(device):
                components.append(next_creator(**component_kwargs))
        aggregation = components[0].aggregation
        cls = (
            dv.SyncOnReadVariable
            if sync is VariableSynchronization.ON_READ
            else dv.MirroredVariable
        )
        return cls(self._container_strategy, components, aggregation)


class MirroredStrategy(Strategy):
    """Synchronous training on several devices of one machine (``tf.distribute.MirroredStrategy``).

    Args:
        devices: device names (``["GPU:0", "GPU:1"]``); default: every virtual GPU of the
            simulated host, or its CPU when it has none.
        cross_device_ops: how gradients are all-reduced; default ``NcclAllReduce()``.

    Raises:
        ValueError: an unknown or duplicate device.
    """

    def __init__(self, devices=None, cross_device_ops: CrossDeviceOps | None = None) -> None:
        resolved = _resolve_devices(devices)
        if cross_device_ops is not None and not isinstance(cross_device_ops, CrossDeviceOps):
            raise TypeError(
                f"cross_device_ops must be a tf.distribute.CrossDeviceOps, got "
                f"{type(cross_device_ops).__name__}."
            )
        super().__init__(MirroredExtended(self, resolved, cross_device_ops or NcclAllReduce()))
        _log.info("Using MirroredStrategy with devices %s", resolved)

"""``OneDeviceStrategy``: everything on one device; variables stay plain variables."""

from __future__ import annotations

import weakref

from simdist.core.device import device as device_scope
from simdist.distribute.cross_device_ops import ReductionToOneDevice
from simdist.distribute.strategy import Strategy
from simdist.distribute.strategy_extended import StrategyExtended
from simdist.distribute.virtual_devices import resolve_device

__all__ = ["OneDeviceStrategy"]


class OneDeviceExtended(StrategyExtended):
    """Variables are plain variables on the one device; the strategy remembers which."""

    _passes_plain_values_through = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._created = weakref.WeakValueDictionary()  # id -> variable made in scope

    def _create_distributed(self, next_creator, **kwargs):
        with device_scope(self._devices[0]):
            variable = next_creator(**kwargs)
        self._created[id(variable)] = variable
        return variable

    def update(self, var, fn, args=(), kwargs=None, group=True):
        with device_scope(self._devices[0]):
            return fn(var, *args, **(kwargs or {}))

    def _update_non_distributed(self, var, fn, args, kwargs):
        return self.update(var, fn, args, kwargs)

    def variable_created_in_scope(self, v) -> bool:
        return self._created.get(id(v)) is v


class OneDeviceStrategy(Strategy):
    """Run on one device (``tf.distribute.OneDeviceStrategy(device="/gpu:0")``).

    Raises:
        ValueError: the device does not exist on the simulated host.
    """

    def __init__(self, device: str) -> None:
        resolved = resolve_device(device)
        super().__init__(OneDeviceExtended(self, (resolved,), ReductionToOneDevice()))

    def experimental_distribute_values_from_function(self, value_fn):
        from simdist.distribute.input_lib import distribute_values_from_function

        return distribute_values_from_function(
            value_fn, self._extended._local_devices(), always_wrap=False
        )

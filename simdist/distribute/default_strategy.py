"""The default strategy: what ``get_strategy()`` returns outside any scope (one replica, here)."""

from __future__ import annotations

from simdist.core.device import current_device
from simdist.distribute.cross_device_ops import ReductionToOneDevice
from simdist.distribute.distribute_lib import ReplicaContext
from simdist.distribute.strategy import Strategy
from simdist.distribute.strategy_extended import StrategyExtended

__all__ = ["default_strategy"]


class _DefaultExtended(StrategyExtended):
    _passes_plain_values_through = True

    @property
    def worker_devices(self) -> tuple[str, ...]:
        """Raises RuntimeError, as TF's default strategy does."""
        raise RuntimeError("worker_devices() method unsupported by default tf.distribute.Strategy.")

    @property
    def parameter_devices(self) -> tuple[str, ...]:
        """Raises RuntimeError, as TF's default strategy does."""
        raise RuntimeError(
            "parameter_devices() method unsupported by default tf.distribute.Strategy."
        )

    def _local_devices(self) -> tuple[str, ...]:
        return (current_device(),)

    def _create_distributed(self, next_creator, **kwargs):
        return next_creator(**kwargs)

    def update(self, var, fn, args=(), kwargs=None, group=True):
        return fn(var, *args, **(kwargs or {}))

    def _update_non_distributed(self, var, fn, args, kwargs):
        return self.update(var, fn, args, kwargs)

    def variable_created_in_scope(self, v) -> bool:
        return True


class _DefaultReplicaContext(ReplicaContext):
    """The replica context outside any strategy (TF's class of the same name)."""


class _DefaultDistributionStrategy(Strategy):
    """A singleton: one replica on the current device; ``run`` just calls the function."""

    def __init__(self) -> None:
        super().__init__(
            _DefaultExtended(
                self, ("/job:localhost/replica:0/task:0/device:CPU:0",), ReductionToOneDevice()
            )
        )
        self._default_replica_context = _DefaultReplicaContext(self, 0, runner=None)

    def scope(self):
        import contextlib

        return contextlib.nullcontext(self)

    def run(self, fn, args=(), kwargs=None, options=None):
        return fn(*args, **(kwargs or {}))


_DEFAULT = None


def default_strategy() -> _DefaultDistributionStrategy:
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = _DefaultDistributionStrategy()
    return _DEFAULT

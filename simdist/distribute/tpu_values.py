"""TPU variables: mirrored and sync-on-read variables that live in TPU memory.

They behave as ``MirroredVariable`` / ``SyncOnReadVariable`` (and print as TF's
``TPUMirroredVariable`` / ``TPUSyncOnReadVariable``), with one difference TPUs have:
initializing the TPU system again (or shutting it down) clears TPU memory, so a variable
created before that is lost. Using a lost variable raises ``FailedPreconditionError``, as
reading a resource that no longer exists does in TF, with how to recover.
"""

from __future__ import annotations

import weakref

from simdist import errors
from simdist.distribute.distributed_variables import MirroredVariable, SyncOnReadVariable

__all__ = ["TPUMirroredVariable", "TPUSyncOnReadVariable", "track", "release_all"]

_live: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # id -> live TPU variable


class _TPUMemory:
    """Mixin: every access to the copies first checks they are still in TPU memory."""

    _lost = False

    def _check_alive(self) -> None:
        if self._lost:
            name = self._components[0].name
            raise errors.FailedPreconditionError(
                f"Error while reading resource variable {name} from Container: localhost. This "
                "could mean that the variable was uninitialized. (simdist: the TPU system was "
                "initialized again, or shut down, after this variable was created, and that "
                "clears TPU memory. Initialize the TPU system once, at the start of the "
                "program, then create the strategy and its variables; or restore them from a "
                "checkpoint.)"
            )

    def _local(self):
        self._check_alive()
        return super()._local()

    @property
    def _primary(self):
        self._check_alive()
        return self._components[0]

    @property
    def values(self) -> tuple:
        self._check_alive()
        return self._components


class TPUMirroredVariable(_TPUMemory, MirroredVariable):
    """A mirrored variable on TPU cores (ON_WRITE)."""

    _type_name = "TPUMirroredVariable"


class TPUSyncOnReadVariable(_TPUMemory, SyncOnReadVariable):
    """A sync-on-read variable on TPU cores (ON_READ)."""

    _type_name = "TPUSyncOnReadVariable"

    def _aggregated(self):
        self._check_alive()
        return super()._aggregated()


def track(variable) -> None:
    """Remember a TPU variable so that re-initializing the TPU system can clear it."""
    _live[id(variable)] = variable


def release_all() -> int:
    """Mark every tracked TPU variable lost (TPU memory cleared); return how many."""
    lost = list(_live.values())
    for variable in lost:
        variable._lost = True
    _live.clear()
    return len(lost)

"""The simulated TPU system: process state of which TPU slice is connected and initialized.

The TPU system is process state, as in TF: initializing a resolver's TPU makes its slice the
simulated host's TPU devices (``tf.config.list_logical_devices("TPU")`` lists one host's
devices) and clears TPU memory: TPU variables made before it are lost
(:mod:`simdist.distribute.tpu_values`). ``TPUStrategy`` needs the system initialized for its
resolver's TPU. A remote TPU (named by accelerator type, see
:mod:`simdist.distribute.cluster_resolver.tpu`) must first be connected; a local one need not
be. simdist keeps one initialized system at a time.

This module sits below the TPU resolver (which asks it what is initialized) and knows a
resolver only by what it reads from it: ``_tpu`` (its name), ``is_local``, ``master()``,
``_job()`` and ``simdist_slice``. The public calls that validate their arguments
(``tf.tpu.experimental.initialize_tpu_system`` and friends) are in
:mod:`simdist.distribute.tpu_initialization`; ``simdist.tpu`` re-exports them.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import TYPE_CHECKING

import numpy as np

from simdist import errors
from simdist.core.function import executing_eagerly
from simdist.distribute import tpu_values, virtual_devices

if TYPE_CHECKING:
    from simdist.distribute.cluster_resolver.tpu import TPUSlice

__all__ = [
    "Topology",
    "TPUSystem",
    "connect",
    "initialize",
    "shutdown",
    "initialized_system",
    "require_initialized",
    "current_generation",
]

_log = logging.getLogger("simdist")


class Topology:
    """``tf.tpu.experimental.Topology``: where each TPU device of the slice sits.

    ``mesh_shape`` is ``[x, y, z, devices per chip]`` (2D slices have ``z = 1``);
    ``device_coordinates[task, i]`` is ``[x, y, z, core]`` of task ``task``'s TPU device ``i``.
    ``simdist_topology`` is the slice's chips and links for the cost model.
    """

    def __init__(self, tpu_slice: TPUSlice) -> None:
        topo = tpu_slice.topology()
        dims = tuple(topo.torus_dims) + (1,) * (3 - len(topo.torus_dims))
        self._slice = tpu_slice
        self.simdist_topology = topo
        self.mesh_shape = np.array([*dims, tpu_slice.devices_per_chip], dtype=np.int32)
        coords = []
        for host in topo.hosts:
            row = []
            for rank in topo.devices_on_host(host):
                chip = tuple(topo.torus_coords(rank)) + (0,) * (3 - len(topo.torus_dims))
                row.extend([*chip, core] for core in range(tpu_slice.devices_per_chip))
            coords.append(row)
        self.device_coordinates = np.array(coords, dtype=np.int32)
        self.missing_devices = np.zeros((0, 4), dtype=np.int32)

    @property
    def mesh_rank(self) -> int:
        """4: ``[x, y, z, core]``."""
        return len(self.mesh_shape)

    @property
    def num_tasks(self) -> int:
        return int(self.device_coordinates.shape[0])

    @property
    def num_tpus_per_task(self) -> int:
        return int(self.device_coordinates.shape[1])

    def _find(self, device_coordinates) -> tuple[int, int]:
        target = np.asarray(device_coordinates, dtype=np.int32)
        hits = np.argwhere(np.all(self.device_coordinates == target, axis=-1))
        if len(hits) == 0:
            raise ValueError(
                f"No TPU device at coordinates {list(target)}; the mesh shape is "
                f"{list(self.mesh_shape)}."
            )
        return int(hits[0][0]), int(hits[0][1])

    def task_ordinal_at_coordinates(self, device_coordinates) -> int:
        """The task (host) holding the device at ``[x, y, z, core]``."""
        return self._find(device_coordinates)[0]

    def tpu_device_ordinal_at_coordinates(self, device_coordinates) -> int:
        """The device's index among its host's TPU devices."""
        return self._find(device_coordinates)[1]

    def tpu_device_name_at_coordinates(self, device_coordinates, job: str | None = None) -> str:
        """``/job:<job>/task:<t>/device:TPU:<i>`` (without ``/job:`` when ``job`` is None)."""
        task, index = self._find(device_coordinates)
        return f"{_job_prefix(job)}/task:{task}/device:TPU:{index}"

    def cpu_device_name_at_coordinates(self, device_coordinates, job: str | None = None) -> str:
        """The host's CPU: ``/job:<job>/task:<t>/device:CPU:0`` (TF's form)."""
        task, _ = self._find(device_coordinates)
        return f"{_job_prefix(job)}/task:{task}/device:CPU:0"

    def __repr__(self) -> str:
        return (
            f"<Topology {self._slice.accelerator_type}: mesh_shape={self.mesh_shape.tolist()}, "
            f"{self.num_tasks} task(s) x {self.num_tpus_per_task} TPU device(s)>"
        )


def _job_prefix(job: str | None) -> str:
    return "" if job is None else f"/job:{job}"


@dataclasses.dataclass(frozen=True)
class TPUSystem:
    """The initialized TPU system: which TPU, its devices (host by host), its topology."""

    tpu: str
    slice: TPUSlice
    devices: tuple[str, ...]
    topology: Topology
    generation: int


class _State:
    def __init__(self) -> None:
        self.system: TPUSystem | None = None
        self.connected: set[str] = set()
        self.generation = 0


_state = _State()


def require_eager_connect() -> None:
    """Raises ValueError inside a ``tf.function`` (connecting is eager-only, as in TF)."""
    if not executing_eagerly():
        raise ValueError(
            "`tf.config.experimental_connect_to_cluster` can only be called in eager mode."
        )


def connect(resolver) -> None:
    """Remember a remote TPU resolver's TPU as connected (initializing it needs that).

    Raises:
        ValueError: called inside a ``tf.function``.
    """
    require_eager_connect()
    if not resolver.is_local:
        _state.connected.add(resolver._tpu)


def _require_eager(api: str) -> None:
    if not executing_eagerly():
        raise RuntimeError(
            f"{api} is not supported within tf.functions. You should call {api} outside of "
            "your tf.function."
        )


def initialize(resolver) -> Topology:
    """Bring up the resolver's TPU slice.

    Clears TPU memory (TPU variables made before are lost), makes the slice's devices the
    host's TPU devices, and returns its ``Topology``.

    Raises:
        RuntimeError: called inside a ``tf.function``.
        NotFoundError: a remote TPU that was not connected first.
    """
    _require_eager("initialize_tpu_system")
    name = resolver._tpu
    if not resolver.is_local and name not in _state.connected:
        raise errors.NotFoundError(
            "TPUs not found in the cluster. Failed in initialization: the TPU "
            f"{name!r} is remote ({resolver.master()}) and this process is not connected to "
            "it. Call tf.config.experimental_connect_to_cluster(resolver) before "
            "tf.tpu.experimental.initialize_tpu_system(resolver)."
        )
    if _state.system is not None and _state.system.tpu == name:
        _log.warning(
            "TPU system %s has already been initialized. Reinitializing the TPU can cause "
            "previously created variables on TPU to be lost.",
            name,
        )
    _log.info("Initializing the TPU system: %s", name)
    tpu_values.release_all()
    tpu_slice = resolver.simdist_slice
    virtual_devices.set_virtual_devices(tpus=tpu_slice.cores_per_host)
    topology = Topology(tpu_slice)
    _state.generation += 1
    _state.system = TPUSystem(
        name, tpu_slice, tpu_slice.device_names(resolver._job()), topology, _state.generation
    )
    _log.info("Finished initializing TPU system.")
    return topology


def shutdown(resolver) -> None:
    """Release the resolver's TPUs (and TPU memory); a warning if it is not initialized.

    Raises:
        RuntimeError: called inside a ``tf.function``.
    """
    _require_eager("shutdown_tpu_system")
    name = resolver._tpu
    if _state.system is None or _state.system.tpu != name:
        _log.warning("You are shutting down a TPU system %s that has not been initialized.", name)
        return
    _log.info("Shutting down the TPU system: %s", name)
    tpu_values.release_all()
    virtual_devices.set_virtual_devices(tpus=0)
    _state.system = None


def initialized_system(resolver) -> TPUSystem | None:
    """The initialized system if it is ``resolver``'s TPU, else None."""
    system = _state.system
    return system if system is not None and system.tpu == resolver._tpu else None


def require_initialized(resolver) -> TPUSystem:
    """The resolver's initialized TPU system.

    Raises:
        FailedPreconditionError: it is not initialized (with the three lines that do it).
    """
    system = initialized_system(resolver)
    if system is None:
        other = _state.system
        now = f" (the initialized TPU is {other.tpu!r})" if other is not None else ""
        raise errors.FailedPreconditionError(
            f"The TPU system has not been initialized: TPU {resolver._tpu!r}{now}. Before "
            "creating a TPUStrategy, run tf.config.experimental_connect_to_cluster(resolver) "
            "and tf.tpu.experimental.initialize_tpu_system(resolver) with the same "
            "TPUClusterResolver."
        )
    return system


def current_generation() -> int:
    """How many times a TPU system was initialized in this process."""
    return _state.generation

"""``tf.tpu.experimental.DeviceAssignment``: which TPU cores each replica's logical cores are.

A device assignment maps ``(replica, logical core)`` to a physical core's coordinates
``[x, y, z, core]`` in the slice's ``Topology``: ``core_assignment`` has shape
``[num_replicas, num_cores_per_replica, 4]``. ``TPUStrategy(resolver,
experimental_device_assignment=da)`` runs ``da.num_replicas`` replicas, replica ``r`` on the
TPU device of its logical core 0 (``da.tpu_device(r)``).

``DeviceAssignment.build(topology, computation_shape, computation_stride, num_replicas,
device_order_mode)`` places replicas as TensorFlow 2.21's does (the same coordinates; checked
against TF's own function in ``tests/distribute/test_tpu_device_assignment.py``):

* A replica's block of cores is ``computation_shape`` (default one core), spaced by
  ``computation_stride``; its footprint, shape times stride, must fit in the mesh, and
  ``num_replicas`` must not exceed the blocks that fit (times the stride).
* The replicas form a grid, ``replica_shape``, as near a cube as the mesh allows: dimensions
  are filled from the one with the fewest places, the core-per-chip dimension first on ties,
  then x, y, z; each takes ``ceil(remaining ** (1 / dims left))`` replicas (at most what fits).
* With full replication of whole chips (all cores of a chip per replica, no stride, every
  place used), or ``DeviceOrderMode.RING``: replicas follow a ring through the replica grid
  and each replica's chips a ring through its block (a serpentine over x and y, layers of z
  joined at the corner ``x = y = 0``; a grid with an odd side is walked in plain x-y-z order).
  Otherwise (``AUTO`` or ``MESH``): replica ``r``'s position in the grid counts the core
  dimension fastest, then x, y, z, and its logical cores are its block in row-major order
  (``[x, y, z, core]``, core fastest).

Model parallelism itself (one replica's computation spread over several cores) is not
simulated: a replica computes on its logical core 0, and
``experimental_assign_to_logical_device`` returns the value (it is a placement annotation in
TensorFlow, the values do not change).
"""

from __future__ import annotations

import enum
import math

import numpy as np

from simdist.distribute.tpu_system import Topology

__all__ = ["DeviceAssignment", "DeviceOrderMode", "device_assignment"]


class DeviceOrderMode(enum.IntEnum):
    """How ``DeviceAssignment.build`` orders devices (``tf.tpu.experimental.DeviceOrderMode``)."""

    AUTO = 0  # rings where the assignment allows them, else a mesh
    RING = 1
    MESH = 2


class DeviceAssignment:
    """A mapping from each replica's logical cores to physical TPU cores.

    Args:
        topology: the ``Topology`` that ``initialize_tpu_system`` returned.
        core_assignment: an int array ``[num_replicas, num_cores_per_replica, mesh rank]``
            of physical coordinates.

    Raises:
        ValueError: ``topology`` is not a Topology; ``core_assignment`` is not rank 3, its
            last dimension is not the mesh rank, or it names coordinates with no core.
    """

    def __init__(self, topology: Topology, core_assignment) -> None:
        if not isinstance(topology, Topology):
            raise ValueError(
                f"topology must be a Topology object, got {type(topology)}; pass what "
                "tf.tpu.experimental.initialize_tpu_system(resolver) returned."
            )
        assignment = np.asarray(core_assignment, dtype=np.int32)
        if assignment.ndim != 3:
            raise ValueError(
                f"core_assignment must be a rank 3 numpy array, got shape {assignment.shape}"
            )
        if assignment.shape[-1] != topology.mesh_rank:
            raise ValueError(
                "core_assignment.shape[-1] must have size equal to topology rank "
                f"({topology.mesh_rank}), got core_assignment.shape={assignment.shape}"
            )
        self._topology = topology
        self._core_assignment = assignment
        self._replicas_by_task: dict[int, dict[int, list[int]]] = {}
        for replica in range(assignment.shape[0]):
            for core in range(assignment.shape[1]):
                task = topology.task_ordinal_at_coordinates(assignment[replica, core])
                by_core = self._replicas_by_task.setdefault(task, {})
                by_core.setdefault(core, []).append(replica)

    @property
    def topology(self) -> Topology:
        return self._topology

    @property
    def num_replicas(self) -> int:
        return int(self._core_assignment.shape[0])

    @property
    def num_cores_per_replica(self) -> int:
        return int(self._core_assignment.shape[1])

    @property
    def core_assignment(self) -> np.ndarray:
        """``[num_replicas, num_cores_per_replica, mesh rank]`` physical coordinates."""
        return self._core_assignment

    def coordinates(self, replica: int, logical_core: int) -> tuple:
        """The physical coordinates ``(x, y, z, core)`` of a replica's logical core."""
        return tuple(self._core_assignment[replica, logical_core, :])

    def lookup_replicas(self, task_id: int, logical_core: int) -> list[int]:
        """The replicas (sorted) whose ``logical_core`` is on task ``task_id``.

        Raises:
            ValueError: no replica has that logical core on that task.
        """
        try:
            return self._replicas_by_task[task_id][logical_core]
        except KeyError:
            raise ValueError(
                f"Can not find any replica in task: {task_id} contains logical_core: "
                f"{logical_core} "
            ) from None

    def tpu_ordinal(self, replica: int = 0, logical_core: int = 0) -> int:
        """The index of the replica's logical core among its host's TPU devices."""
        return self._topology.tpu_device_ordinal_at_coordinates(
            self.coordinates(replica, logical_core)
        )

    def host_device(self, replica: int = 0, logical_core: int = 0, job: str | None = None) -> str:
        """The CPU device of the host of the replica's logical core (``/task:0/device:CPU:0``)."""
        return self._topology.cpu_device_name_at_coordinates(
            self.coordinates(replica, logical_core), job=job
        )

    def tpu_device(self, replica: int = 0, logical_core: int = 0, job: str | None = None) -> str:
        """The TPU device of the replica's logical core (``/task:0/device:TPU:3``)."""
        return self._topology.tpu_device_name_at_coordinates(
            self.coordinates(replica, logical_core), job=job
        )

    @classmethod
    def build(
        cls,
        topology: Topology,
        computation_shape=None,
        computation_stride=None,
        num_replicas: int = 1,
        device_order_mode: DeviceOrderMode = DeviceOrderMode.AUTO,
    ) -> DeviceAssignment:
        """Place ``num_replicas`` replicas of ``computation_shape`` cores (module docstring)."""
        return device_assignment(
            topology, computation_shape, computation_stride, num_replicas, device_order_mode
        )

    def __repr__(self) -> str:
        return (
            f"<DeviceAssignment {self.num_replicas} replica(s) x "
            f"{self.num_cores_per_replica} core(s)>"
        )


def _vector(value, rank: int, what: str) -> np.ndarray:
    vector = np.ones(rank, dtype=np.int32) if value is None else np.asarray(value, np.int32)
    if vector.shape != (rank,):
        raise ValueError(f"{what} must have shape [{rank}]; got {vector.shape}")
    if np.any(vector < 1):
        raise ValueError(f"{what} must be positive; got {what}={vector}")
    return vector


def _replica_grid(places: np.ndarray, num_replicas: int) -> list[int]:
    """Replicas per dimension, as near a cube as ``places`` (replicas that fit) allows."""
    rank = len(places)
    # fewest places first; on ties the core dimension (last) first, then x, y, z
    order = sorted(range(rank), key=lambda d: (int(places[d]), (d + 1) % rank))
    grid = [0] * rank
    remaining, dims_left = num_replicas, rank
    for d in order:
        grid[d] = min(int(math.ceil(remaining ** (1.0 / dims_left))), int(places[d]))
        remaining = -(-remaining // grid[d])
        dims_left -= 1
    return grid


def _serpentine(x_size: int, y_size: int, z: int) -> list[tuple[int, int, int]]:
    """A ring through an x-by-y layer that starts after (0, 0): rows in pairs, out along
    even rows and back along odd ones (x >= 1), then home up the column x = 0."""
    path = []
    for pair in range(y_size // 2):
        path += [(x, 2 * pair, z) for x in range(1, x_size)]
        path += [(x, 2 * pair + 1, z) for x in range(x_size - 1, 0, -1)]
    path += [(0, y, z) for y in range(y_size - 1, 0, -1)]
    return path


def _ring(x_size: int, y_size: int, z_size: int) -> list[tuple[int, int, int]]:
    """A closed walk through every chip of an x-by-y-by-z block, starting at (0, 0, 0)."""
    sizes = (x_size, y_size, z_size)
    long_sides = [d for d, s in enumerate(sizes) if s > 1]
    if len(long_sides) <= 1:  # a line (or one chip)
        axis = long_sides[0] if long_sides else 2
        return [tuple(i if d == axis else 0 for d in range(3)) for i in range(sizes[axis])]
    if any(s > 1 and s % 2 for s in sizes):  # odd side: plain x-fastest order
        return [(x, y, z) for z in range(z_size) for y in range(y_size) for x in range(x_size)]
    if z_size == 1:
        return [(0, 0, 0), *_serpentine(x_size, y_size, 0)]
    if y_size == 1:
        return [(0, 0, 0), *((a, 0, b) for a, b, _ in _serpentine(x_size, z_size, 0))]
    if x_size == 1:
        return [(0, 0, 0), *((0, a, b) for a, b, _ in _serpentine(y_size, z_size, 0))]
    path = [(0, 0, 0)]
    for z in range(z_size):
        layer = _serpentine(x_size, y_size, z)
        path += layer if z % 2 == 0 else layer[::-1]
    path += [(0, 0, z) for z in range(z_size - 1, 0, -1)]
    return path


def device_assignment(
    topology: Topology,
    computation_shape=None,
    computation_stride=None,
    num_replicas: int = 1,
    device_order_mode: DeviceOrderMode = DeviceOrderMode.AUTO,
) -> DeviceAssignment:
    """``tf.tpu.experimental.DeviceAssignment.build`` (see the module docstring).

    Raises:
        ValueError: not a Topology; a shape or stride of the wrong length or not positive;
            a footprint that does not fit the mesh; more replicas than fit; ``RING`` where
            whole-chip full replication is not asked for.
    """
    if not isinstance(topology, Topology):
        raise ValueError(f"`topology` is not a Topology object; got {type(topology)}")
    mesh = np.asarray(topology.mesh_shape, dtype=np.int32)
    rank = len(mesh)
    shape = _vector(computation_shape, rank, "computation_shape")
    stride = _vector(computation_stride, rank, "computation_stride")
    footprint = shape * stride
    if np.any(footprint > mesh):
        raise ValueError(
            f"computation footprint {footprint} does not fit in TPU topology shape {mesh}"
        )
    places = (mesh // footprint) * stride
    max_replicas = int(np.prod(places))
    if num_replicas > max_replicas:
        raise ValueError(
            f"requested {num_replicas} replicas but only {max_replicas} replicas with shape "
            f"{shape} and computation_stride {stride} fit in a TPU mesh of shape {mesh}"
        )
    if topology.missing_devices.size:
        return DeviceAssignment(topology, _in_task_order(topology, shape, num_replicas))
    grid = _replica_grid(places, num_replicas) if num_replicas > 0 else [0] * rank
    whole_chips = (
        rank == 4
        and shape[-1] == mesh[-1]
        and int(np.prod(stride)) == 1
        and num_replicas == max_replicas
    )
    mode = DeviceOrderMode(device_order_mode)
    if mode is DeviceOrderMode.RING and not whole_chips:
        raise ValueError(
            "device_order_mode=DeviceOrderMode.RING is not compatible with the 3D tiling "
            "current topology.  Try setting device_order_mode=DeviceOrderMode.AUTO"
        )
    rings = whole_chips if mode is DeviceOrderMode.AUTO else mode is DeviceOrderMode.RING
    if rings:
        assignment = _ring_assignment(shape, grid, int(mesh[-1]), num_replicas)
    else:
        assignment = _mesh_assignment(shape, stride, footprint, grid, num_replicas)
    return DeviceAssignment(topology, assignment)


def _ring_assignment(shape, grid, cores_per_chip: int, num_replicas: int) -> np.ndarray:
    chips_in_block = _ring(*(int(s) for s in shape[:3]))
    block_origins = _ring(*(int(g) for g in grid[:3]))
    out = np.zeros((num_replicas, int(np.prod(shape)), 4), dtype=np.int32)
    for replica in range(num_replicas):
        origin = np.array(block_origins[replica]) * shape[:3]
        for core in range(out.shape[1]):
            chip = origin + np.array(chips_in_block[core // cores_per_chip])
            out[replica, core] = [*chip, core % cores_per_chip]
    return out


def _mesh_assignment(shape, stride, footprint, grid, num_replicas: int) -> np.ndarray:
    rank = len(shape)
    # the position of each replica in the grid: the core dimension counts fastest, then x, y, z
    digit_order = [rank - 1, *range(rank - 1)]
    offsets = np.zeros((num_replicas, rank), dtype=np.int32)
    for replica in range(num_replicas):
        rest = replica
        position = np.zeros(rank, dtype=np.int32)
        for d in digit_order:
            position[d] = rest % grid[d]
            rest //= grid[d]
        offsets[replica] = (position // stride) * footprint + position % stride
    block = np.array(list(np.ndindex(*(int(s) for s in shape))), dtype=np.int32) * stride
    return block[np.newaxis, :, :] + offsets[:, np.newaxis, :]


def _in_task_order(topology: Topology, shape, num_replicas: int) -> np.ndarray:
    """A slice with missing chips: replicas take the devices in task order."""
    per_replica = int(np.prod(shape))
    flat = topology.device_coordinates.reshape(-1, topology.mesh_rank)
    return flat[: num_replicas * per_replica].reshape(num_replicas, per_replica, -1)

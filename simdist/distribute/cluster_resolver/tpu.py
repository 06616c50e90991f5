"""``TPUClusterResolver``: a TPU name resolved to a simulated Cloud TPU slice.

Names are Google's accelerator types, resolved with the topology presets
(:mod:`simdist.topology.tpu`): ``v3-8``, ``v4-8``, ``v4-32``, ``v5litepod-16`` (``v5e-16``),
``v5p-8``... What TensorFlow sees of a slice, and so what simdist gives ``TPUStrategy``:

* **TPU devices (= replicas).** v3: each of a chip's 2 TensorCores is a device (``v3-8``: 4
  chips, 8 devices). v4 and v5p: a chip's 2 TensorCores form one *megacore* device
  (``v4-8``: 4 chips, 4 devices). v5e: 1 TensorCore per chip, one device per chip
  (``v5litepod-16``: 16 devices). (Google's v3/v4/v5e/v5p system-architecture pages.)
* **Hosts (= TPU workers).** The presets' hosts: 4 chips per host for v3, v4 and v5p, 8 for
  v5e. Devices are ``/job:worker/replica:0/task:<host>/device:TPU:<i>``, ``i`` counting
  the host's devices, ordered host by host (TF sorts them so).

Where the TPU is:

* ``tpu=None`` or ``""``: the TPU named by the ``TPU_NAME`` environment variable (as TF's
  client reads it), else the TPU attached to this VM, as ``"local"``.
* ``tpu="local"``: a TPU attached to this VM (a TPU VM): no cluster (``cluster_spec()`` is
  empty, ``master()`` is ``""``), devices on ``/job:localhost``. Which slice it is:
  ``SIMDIST_TPU`` (an accelerator type with one host), default ``v3-8`` (8 TensorCores, as
  the Colab TPU the guides were written on). A multi-host slice cannot be local.
* an accelerator type (``"v4-32"``): a remote TPU (a TPU node): its hosts form the
  ``worker`` job at simulated addresses, ``master()`` is ``grpc://<host 0>:8470``, and
  ``tf.config.experimental_connect_to_cluster`` must run before the TPU system can be
  initialized.
* ``"grpc://host:port"``: a remote TPU at that address, of the ``SIMDIST_TPU`` / default type.
"""

from __future__ import annotations

import collections
import dataclasses
import os
from typing import Any

from simdist import settings
from simdist.core import step_hooks
from simdist.distribute import tpu_system, virtual_devices
from simdist.distribute.cluster_resolver.cluster_spec import ClusterSpec
from simdist.distribute.cluster_resolver.resolvers import ClusterResolver, format_master_url
from simdist.topology import tpu as tpu_presets
from simdist.topology.model import Topology

__all__ = ["TPUClusterResolver", "TPUSlice", "TPUSystemMetadata", "resolve_slice", "DEFAULT_TPU"]

DEFAULT_TPU = settings.Settings().tpu
_ENV = settings.env_name("tpu")
_PORT = 8470
_LOCAL_NAMES = ("", "local")

DEVICES_PER_CHIP = {"v3": 2, "v4": 1, "v5e": 1, "v5p": 1}
"""TPU devices TensorFlow sees per chip: v3 exposes each TensorCore; v4 and v5p expose a
chip's two TensorCores as one megacore device; v5e chips have one TensorCore."""


@dataclasses.dataclass(frozen=True)
class TPUSlice:
    """A simulated TPU slice: its accelerator type and what TensorFlow sees of it."""

    accelerator_type: str  # as Google writes it: "v4-32", "v5litepod-16"
    generation: str
    chips: int
    devices_per_chip: int
    num_hosts: int

    @property
    def num_cores(self) -> int:
        """TPU devices in the slice (``TPUStrategy`` replicas)."""
        return self.chips * self.devices_per_chip

    @property
    def cores_per_host(self) -> int:
        return self.num_cores // self.num_hosts

    def topology(self) -> Topology:
        """The slice's chips and ICI links (:func:`simdist.topology.tpu_slice`), for costs."""
        return tpu_presets.tpu_slice(self.generation, self.chips)

    def device_names(self, job: str) -> tuple[str, ...]:
        """Every TPU device, host by host: ``/job:<job>/replica:0/task:<h>/device:TPU:<i>``."""
        return tuple(
            f"/job:{job}/replica:0/task:{h}/device:TPU:{i}"
            for h in range(self.num_hosts)
            for i in range(self.cores_per_host)
        )


def _known_names() -> str:
    return (
        "v3-N, v4-N, v5p-N (N counts TensorCores, 2 per chip), v5litepod-N or v5e-N (N counts "
        "chips), e.g. v3-8, v4-8, v4-32, v5litepod-16, v5p-8; or 'local', or 'grpc://host:port'"
    )


def resolve_slice(name: str) -> TPUSlice:
    """The slice an accelerator type names (``"v4-32"`` -> 16 chips, 16 devices, 4 hosts).

    Raises:
        ValueError: not a TPU accelerator type simdist knows (the message lists them).
    """
    try:
        parsed = tpu_presets.parse_tpu_name(name)
    except ValueError as exc:
        raise ValueError(f"Unknown TPU {name!r}: {exc}. Known TPUs: {_known_names()}.") from None
    if parsed is None:
        raise ValueError(f"Unknown TPU {name!r}. Known TPUs: {_known_names()}.")
    generation, chips = parsed
    if chips not in tpu_presets.TPU_SHAPES[generation]:
        counts = sorted(tpu_presets.TPU_SHAPES[generation])
        raise ValueError(
            f"Unknown TPU {name!r}: TPU {generation} has no slice of {chips} chips (chip "
            f"counts: {counts}). Known TPUs: {_known_names()}."
        )
    topology = tpu_presets.tpu_slice(generation, chips)
    return TPUSlice(
        topology.name, generation, chips, DEVICES_PER_CHIP[generation], topology.num_hosts
    )


def _local_slice() -> TPUSlice:
    name = settings.get().tpu
    local = resolve_slice(name)
    if local.num_hosts > 1:
        raise ValueError(
            f"{_ENV}={name!r} has {local.num_hosts} hosts, but a TPU attached to this VM "
            "('local') is one host. Name the slice instead: TPUClusterResolver(tpu="
            f"{local.accelerator_type!r}), or set {_ENV} to a one-host type such as v4-8."
        )
    return local


def _host_address(host: int) -> str:
    return f"10.130.{host // 250}.{host % 250 + 2}:{_PORT}"


TPUSystemMetadata = collections.namedtuple(
    "TPUSystemMetadata", ["num_cores", "num_hosts", "num_of_cores_per_host", "topology", "devices"]
)
TPUSystemMetadata.__doc__ = (
    "``tf.tpu.experimental.TPUSystemMetadata``: cores, hosts, cores per host, topology (None "
    "unless queried) and the TPU device names."
)


class TPUClusterResolver(ClusterResolver):
    """``tf.distribute.cluster_resolver.TPUClusterResolver`` over a simulated slice.

    Args:
        tpu: ``None``/``""`` (``TPU_NAME``, else local), ``"local"``, an accelerator type such as
            ``"v4-8"``, or ``"grpc://host:port"`` (see the module docstring).
        zone, project, credentials, service, discovery_url: accepted and ignored (Cloud
            lookups; nothing is looked up).
        job_name: the job the TPU hosts form (``task_type``), default ``"worker"``.
        coordinator_name: a coordinator job added to ``cluster_spec()`` with
            ``coordinator_address``.
        coordinator_address: that job's address.

    Raises:
        ValueError: an unknown TPU name (the message lists the known ones), or a local TPU
            whose ``SIMDIST_TPU`` type has several hosts.
    """

    def __init__(
        self,
        tpu: str | None = None,
        zone: str | None = None,
        project: str | None = None,
        job_name: str = "worker",
        coordinator_name: str | None = None,
        coordinator_address: str | None = None,
        credentials: Any = "default",
        service: Any = None,
        discovery_url: str | None = None,
    ) -> None:
        del zone, project, credentials, service, discovery_url
        if tpu is not None and not isinstance(tpu, str):
            raise TypeError(f"tpu must be a string or None, got {type(tpu).__name__}.")
        if not tpu:
            tpu = os.environ.get("TPU_NAME") or "local"
        tpu = step_hooks.shape("tpu", tpu)
        self._address: str | None = None
        if tpu == "local":
            self._tpu = "local"
            self._slice = _local_slice()
        elif tpu.startswith("grpc://"):
            self._tpu = tpu
            self._address = tpu[len("grpc://") :]
            self._slice = resolve_slice(settings.get().tpu)
        else:
            self._slice = resolve_slice(tpu)
            self._tpu = self._slice.accelerator_type
        self.task_type = job_name
        self.task_id = 0
        self._coordinator_name = coordinator_name
        self._coordinator_address = coordinator_address

    @staticmethod
    def connect(tpu: str | None = None, zone: str | None = None, project: str | None = None):
        """Resolve, connect and initialize in one call; returns the resolver.

        Raises:
            ValueError: an unknown TPU name.
        """
        resolver = TPUClusterResolver(tpu, zone, project)
        tpu_system.connect(resolver)
        tpu_system.initialize(resolver)
        return resolver

    # --- simdist's view ---------------------------------------------------------------------
    @property
    def simdist_slice(self) -> TPUSlice:
        """The simulated slice this resolver names (simdist's addition)."""
        return self._slice

    @property
    def is_local(self) -> bool:
        return self._tpu == "local"

    def _job(self) -> str:
        return "localhost" if self.is_local else str(self.task_type)

    def _addresses(self) -> list[str]:
        if self._address is not None:
            return [self._address]
        return [_host_address(h) for h in range(self._slice.num_hosts)]

    # --- the ClusterResolver API --------------------------------------------------------------
    def cluster_spec(self) -> ClusterSpec:
        """Empty for a local TPU; else the TPU hosts as the ``worker`` job (plus coordinator)."""
        if self.is_local:
            return ClusterSpec({})
        jobs: dict[str, list[str]] = {str(self.task_type): self._addresses()}
        if self._coordinator_name and self._coordinator_address:
            jobs[self._coordinator_name] = [self._coordinator_address]
        return ClusterSpec(jobs)

    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """``""`` for a local TPU; else ``grpc://`` and the task's (default: host 0's) address.

        Raises:
            ValueError: the task is not in the cluster.
        """
        if self.is_local:
            return ""
        spec = self.cluster_spec()
        if task_type is not None and task_id is not None:
            address = spec.task_address(task_type, task_id)
        else:
            address = spec.task_address(self.task_type, self.task_id)
        return format_master_url(address, "grpc")

    def get_master(self) -> str:
        return self.master()

    def get_job_name(self) -> str | None:
        return self.task_type

    def get_coordination_service_leader(self) -> str:
        return f"/job:{self.get_job_name()}/task:0"

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """``{"TPU": n}``: TPU devices per host. A local TPU counts the host's TPU devices,
        so it reports 0 until the TPU system is initialized, as TF does."""
        del task_type, task_id, config_proto
        if self.is_local:
            return {"TPU": len(virtual_devices.list_logical_devices("TPU"))}
        return {"TPU": self._slice.cores_per_host}

    def get_tpu_system_metadata(self) -> TPUSystemMetadata:
        """The TPU devices this process sees: all of the slice's once its system is
        initialized, none before."""
        system = tpu_system.initialized_system(self)
        if system is None:
            return TPUSystemMetadata(0, 0, 0, None, ())
        s = self._slice
        return TPUSystemMetadata(s.num_cores, s.num_hosts, s.cores_per_host, None, system.devices)

    @property
    def tpu_hardware_feature(self):
        """The initialized system's topology (TF: its hardware feature proto), else None."""
        system = tpu_system.initialized_system(self)
        return None if system is None else system.topology

    @property
    def environment(self) -> str:
        return ""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __repr__(self) -> str:
        return f"<TPUClusterResolver tpu={self._tpu!r} ({self._slice.accelerator_type})>"

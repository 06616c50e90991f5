"""``tf.tpu.experimental.initialize_tpu_system`` and friends: the public calls, validated.

They check their arguments at the boundary and hand the TPU system's process state to
:mod:`simdist.distribute.tpu_system`; ``simdist.tpu`` and ``simdist.config`` re-export them.

Not simulated: ``experimental_connect_to_cluster`` does not make the TPU host's CPU the
default device (TF's ``make_master_device_default``): tensors stay on the local CPU.
"""

from __future__ import annotations

import types

from simdist.distribute import tpu_system
from simdist.distribute.cluster_resolver.cluster_spec import ClusterSpec
from simdist.distribute.cluster_resolver.resolvers import ClusterResolver
from simdist.distribute.cluster_resolver.tpu import TPUClusterResolver, TPUSystemMetadata
from simdist.distribute.tpu_device_assignment import DeviceAssignment, DeviceOrderMode
from simdist.distribute.tpu_system import Topology

__all__ = [
    "experimental_connect_to_cluster",
    "initialize_tpu_system",
    "shutdown_tpu_system",
    "experimental",
]


def _resolver_or_default(cluster_resolver) -> TPUClusterResolver:
    if cluster_resolver is None:
        return TPUClusterResolver("")
    if not isinstance(cluster_resolver, TPUClusterResolver):
        raise TypeError(
            "cluster_resolver must be a tf.distribute.cluster_resolver.TPUClusterResolver, got "
            f"{type(cluster_resolver).__name__}."
        )
    return cluster_resolver


def experimental_connect_to_cluster(
    cluster_spec_or_resolver,
    job_name: str = "localhost",
    task_index: int = 0,
    protocol: str | None = None,
    make_master_device_default: bool = True,
    cluster_device_filters=None,
) -> None:
    """``tf.config.experimental_connect_to_cluster``: make a remote cluster's devices usable.

    A resolver whose ``master()`` is local (``""``/``"local"``) needs no connection (a no-op,
    as TF). A remote ``TPUClusterResolver`` is remembered as connected, which
    ``initialize_tpu_system`` requires.

    Raises:
        ValueError: called inside a ``tf.function``, or not a ClusterSpec/ClusterResolver.
    """
    del job_name, task_index, protocol, make_master_device_default, cluster_device_filters
    tpu_system.require_eager_connect()
    if isinstance(cluster_spec_or_resolver, ClusterSpec):
        return
    if not isinstance(cluster_spec_or_resolver, ClusterResolver):
        raise ValueError(
            "`cluster_spec_or_resolver` must be a `ClusterSpec` or a `ClusterResolver`."
        )
    if cluster_spec_or_resolver.master() in ("", "local"):
        return
    if isinstance(cluster_spec_or_resolver, TPUClusterResolver):
        tpu_system.connect(cluster_spec_or_resolver)


def initialize_tpu_system(cluster_resolver: TPUClusterResolver | None = None) -> Topology:
    """``tf.tpu.experimental.initialize_tpu_system``: bring up the resolver's TPU slice.

    Clears TPU memory (TPU variables made before are lost), makes the slice's devices the
    host's TPU devices, and returns its ``Topology``. ``None`` means
    ``TPUClusterResolver("")``.

    Raises:
        RuntimeError: called inside a ``tf.function``.
        TypeError: not a ``TPUClusterResolver``.
        NotFoundError: a remote TPU that was not connected first.
    """
    tpu_system._require_eager("initialize_tpu_system")
    return tpu_system.initialize(_resolver_or_default(cluster_resolver))


def shutdown_tpu_system(cluster_resolver: TPUClusterResolver | None = None) -> None:
    """``tf.tpu.experimental.shutdown_tpu_system``: release the TPUs (and TPU memory).

    Raises:
        RuntimeError: called inside a ``tf.function``.
        TypeError: not a ``TPUClusterResolver``.
    """
    tpu_system._require_eager("shutdown_tpu_system")
    tpu_system.shutdown(_resolver_or_default(cluster_resolver))


experimental = types.SimpleNamespace(
    initialize_tpu_system=initialize_tpu_system,
    shutdown_tpu_system=shutdown_tpu_system,
    Topology=Topology,
    TPUSystemMetadata=TPUSystemMetadata,
    DeviceAssignment=DeviceAssignment,
    DeviceOrderMode=DeviceOrderMode,
)
"""``tf.tpu.experimental``."""

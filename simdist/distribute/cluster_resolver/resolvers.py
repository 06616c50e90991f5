"""Cluster resolvers: the ClusterResolver base, SimpleClusterResolver, TFConfigClusterResolver.

A cluster resolver tells a multi-worker strategy the cluster (``cluster_spec()``), which
task this process is (``task_type``, ``task_id``) and how many accelerators each worker
has (``num_accelerators()``, counted from simdist's virtual devices).
``TFConfigClusterResolver`` reads ``TF_CONFIG`` each time it is asked (this thread's
``use_tf_config`` override first), so a changed ``TF_CONFIG`` is seen at once, as in TF.
"""

from __future__ import annotations

import abc
import collections
from typing import Any

from simdist.distribute import virtual_devices
from simdist.distribute.cluster_resolver.cluster_spec import ClusterSpec
from simdist.distribute.cluster_resolver.tf_config import (
    TFConfig,
    load_tf_config,
    validate_tf_config,
)

__all__ = [
    "ClusterResolver",
    "SimpleClusterResolver",
    "TFConfigClusterResolver",
    "format_master_url",
    "local_accelerators",
]


def format_master_url(master: str, rpc_layer: str | None = None) -> str:
    """``"rpc_layer://master"``, or ``master`` when there is no rpc layer."""
    return f"{rpc_layer}://{master}" if rpc_layer else master


def local_accelerators() -> dict[str, int]:
    """This (virtual) host's accelerator counts, e.g. ``{"GPU": 4}``; CPUs are not listed
    (a ``defaultdict(int)``, as TF's, so an absent kind reads 0)."""
    counts: dict[str, int] = collections.defaultdict(int)
    for kind in ("GPU", "TPU"):
        n = len(virtual_devices.list_logical_devices(kind))
        if n:
            counts[kind] = n
    return counts


class ClusterResolver(abc.ABC):
    """The interface every cluster resolver implements (``tf.distribute.cluster_resolver``).

    Subclasses implement ``cluster_spec()`` and ``master()``; ``task_type``, ``task_id``
    and ``rpc_layer`` default to the ``_task_type``, ``_task_id`` and ``_rpc_layer``
    attributes.
    """

    @abc.abstractmethod
    def cluster_spec(self) -> ClusterSpec:
        """The cluster as it is now."""

    @abc.abstractmethod
    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """The address of the session master (TF1 only; kept for compatibility)."""

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """Accelerators per worker, e.g. ``{"GPU": 2}``: the virtual host's GPUs and TPUs.

        Every simulated worker has the same virtual devices, so ``task_type`` and
        ``task_id`` do not change the answer.
        """
        del task_type, task_id, config_proto
        return local_accelerators()

    @property
    def environment(self) -> str:
        """``""``: simdist never runs in Google's internal environment."""
        return ""

    @property
    def task_type(self) -> str | None:
        """This process's job name (``"worker"``, ``"chief"``...), or None when not applicable."""
        return getattr(self, "_task_type", None)

    @task_type.setter
    def task_type(self, task_type: str | None) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> int | None:
        """This process's index within its job, or None when not applicable."""
        return getattr(self, "_task_id", None)

    @task_id.setter
    def task_id(self, task_id: int | None) -> None:
        self._task_id = task_id

    @property
    def rpc_layer(self) -> str | None:
        """The protocol tasks talk over (``"grpc"``), or None."""
        return getattr(self, "_rpc_layer", None)

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: str | None) -> None:
        self._rpc_layer = rpc_layer


class SimpleClusterResolver(ClusterResolver):
    """A resolver that returns what it was given.

    Args:
        cluster_spec: a ``ClusterSpec``.
        master: the session master address.
        task_type: this process's job name.
        task_id: this process's index in its job.
        environment: returned by ``environment``.
        num_accelerators: returned by ``num_accelerators()`` (``{}`` when None).
        rpc_layer: the protocol, e.g. ``"grpc"``.

    Raises:
        TypeError: ``cluster_spec`` is not a ``ClusterSpec`` or ``master`` not a string.
    """

    def __init__(
        self,
        cluster_spec: ClusterSpec,
        master: str = "",
        task_type: str | None = None,
        task_id: int | None = None,
        environment: str = "",
        num_accelerators: dict[str, int] | None = None,
        rpc_layer: str | None = None,
    ) -> None:
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError(
                "cluster_spec must be a `tf.train.ClusterSpec`; wrap the dict: "
                "tf.train.ClusterSpec({'worker': [...]})."
            )
        if not isinstance(master, str):
            raise TypeError(f"master must be a string, got {type(master).__name__}.")
        self._cluster_spec = cluster_spec
        self._master = master
        self._task_type = task_type
        self._task_id = task_id
        self._environment = environment
        self._num_accelerators = num_accelerators
        self._rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        """The ``ClusterSpec`` given to the constructor."""
        return self._cluster_spec

    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """The given task's address if both are given, else the constructor's ``master``."""
        if task_type is not None and task_id is not None:
            address = self._cluster_spec.task_address(task_type, task_id)
        else:
            address = self._master
        return format_master_url(address, rpc_layer or self._rpc_layer)

    @property
    def environment(self) -> str:
        """The ``environment`` given to the constructor."""
        return self._environment

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """The ``num_accelerators`` given to the constructor (``{}`` when none was)."""
        del task_type, task_id, config_proto
        return {} if self._num_accelerators is None else dict(self._num_accelerators)


class TFConfigClusterResolver(ClusterResolver):
    """A resolver that reads the ``TF_CONFIG`` environment variable when asked.

    Args:
        task_type: overrides ``TF_CONFIG``'s ``task.type``.
        task_id: overrides ``TF_CONFIG``'s ``task.index``.
        rpc_layer: overrides ``TF_CONFIG``'s ``rpc_layer``.
        environment: overrides ``TF_CONFIG``'s ``environment``.

    ``cluster_spec()`` validates ``TF_CONFIG`` (malformed JSON, misspelt keys, unknown task
    types, duplicates, several chiefs...) and raises ``ValueError`` saying how to fix it; as
    in TF it accepts placeholder addresses (``"host1:port"``) and ignores keys it does not
    read (``"job"``). ``validate(strategy)`` adds a strategy's own rules, checks the task,
    and checks every address, as starting the task's server does.
    """

    def __init__(
        self,
        task_type: str | None = None,
        task_id: int | None = None,
        rpc_layer: str | None = None,
        environment: str | None = None,
    ) -> None:
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    def _config(self) -> TFConfig:
        return validate_tf_config(
            load_tf_config(), strategy=None, require_task=False, check_addresses=False
        )

    def validate(self, strategy: str | None = "multi_worker") -> TFConfig:
        """Validate ``TF_CONFIG`` with this resolver's overrides, for ``strategy``.

        Returns:
            The ``TFConfig`` the strategy should use (overrides applied).

        Raises:
            ValueError: ``TF_CONFIG`` is malformed, breaks the strategy's rules, or a
                non-empty cluster comes without a task.
        """
        raw = load_tf_config()
        task = dict(raw.get("task") or {})
        if self._task_type is not None:
            task["type"] = self._task_type
        if self._task_id is not None:
            task["index"] = self._task_id
        if task:
            raw["task"] = task
        return validate_tf_config(raw, strategy=strategy)

    @property
    def task_type(self) -> str | None:
        """The override, else ``TF_CONFIG``'s ``task.type``, else None."""
        if self._task_type is not None:
            return str(self._task_type)
        return self._config().task_type

    @task_type.setter
    def task_type(self, task_type: str | None) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> int | None:
        """The override, else ``TF_CONFIG``'s ``task.index``, else None."""
        if self._task_id is not None:
            return int(self._task_id)
        return self._config().task_id

    @task_id.setter
    def task_id(self, task_id: int | None) -> None:
        self._task_id = task_id

    @property
    def rpc_layer(self) -> str | None:
        """The override, else ``TF_CONFIG``'s ``rpc_layer``, else None."""
        if self._rpc_layer is not None:
            return self._rpc_layer
        return self._config().rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: str | None) -> None:
        self._rpc_layer = rpc_layer

    @property
    def environment(self) -> str | None:
        """The override, else ``TF_CONFIG``'s ``environment``, else None."""
        if self._environment is not None:
            return self._environment
        return self._config().environment

    def cluster_spec(self) -> ClusterSpec:
        """The cluster in ``TF_CONFIG`` (empty when it has none).

        Raises:
            ValueError: ``TF_CONFIG`` is malformed; the message says how to fix it.
        """
        return self._config().cluster

    def num_accelerators(
        self, task_type: str | None = None, task_id: int | None = None, config_proto: Any = None
    ) -> dict[str, int]:
        """The virtual host's accelerators, e.g. ``{"GPU": 4}`` (``{}`` with none)."""
        del task_type, task_id, config_proto
        return local_accelerators()

    def master(
        self, task_type: str | None = None, task_id: int | None = None, rpc_layer: str | None = None
    ) -> str:
        """``session_master`` if set; ``""`` for a one-task cluster; else this task's URL.

        Raises:
            ValueError: the task is not in the cluster.
        """
        config = self._config()
        if config.session_master is not None:
            return config.session_master
        spec = config.cluster
        if not spec.jobs or (len(spec.jobs) == 1 and spec.num_tasks(spec.jobs[0]) == 1):
            return ""
        task_type = task_type if task_type is not None else self.task_type
        task_id = task_id if task_id is not None else self.task_id
        rpc_layer = rpc_layer if rpc_layer is not None else self.rpc_layer
        return format_master_url(spec.task_address(task_type, task_id), rpc_layer)

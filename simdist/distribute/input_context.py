"""What input functions are told: ``InputContext``, ``ValueContext`` and ``InputOptions``.

``strategy.distribute_datasets_from_function(dataset_fn)`` calls ``dataset_fn`` with an
:class:`InputContext` (which input pipeline this is, how many replicas train in sync);
``strategy.experimental_distribute_values_from_function(value_fn)`` calls ``value_fn`` with
a :class:`ValueContext` (which replica the value is for). :class:`InputOptions` carries the
``options`` argument of both dataset methods, validated as TF validates it.

>>> ctx = InputContext(num_input_pipelines=2, input_pipeline_id=1, num_replicas_in_sync=4)
>>> ctx.get_per_replica_batch_size(64)
16
>>> ctx
tf.distribute.InputContext(input pipeline id 1, total: 2)
"""

from __future__ import annotations

import collections
import enum
import numbers

__all__ = [
    "InputContext",
    "InputOptions",
    "InputReplicationMode",
    "ValueContext",
    "validate_input_options",
]


def _check_count(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"`{name}` must be an int, got {value!r}.")
    if value < minimum:
        raise ValueError(f"`{name}` must be >= {minimum}, got {value}.")
    return int(value)


class InputContext:
    """Information given to a dataset function: ``tf.distribute.InputContext``.

    Args:
        num_input_pipelines: how many input pipelines (workers) the cluster has.
        input_pipeline_id: this pipeline's index, in ``[0, num_input_pipelines)``.
        num_replicas_in_sync: replicas training in sync, across all pipelines.

    Raises:
        TypeError: an argument is not an int.
        ValueError: a count is below 1, or the id is out of range.
    """

    __slots__ = ("_num_input_pipelines", "_input_pipeline_id", "_num_replicas_in_sync")

    def __init__(
        self,
        num_input_pipelines: int = 1,
        input_pipeline_id: int = 0,
        num_replicas_in_sync: int = 1,
    ) -> None:
        self._num_input_pipelines = _check_count(num_input_pipelines, "num_input_pipelines", 1)
        self._input_pipeline_id = _check_count(input_pipeline_id, "input_pipeline_id", 0)
        self._num_replicas_in_sync = _check_count(num_replicas_in_sync, "num_replicas_in_sync", 1)
        if input_pipeline_id >= num_input_pipelines:
            raise ValueError(
                f"`input_pipeline_id` {input_pipeline_id} must be smaller than "
                f"`num_input_pipelines` {num_input_pipelines}."
            )

    @property
    def num_replicas_in_sync(self) -> int:
        """Replicas training in sync, across all input pipelines."""
        return self._num_replicas_in_sync

    @property
    def input_pipeline_id(self) -> int:
        """This input pipeline's index."""
        return self._input_pipeline_id

    @property
    def num_input_pipelines(self) -> int:
        """How many input pipelines there are."""
        return self._num_input_pipelines

    def get_per_replica_batch_size(self, global_batch_size: int) -> int:
        """``global_batch_size`` split evenly over the replicas in sync.

        Raises:
            ValueError: ``global_batch_size`` is not divisible by ``num_replicas_in_sync``.
        """
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(
                f"The `global_batch_size` {global_batch_size!r} is not divisible by "
                f"`num_replicas_in_sync` {self._num_replicas_in_sync!r} "
            )
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self) -> str:
        return (
            f"tf.distribute.InputContext(input pipeline id {self._input_pipeline_id}, "
            f"total: {self._num_input_pipelines})"
        )

    __repr__ = __str__


class ValueContext:
    """Information given to a value function: ``tf.distribute.experimental.ValueContext``.

    Args:
        replica_id_in_sync_group: the replica the value is for, in ``[0, num_replicas_in_sync)``.
        num_replicas_in_sync: replicas training in sync.

    Raises:
        TypeError: an argument is not an int.
        ValueError: the count is below 1, or the id is out of range.
    """

    __slots__ = ("_replica_id_in_sync_group", "_num_replicas_in_sync")

    def __init__(self, replica_id_in_sync_group: int = 0, num_replicas_in_sync: int = 1) -> None:
        self._replica_id_in_sync_group = _check_count(
            replica_id_in_sync_group, "replica_id_in_sync_group", 0
        )
        self._num_replicas_in_sync = _check_count(num_replicas_in_sync, "num_replicas_in_sync", 1)
        if replica_id_in_sync_group >= num_replicas_in_sync:
            raise ValueError(
                f"`replica_id_in_sync_group` {replica_id_in_sync_group} must be smaller than "
                f"`num_replicas_in_sync` {num_replicas_in_sync}."
            )

    @property
    def num_replicas_in_sync(self) -> int:
        """Replicas training in sync."""
        return self._num_replicas_in_sync

    @property
    def replica_id_in_sync_group(self) -> int:
        """The replica this value is for."""
        return self._replica_id_in_sync_group

    def __str__(self) -> str:
        # TF's text, two spaces after the comma included.
        return (
            f"tf.distribute.ValueContext(replica id {self._replica_id_in_sync_group},  "
            f"total replicas in sync: {self._num_replicas_in_sync})"
        )

    __repr__ = __str__


class InputReplicationMode(enum.Enum):
    """How input is replicated: one pipeline per worker (default) or one per replica."""

    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


_InputOptionsBase = collections.namedtuple(
    "InputOptions",
    [
        "experimental_fetch_to_device",
        "experimental_replication_mode",
        "experimental_place_dataset_on_device",
        "experimental_per_replica_buffer_size",
    ],
)


class InputOptions(_InputOptionsBase):
    """Options of ``experimental_distribute_dataset`` / ``distribute_datasets_from_function``.

    ``tf.distribute.InputOptions``: a named tuple.

    * ``experimental_fetch_to_device`` (default True): put each replica's values on its
      device; False leaves them on the host CPU of that device.
    * ``experimental_replication_mode`` (default ``PER_WORKER``): ``PER_REPLICA`` makes one
      input pipeline per replica (``distribute_datasets_from_function`` only).
    * ``experimental_place_dataset_on_device`` (default False): only with ``PER_REPLICA``
      and ``experimental_fetch_to_device=False``; simdist's values then live on the device.
    * ``experimental_per_replica_buffer_size`` (default 1): prefetch depth. simdist produces
      values on demand (no background threads), so it changes no value; it must be >= 0.
    """

    __slots__ = ()

    def __new__(
        cls,
        experimental_fetch_to_device: bool | None = None,
        experimental_replication_mode: InputReplicationMode = InputReplicationMode.PER_WORKER,
        experimental_place_dataset_on_device: bool = False,
        experimental_per_replica_buffer_size: int = 1,
    ) -> InputOptions:
        if experimental_fetch_to_device is None:
            experimental_fetch_to_device = True
        return super().__new__(
            cls,
            experimental_fetch_to_device,
            experimental_replication_mode,
            experimental_place_dataset_on_device,
            experimental_per_replica_buffer_size,
        )


def validate_input_options(options: InputOptions | None, from_function: bool) -> InputOptions:
    """Check ``options`` as TF does and return them (defaults for ``None``).

    Args:
        options: what the user passed.
        from_function: True for ``distribute_datasets_from_function``, False for
            ``experimental_distribute_dataset``.

    Raises:
        TypeError: ``options`` is not an ``InputOptions``, or a field has the wrong type.
        ValueError: the fields contradict each other (TF's messages).
        NotImplementedError: ``PER_REPLICA`` with ``experimental_distribute_dataset``.
    """
    if options is None:
        return InputOptions()
    if not isinstance(options, InputOptions):
        raise TypeError(
            f"`options` must be a tf.distribute.InputOptions, got {type(options).__name__}."
        )
    if not isinstance(options.experimental_replication_mode, InputReplicationMode):
        raise TypeError(
            "`experimental_replication_mode` must be a tf.distribute.InputReplicationMode, "
            f"got {options.experimental_replication_mode!r}."
        )
    for name in ("experimental_fetch_to_device", "experimental_place_dataset_on_device"):
        if not isinstance(getattr(options, name), bool):
            raise TypeError(f"`{name}` must be a bool, got {getattr(options, name)!r}.")
    size = options.experimental_per_replica_buffer_size
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ValueError(
            f"`experimental_per_replica_buffer_size` must be an int >= 0, got {size!r}."
        )
    per_replica = options.experimental_replication_mode == InputReplicationMode.PER_REPLICA
    if per_replica and not from_function:
        raise NotImplementedError(
            "InputReplicationMode.PER_REPLICA is only supported in "
            "`experimental_distribute_datasets_from_function`."
        )
    if not per_replica and options.experimental_place_dataset_on_device:
        raise ValueError(
            "When `experimental_place_dataset_on_device` is set for dataset placement, you "
            "must also specify `PER_REPLICA` for the replication mode"
        )
    if (
        per_replica
        and options.experimental_fetch_to_device
        and options.experimental_place_dataset_on_device
    ):
        raise ValueError(
            "`experimental_place_dataset_on_device` can not be set to True when "
            "experimental_fetch_to_device is True and replication mode is set to "
            "`PER_REPLICA`"
        )
    return options

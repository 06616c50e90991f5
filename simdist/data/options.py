"""``tf.data.Options`` and its sub-options (``DistributeOptions``...), with TF's merge rules.

Options objects are typed bags of settings. As in TF:

* each option is a typed property: assigning a value of another type raises ``TypeError``,
  assigning an attribute that does not exist raises ``AttributeError``;
* sub-option groups (``experimental_distribute``...) are created on first access;
* ``Dataset.options()`` returns a *frozen* merge of the options set anywhere upstream:
  mutating it raises ``ValueError`` (use ``with_options``);
* merging visits the options in order; an option that is at its default in a later object
  leaves the earlier value alone; a non-default later value wins.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any

__all__ = [
    "AUTOTUNE",
    "AutoShardPolicy",
    "AutotuneOptions",
    "DistributeOptions",
    "ExternalStatePolicy",
    "OptimizationOptions",
    "Options",
    "ThreadingOptions",
    "merge_options",
]

AUTOTUNE = -1


class AutoShardPolicy(enum.IntEnum):
    """How a multi-worker strategy shards a dataset across workers (TF's numbering)."""

    OFF = -1
    AUTO = 0
    FILE = 1
    DATA = 2
    HINT = 3


class ExternalStatePolicy(enum.Enum):
    """What to do with external state when a dataset is serialized (TF's numbering)."""

    WARN = 0
    IGNORE = 1
    FAIL = 2


class _Option:
    """A typed property of an options class; ``factory`` gives the default value."""

    def __init__(self, kind: type | tuple[type, ...], factory: Callable[[], Any], doc: str):
        self.kind = kind
        self.factory = factory
        self.__doc__ = doc
        self.name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj, owner=None):
        if obj is None:
            return self
        values = obj._values
        if self.name not in values:
            value = self.factory()
            if isinstance(value, OptionsBase) and not obj._mutable:
                value._freeze()  # a sub-group first reached through frozen options
            values[self.name] = value
        return values[self.name]

    def __set__(self, obj, value) -> None:
        obj._check_mutable()
        bool_for_number = isinstance(value, bool) and bool not in _kinds(self)
        if not isinstance(value, self.kind) or bool_for_number:
            raise TypeError(
                f'Property "{self.name}" must be of type {_kind_name(self.kind)}, got: {value!r} '
                f"(type: {type(value).__name__})."
            )
        obj._values[self.name] = value


def _kinds(option: _Option) -> tuple[type, ...]:
    return option.kind if isinstance(option.kind, tuple) else (option.kind,)


def _kind_name(kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


class OptionsBase:
    """Common behaviour: typed attributes only, value equality, freezing, merging."""

    def __init__(self) -> None:
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_mutable", True)

    @classmethod
    def _option_names(cls) -> tuple[str, ...]:
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            names.extend(k for k, v in vars(klass).items() if isinstance(v, (_Option, property)))
        return tuple(names)

    def _check_mutable(self) -> None:
        if not self._mutable:
            raise ValueError(
                "Mutating the tf.data.Options returned by tf.data.Dataset.options() has no "
                "effect. Build a tf.data.Options() and apply it with "
                "dataset.with_options(options)."
            )

    def __setattr__(self, name: str, value) -> None:
        if name not in self._option_names():
            raise AttributeError(
                f"Cannot set the property {name} on {type(self).__name__}: it has no such "
                f"option. Known options: {', '.join(sorted(self._option_names()))}."
            )
        object.__setattr__(self, name, value)

    def _freeze(self) -> None:
        object.__setattr__(self, "_mutable", False)
        for value in self._values.values():
            if isinstance(value, OptionsBase):
                value._freeze()

    def __eq__(self, other) -> bool:
        if not isinstance(other, type(self)):
            return NotImplemented
        names = set(self._values) | set(other._values)
        return all(getattr(self, n) == getattr(other, n) for n in sorted(names))

    def __ne__(self, other) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = None  # mutable, compared by value

    def __repr__(self) -> str:
        shown = ", ".join(f"{k}={self._values[k]!r}" for k in sorted(self._values))
        return f"{type(self).__name__}({shown})"


def merge_options(*options_list: OptionsBase) -> OptionsBase:
    """Merge options objects of one type; a later non-default value wins.

    Raises:
        ValueError: no options were given.
        TypeError: the objects are of different types.
    """
    if not options_list:
        raise ValueError("merge_options needs at least one options object.")
    kind = type(options_list[0])
    for options in options_list:
        if type(options) is not kind or not isinstance(options, OptionsBase):
            raise TypeError(
                f"Could not merge incompatible options of type {type(options).__name__} and "
                f"{kind.__name__}."
            )
    default = kind()
    result = kind()
    for options in options_list:
        for name in sorted(options._values):
            current, new = getattr(result, name), getattr(options, name)
            base = getattr(default, name)
            if new == base:
                continue
            if isinstance(new, OptionsBase):  # merged recursively, never shared
                result._values[name] = merge_options(current, new)
            else:
                result._values[name] = new
    return result


class DistributeOptions(OptionsBase):
    """How a dataset is distributed: ``tf.data.experimental.DistributeOptions``."""

    auto_shard_policy = _Option(
        AutoShardPolicy,
        lambda: AutoShardPolicy.AUTO,
        "How to shard the dataset across workers; AUTO by default.",
    )
    num_devices = _Option(
        (int, type(None)), lambda: None, "Number of devices attached to this input pipeline."
    )


class OptimizationOptions(OptionsBase):
    """Graph rewrites TF may apply; simdist records them and applies none (values are equal)."""

    apply_default_optimizations = _Option((bool, type(None)), lambda: None, "Default rewrites.")
    map_and_batch_fusion = _Option((bool, type(None)), lambda: None, "Fuse map and batch.")
    map_parallelization = _Option((bool, type(None)), lambda: None, "Parallelize maps.")
    noop_elimination = _Option((bool, type(None)), lambda: None, "Remove no-op stages.")
    parallel_batch = _Option((bool, type(None)), lambda: None, "Batch in parallel.")
    shuffle_and_repeat_fusion = _Option((bool, type(None)), lambda: None, "Fuse shuffle+repeat.")
    filter_parallelization = _Option((bool, type(None)), lambda: None, "Parallelize filters.")
    inject_prefetch = _Option((bool, type(None)), lambda: None, "Add a final prefetch.")


class ThreadingOptions(OptionsBase):
    """Threads TF's runtime would use; recorded only (simdist's pipeline is sequential)."""

    max_intra_op_parallelism = _Option((int, type(None)), lambda: None, "Intra-op threads.")
    private_threadpool_size = _Option((int, type(None)), lambda: None, "Private pool size.")


class AutotuneOptions(OptionsBase):
    """TF's autotuning settings; recorded only."""

    enabled = _Option((bool, type(None)), lambda: None, "Whether autotuning is on.")
    cpu_budget = _Option((int, type(None)), lambda: None, "CPU budget for autotuning.")
    ram_budget = _Option((int, type(None)), lambda: None, "RAM budget for autotuning.")


class Options(OptionsBase):
    """Options of a dataset: ``tf.data.Options``.

    >>> import simdist as tf
    >>> options = tf.data.Options()
    >>> options.experimental_distribute.auto_shard_policy = (
    ...     tf.data.experimental.AutoShardPolicy.DATA)
    >>> ds = tf.data.Dataset.range(4).with_options(options)
    >>> ds.options().experimental_distribute.auto_shard_policy
    <AutoShardPolicy.DATA: 2>
    """

    deterministic = _Option(
        (bool, type(None)), lambda: None, "Produce outputs in a deterministic order (default)."
    )
    experimental_distribute = _Option(DistributeOptions, DistributeOptions, "Distribution.")
    experimental_optimization = _Option(OptimizationOptions, OptimizationOptions, "Rewrites.")
    threading = _Option(ThreadingOptions, ThreadingOptions, "Threading.")
    autotune = _Option(AutotuneOptions, AutotuneOptions, "Autotuning.")
    experimental_slack = _Option((bool, type(None)), lambda: None, "Slack in the last prefetch.")
    experimental_external_state_policy = _Option(
        (ExternalStatePolicy, type(None)), lambda: None, "External state when serializing."
    )
    experimental_symbolic_checkpoint = _Option(
        (bool, type(None)), lambda: None, "Symbolic checkpointing."
    )
    experimental_warm_start = _Option((bool, type(None)), lambda: None, "Warm start.")

    @property
    def experimental_deterministic(self):
        """Deprecated alias of ``deterministic``."""
        return self.deterministic

    @experimental_deterministic.setter
    def experimental_deterministic(self, value) -> None:
        self.deterministic = value

    @property
    def experimental_threading(self) -> ThreadingOptions:
        """Deprecated alias of ``threading``."""
        return self.threading

    @experimental_threading.setter
    def experimental_threading(self, value: ThreadingOptions) -> None:
        self.threading = value

    def merge(self, options: Options) -> Options:
        """The merge of ``self`` and ``options``; ``options`` wins where both are set."""
        return merge_options(self, options)

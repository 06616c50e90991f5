"""``tf.compat.v1``: the pieces of TF1's API that TF2 distributed-training code still uses.

* ``ConfigProto`` (with ``GPUOptions``): session settings the parameter-server tutorial passes
  to ``tf.distribute.Server`` (``inter_op_parallelism_threads``...). simdist keeps the values
  so they read back; the simulated tasks run on simdist's own threads, so they change no
  result.
* ``logging``: ``set_verbosity`` and the levels, on Python's ``logging`` (logger
  ``"simdist"``).
* ``executing_eagerly`` / ``enable_eager_execution``: simdist is always eager outside
  ``tf.function``; ``disable_eager_execution`` (graph mode) is refused.
"""

from __future__ import annotations

import dataclasses
import logging as _logging
import types

from simdist.core.function import executing_eagerly as executing_eagerly

__all__ = [
    "ConfigProto",
    "GPUOptions",
    "logging",
    "executing_eagerly",
    "enable_eager_execution",
    "disable_eager_execution",
    "enable_v2_behavior",
]


@dataclasses.dataclass
class GPUOptions:
    """``tf.compat.v1.GPUOptions``: the fields TF2 code sets."""

    allow_growth: bool = False
    per_process_gpu_memory_fraction: float = 0.0
    visible_device_list: str = ""


@dataclasses.dataclass
class ConfigProto:
    """``tf.compat.v1.ConfigProto``: session settings (kept, read back; see the module doc).

    Raises:
        TypeError: an unknown field (a protocol buffer refuses one too).
    """

    inter_op_parallelism_threads: int = 0
    intra_op_parallelism_threads: int = 0
    allow_soft_placement: bool = False
    log_device_placement: bool = False
    device_count: dict = dataclasses.field(default_factory=dict)
    gpu_options: GPUOptions = dataclasses.field(default_factory=GPUOptions)
    isolate_session_state: bool = False
    device_filters: list = dataclasses.field(default_factory=list)

    def __setattr__(self, name: str, value) -> None:
        if name not in self.__dataclass_fields__:
            raise AttributeError(
                f"Assignment not allowed (no field {name!r} in protocol message ConfigProto); "
                f"its fields are {sorted(self.__dataclass_fields__)}."
            )
        super().__setattr__(name, value)


def enable_eager_execution(config=None, device_policy=None, execution_mode=None) -> None:
    """A no-op: simdist always executes eagerly (as TF2 does by default)."""


enable_v2_behavior = enable_eager_execution


def disable_eager_execution() -> None:
    """Refused: simdist has no TF1 graph mode.

    Raises:
        NotImplementedError: always, saying what to use instead.
    """
    raise NotImplementedError(
        "simdist has no graph mode: tf.compat.v1.disable_eager_execution() cannot be honoured. "
        "Use tf.function for code that TF runs as a graph."
    )


def _set_verbosity(level: int) -> None:
    _logging.getLogger("simdist").setLevel(level)


def _get_verbosity() -> int:
    return _logging.getLogger("simdist").getEffectiveLevel()


logging = types.SimpleNamespace(
    DEBUG=_logging.DEBUG,
    INFO=_logging.INFO,
    WARN=_logging.WARNING,
    WARNING=_logging.WARNING,
    ERROR=_logging.ERROR,
    FATAL=_logging.FATAL,
    set_verbosity=_set_verbosity,
    get_verbosity=_get_verbosity,
    info=_logging.getLogger("simdist").info,
    warning=_logging.getLogger("simdist").warning,
    error=_logging.getLogger("simdist").error,
)
"""``tf.compat.v1.logging`` on Python's logging (logger ``"simdist"``)."""

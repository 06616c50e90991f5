"""Device names as TF writes them, their canonical form, and ``device(...)`` scopes.

Every spelling TF accepts resolves to one canonical name::

    >>> canonical_name("GPU:1")
    '/job:localhost/replica:0/task:0/device:GPU:1'
    >>> canonical_name("/gpu:1")
    '/job:localhost/replica:0/task:0/device:GPU:1'
    >>> canonical_name("/job:worker/task:2/device:CPU:0")
    '/job:worker/replica:0/task:2/device:CPU:0'
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import re
from collections.abc import Iterator

from simdist.core.context import state

__all__ = ["DeviceSpec", "canonical_name", "current_device", "device", "DEFAULT_DEVICE"]

_DEVICE_TYPES = {"CPU", "GPU", "TPU", "TPU_SYSTEM"}
_FIELD = re.compile(r"^(job|replica|task|device):(.+)$", re.IGNORECASE)
_SHORT = re.compile(r"^(cpu|gpu|tpu|tpu_system)(?::(\d+|\*))?$", re.IGNORECASE)


@dataclasses.dataclass(frozen=True)
class DeviceSpec:
    """The parts of a device name; any part may be unknown (``None``)."""

    job: str | None = None
    replica: int | None = None
    task: int | None = None
    device_type: str | None = None
    device_index: int | None = None

    @classmethod
    def from_string(cls, name: str) -> DeviceSpec:
        """Parse any device spelling TF accepts.

        Raises:
            ValueError: the string is not a device name.
        """
        if not isinstance(name, str):
            raise TypeError(f"A device name must be a string, got {type(name).__name__}.")
        fields: dict = {}
        for part in (p for p in name.strip().split("/") if p):
            short = _SHORT.match(part)
            if short:
                fields["device_type"] = short.group(1).upper()
                if short.group(2) not in (None, "*"):
                    fields["device_index"] = int(short.group(2))
                continue
            m = _FIELD.match(part)
            if not m:
                raise ValueError(
                    f"Cannot parse device name {name!r}: unknown part {part!r}. Use a form such "
                    "as 'GPU:0', '/gpu:1' or '/job:worker/replica:0/task:1/device:GPU:3'."
                )
            key, value = m.group(1).lower(), m.group(2)
            if key == "job":
                fields["job"] = value
            elif key in ("replica", "task"):
                if not value.isdigit():
                    raise ValueError(f"Cannot parse device name {name!r}: {key} must be a number.")
                fields[key] = int(value)
            else:
                short = _SHORT.match(value)
                if not short:
                    raise ValueError(
                        f"Cannot parse device name {name!r}: device type must be one of "
                        f"{sorted(_DEVICE_TYPES)}, got {value!r}."
                    )
                fields["device_type"] = short.group(1).upper()
                if short.group(2) not in (None, "*"):
                    fields["device_index"] = int(short.group(2))
        return cls(**fields)

    def make_merged_spec(self, outer: DeviceSpec) -> DeviceSpec:
        """Fill this spec's unknown parts from ``outer`` (an enclosing device scope)."""
        merged = {
            f.name: getattr(self, f.name)
            if getattr(self, f.name) is not None
            else getattr(outer, f.name)
            for f in dataclasses.fields(self)
        }
        return DeviceSpec(**merged)

    def to_string(self) -> str:
        job = self.job if self.job is not None else "localhost"
        replica = self.replica if self.replica is not None else 0
        task = self.task if self.task is not None else 0
        dtype = self.device_type if self.device_type is not None else "CPU"
        index = self.device_index if self.device_index is not None else 0
        return f"/job:{job}/replica:{replica}/task:{task}/device:{dtype}:{index}"


DEFAULT_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"


def canonical_name(name: str, outer: str | None = None) -> str:
    """The full canonical form of ``name``, unknown parts taken from ``outer`` or defaults."""
    if isinstance(name, str) and (outer is None or isinstance(outer, str)):
        return _canonical_name(name, outer)  # a pure function of two strings: cached
    return _canonical_name.__wrapped__(name, outer)  # not a string: the parser says what


@functools.lru_cache(maxsize=4096)
def _canonical_name(name: str, outer: str | None) -> str:
    spec = DeviceSpec.from_string(name)
    if outer is not None:
        spec = spec.make_merged_spec(DeviceSpec.from_string(outer))
    return spec.to_string()


def current_device() -> str:
    """The canonical device new tensors are placed on in this thread."""
    return state.device_stack[-1] if state.device_stack else DEFAULT_DEVICE


@contextlib.contextmanager
def device(name: str | None) -> Iterator[None]:
    """Place ops created in this block on ``name`` (``tf.device``); ``None`` keeps the outer."""
    if name is None:
        yield
        return
    outer = state.device_stack[-1] if state.device_stack else None
    state.device_stack.append(canonical_name(name, outer))
    try:
        yield
    finally:
        state.device_stack.pop()

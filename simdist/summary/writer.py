"""``tf.summary`` writers, the default writer, the default step and the summary ops.

As in TensorFlow 2, the default writer and the default step belong to the calling thread:
``writer.as_default()`` (or ``set_as_default``) makes a writer the one that ``scalar``,
``histogram``, ``text`` and ``write`` use; ``tf.summary.experimental.set_step`` (or
``as_default(step=...)``) gives the step for calls that pass none. Each op returns True
when it wrote, False when there is no default writer (or recording is off) — then it does
nothing, as TF does.

What is written is what TensorBoard's own summary ops write under TF 2: a float32 scalar
tensor with plugin ``scalars``; a ``[k, 3]`` float64 tensor of ``[left, right, count]``
buckets with plugin ``histograms`` (TensorBoard's bucketing: 30 equal buckets from min to
max, the last one closed; a constant input puts all in the first bucket of zero width); a
string tensor with plugin ``text``.
"""

from __future__ import annotations

import contextlib
import threading
import time

import numpy as np

from simdist.core.convert import convert_to_tensor
from simdist.summary import event_file

__all__ = [
    "SummaryWriter",
    "create_file_writer",
    "create_noop_writer",
    "scalar",
    "histogram",
    "text",
    "write",
    "flush",
    "record_if",
    "should_record_summaries",
    "set_step",
    "get_step",
]

_DATA_CLASS_SCALAR, _DATA_CLASS_TENSOR = 1, 2
_DEFAULT_BUCKETS = 30


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.writer = None  # the default SummaryWriter of this thread
        self.step = None  # the default step (int, tensor or variable)
        self.record = True  # record_if's condition (bool or zero-argument callable)


_STATE = _ThreadState()


def _value(x):
    return np.asarray(convert_to_tensor(x)._value) if not isinstance(x, np.ndarray) else x


class SummaryWriter:
    """Writes summaries to one event file (:func:`create_file_writer`), or nothing (noop)."""

    def __init__(self, logdir: str | None, max_queue: int = 10, filename_suffix=".v2") -> None:
        self.logdir = logdir
        self._file = (
            None
            if logdir is None
            else event_file.EventFileWriter(logdir, max_queue, filename_suffix)
        )

    @property
    def path(self) -> str | None:
        """The event file's path (``None`` for a noop writer)."""
        return None if self._file is None else self._file.path

    def set_as_default(self, step=None) -> None:
        """Make this the default writer of the calling thread (and ``step`` its step)."""
        _STATE.writer = self
        if step is not None:
            _STATE.step = step

    @contextlib.contextmanager
    def as_default(self, step=None):
        """Within the block, this is the default writer (and ``step`` the default step)."""
        previous_writer, previous_step = _STATE.writer, _STATE.step
        _STATE.writer = self
        if step is not None:
            _STATE.step = step
        try:
            yield self
        finally:
            self.flush()
            _STATE.writer = previous_writer
            if step is not None:
                _STATE.step = previous_step

    def init(self) -> None:
        """Nothing to do: the file is created with the writer (TF's eager writers too)."""

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()

    def _write(self, tag: str, tensor: bytes, metadata: bytes, step: int) -> None:
        if self._file is None:
            return
        summary = event_file.summary_value(tag, tensor, metadata)
        self._file.add_event(event_file.encode_event(time.time(), step, summary))


def create_file_writer(
    logdir, max_queue=None, flush_millis=None, filename_suffix=None, name=None, **kwargs
) -> SummaryWriter:
    """A writer of a new event file in ``logdir`` (created if missing).

    ``flush_millis`` is accepted; events are written at ``flush()``, when ``max_queue``
    (default 10) are waiting, when an ``as_default`` block ends and at ``close()``.

    Raises:
        ValueError: an empty ``logdir``.
    """
    if logdir is None or str(logdir) == "":
        raise ValueError("logdir cannot be empty: pass the directory for the event files.")
    return SummaryWriter(
        str(logdir), 10 if max_queue is None else max_queue, filename_suffix or ".v2"
    )


def create_noop_writer() -> SummaryWriter:
    """A writer that writes nothing (``as_default`` on it turns summaries off)."""
    return SummaryWriter(None)


def set_step(step) -> None:
    """The default step of the calling thread (an int, a tensor or a variable; None clears)."""
    _STATE.step = step


def get_step():
    """The default step of the calling thread, or None."""
    return _STATE.step


@contextlib.contextmanager
def record_if(condition):
    """Record summaries in the block only when ``condition`` (a bool, or a callable) holds."""
    previous = _STATE.record
    _STATE.record = condition
    try:
        yield
    finally:
        _STATE.record = previous


def should_record_summaries() -> bool:
    """True when a default writer is set and recording is on."""
    condition = _STATE.record
    on = condition() if callable(condition) else condition
    return _STATE.writer is not None and _STATE.writer._file is not None and bool(on)


def _resolve_step(step) -> int:
    if step is None:
        step = _STATE.step
    if step is None:
        raise ValueError(
            "No step set. Please specify one either through the `step` argument or through "
            "tf.summary.experimental.set_step()"
        )
    value = _value(step)
    if value.shape != () or value.dtype.kind not in "iu":
        if value.shape == () and value.dtype.kind == "f" and float(value).is_integer():
            return int(value)
        raise ValueError(f"The summary step must be an integer scalar, got {step!r}.")
    return int(value)


def write(tag, tensor, step=None, metadata=None, name=None) -> bool:
    """Write ``tensor`` under ``tag`` with serialized ``metadata`` (SummaryMetadata bytes).

    Raises:
        ValueError: no step given and none set.
    """
    if not should_record_summaries():
        return False
    step_value = _resolve_step(step)
    meta = metadata if isinstance(metadata, bytes) else b""
    _STATE.writer._write(str(tag), event_file.tensor_proto(_value(tensor)), meta, step_value)
    return True


def scalar(name, data, step=None, description=None) -> bool:
    """Write a scalar (as float32) under ``name``.

    Raises:
        ValueError: ``data`` is not a scalar, or no step is given and none set.
    """
    if not should_record_summaries():
        return False
    value = _value(data)
    if value.shape != ():
        raise ValueError(f"A scalar summary needs a scalar, got shape {value.shape} for {name!r}.")
    meta = event_file.summary_metadata("scalars", b"", description or "", _DATA_CLASS_SCALAR)
    return write(name, value.astype(np.float32), step, meta)


def _buckets(data: np.ndarray, bucket_count: int) -> np.ndarray:
    data = data.reshape(-1).astype(np.float64)
    if data.size == 0:
        return np.zeros((bucket_count, 3), np.float64)
    low, high = data.min(), data.max()
    if high == low:
        counts = np.zeros(bucket_count)
        counts[0] = data.size
        return np.stack([np.full(bucket_count, low), np.full(bucket_count, low), counts], axis=1)
    width = (high - low) / bucket_count
    indices = np.minimum(np.floor((data - low) / width).astype(np.int64), bucket_count - 1)
    counts = np.bincount(indices, minlength=bucket_count).astype(np.float64)
    edges = np.linspace(low, high, bucket_count + 1)
    edges[-1] = high
    return np.stack([edges[:-1], edges[1:], counts], axis=1)


def histogram(name, data, step=None, buckets=None, description=None) -> bool:
    """Write a histogram of ``data`` (``buckets`` equal-width buckets, 30 by default).

    Raises:
        ValueError: ``buckets < 1``, or no step.
    """
    if not should_record_summaries():
        return False
    count = _DEFAULT_BUCKETS if buckets is None else int(buckets)
    if count < 1:
        raise ValueError(f"A histogram needs at least one bucket, got buckets={buckets}.")
    table = _buckets(_value(data), count)
    meta = event_file.summary_metadata("histograms", b"", description or "", _DATA_CLASS_TENSOR)
    return write(name, table, step, meta)


def text(name, data, step=None, description=None) -> bool:
    """Write a string (or an array of strings) under ``name``."""
    if not should_record_summaries():
        return False
    value = np.asarray(data if isinstance(data, (str, bytes, list, tuple)) else _value(data))
    if value.dtype.kind == "S":
        value = np.char.decode(value, "utf-8")
    meta = event_file.summary_metadata("text", b"", description or "", _DATA_CLASS_TENSOR)
    return write(name, value.astype(str), step, meta)


def flush(writer=None, name=None) -> None:
    """Flush ``writer`` (default: the default writer)."""
    target = writer if writer is not None else _STATE.writer
    if target is not None:
        target.flush()

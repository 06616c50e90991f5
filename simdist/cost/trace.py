"""A step's timeline of events on per-device streams, and its Chrome trace export.

The Chrome trace event format ("Trace Event Format", Google, 2016; opened by Perfetto and
chrome://tracing) takes complete events ``{"ph": "X", "ts": start_us, "dur": dur_us,
"pid": process, "tid": thread}``; simdist writes one process per device and one thread per
stream (``compute`` = 0, ``comm`` = 1), named by metadata events (``"ph": "M"``).
"""

from __future__ import annotations

import dataclasses
import json
import os

__all__ = ["TimelineEvent", "Timeline", "to_chrome_trace", "write_chrome_trace", "STREAMS"]

STREAMS = ("compute", "comm")


@dataclasses.dataclass(frozen=True)
class TimelineEvent:
    """One interval on one device's stream; times in seconds from the step's start."""

    device: int
    stream: str  # "compute" or "comm"
    name: str
    start: float
    duration: float
    category: str = ""  # "forward", "backward", "allreduce", "optimizer"
    args: tuple[tuple[str, object], ...] = ()

    @property
    def end(self) -> float:
        return self.start + self.duration


@dataclasses.dataclass(frozen=True)
class Timeline:
    """The events of one simulated step, sorted by (device, stream, start)."""

    events: tuple[TimelineEvent, ...]
    device_names: tuple[str, ...]

    @property
    def end(self) -> float:
        return max((e.end for e in self.events), default=0.0)

    def busy(self, stream: str, device: int = 0) -> float:
        """Seconds ``device``'s ``stream`` spends in events."""
        return sum(e.duration for e in self.events if e.device == device and e.stream == stream)

    def write_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write this timeline as a Chrome trace JSON file (see :func:`write_chrome_trace`)."""
        write_chrome_trace(self, path)


def to_chrome_trace(timeline: Timeline) -> dict:
    """The timeline as a Chrome trace event dict (``{"traceEvents": [...]}``).

    Args:
        timeline: the step's events.

    Returns:
        A JSON-serialisable dict: metadata events naming each device (``pid``) and stream
        (``tid``), then one complete event (``"ph": "X"``) per timeline event, times in
        microseconds.
    """
    events: list[dict] = []
    for pid, name in enumerate(timeline.device_names):
        events.append(
            {"name": "process_name", "ph": "M", "pid": pid, "tid": 0, "args": {"name": name}}
        )
        for tid, stream in enumerate(STREAMS):
            events.append(
                {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": stream}}
            )
    for event in timeline.events:
        events.append(
            {
                "name": event.name,
                "cat": event.category,
                "ph": "X",
                "ts": event.start * 1e6,
                "dur": event.duration * 1e6,
                "pid": event.device,
                "tid": STREAMS.index(event.stream),
                "args": dict(event.args),
            }
        )
    return {"traceEvents": events, "displayTimeUnit": "ms"}


def write_chrome_trace(timeline: Timeline, path: str | os.PathLike) -> None:
    """Write :func:`to_chrome_trace`'s dict as JSON to ``path`` (open it in Perfetto)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(to_chrome_trace(timeline), f)

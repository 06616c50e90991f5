"""Price a ``simdist.sim.profile`` recording on its topology: step timelines and a report.

Each recorded step is replayed on per-device clocks (replica ``r`` on topology device ``r``):

* a compute record advances its replica's clock by the time of its kernels under the
  step model's assumptions (:func:`simdist.cost.kernel_time` on that device, at the
  recorded dtype: roofline plus launch and framework overhead per kernel, TF32 matmuls, as
  :func:`simdist.cost.price_step` prices them);
* a collective starts when every taking-part replica has reached it (the latest clock) and
  ends :func:`simdist.cost.pricing.price_call` seconds later on every one of them: NCCL's
  model on GPU systems where it applies (as :func:`simdist.cost.price_step` prices its
  buckets), else the alpha-beta schedule model.

No compute/communication overlap is modelled, and with TensorFlow's defaults there is none to
model: ``MirroredStrategy``'s ``NcclAllReduce(num_packs=1)`` all-reduces the step's gradients
as one pack, which needs every gradient, so it starts after the whole backward pass (for
DDP/Horovod-style bucketed overlap see :func:`simdist.cost.price_step`). Step time is the
latest clock; idle is step time minus the device's compute and communication. Steps follow
each other on one timeline.
"""

from __future__ import annotations

import dataclasses
import os

from simdist.cost.assumptions import StepAssumptions, kernel_time
from simdist.cost.pricing import PricedCall, price_call
from simdist.cost.trace import Timeline, TimelineEvent, to_chrome_trace, write_chrome_trace
from simdist.sim.profile import CollectiveRecord, ComputeRecord
from simdist.topology.model import Link

__all__ = ["PricedCollective", "StepReport", "ProfileReport", "build_report"]


@dataclasses.dataclass(frozen=True)
class PricedCollective:
    """A recorded collective, its price on the topology, and when it ran in its step."""

    record: CollectiveRecord
    algorithm: str  # the algorithm priced (the selector's or NCCL's choice resolved)
    cost: PricedCall | None  # None for a single replica (nothing moves)
    start: float

    @property
    def time(self) -> float:
        return self.cost.time if self.cost is not None else 0.0


@dataclasses.dataclass(frozen=True)
class StepReport:
    """One ``strategy.run``'s predicted cost. Times in seconds."""

    index: int
    strategy: str
    num_replicas: int
    step_time: float
    compute_time: tuple[float, ...]  # per device
    comm_time: float  # every taking-part device spends it (no overlap)
    idle_time: tuple[float, ...]  # per device
    flops: tuple[float, ...]  # per device
    collectives: tuple[PricedCollective, ...]
    bottleneck: Link | None
    events: tuple[TimelineEvent, ...]  # times from the step's start


@dataclasses.dataclass(frozen=True)
class ProfileReport:
    """Every step's :class:`StepReport` plus what could not be priced; ``str`` prints it."""

    topology: str
    device_names: tuple[str, ...]
    algorithm: str
    steps: tuple[StepReport, ...]
    outside: tuple[CollectiveRecord, ...]
    uncounted: tuple[tuple[str, int], ...]
    assumptions: StepAssumptions = StepAssumptions()

    @property
    def total_time(self) -> float:
        return sum(s.step_time for s in self.steps)

    @property
    def total_comm_time(self) -> float:
        return sum(s.comm_time for s in self.steps)

    @property
    def total_compute_time(self) -> float:
        """The busiest device's compute, summed over steps."""
        return sum(max(s.compute_time, default=0.0) for s in self.steps)

    def timeline(self) -> Timeline:
        """All steps, one after the other, as a :class:`~simdist.cost.Timeline`."""
        events, offset = [], 0.0
        for step in self.steps:
            events.extend(dataclasses.replace(e, start=e.start + offset) for e in step.events)
            offset += step.step_time
        events.sort(key=lambda e: (e.device, e.stream, e.start))
        return Timeline(tuple(events), self.device_names)

    def to_chrome_trace(self) -> dict:
        """The timeline as a Chrome trace event dict (``{"traceEvents": [...]}``)."""
        return to_chrome_trace(self.timeline())

    def write_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write the timeline as Chrome trace JSON (Perfetto, chrome://tracing)."""
        write_chrome_trace(self.timeline(), path)

    def __str__(self) -> str:
        return format_report(self)


def _price(prof, record: CollectiveRecord, cache: dict) -> tuple[str, PricedCall | None]:
    algorithm = record.algorithm or "auto"
    if prof.algorithm != "auto" and record.kind == "all_reduce":
        algorithm = prof.algorithm
    if record.num_replicas <= 1 or record.nbytes == 0:
        return ("none" if record.num_replicas <= 1 else algorithm), None
    key = (record.kind, algorithm, record.num_replicas, record.nbytes, record.itemsize)
    if key not in cache:
        gathered = record.nbytes * record.num_replicas if record.kind == "all_gather" else None
        cache[key] = price_call(
            record.kind,
            algorithm,
            record.num_replicas,
            record.nbytes,
            prof.topology,
            record.itemsize,
            total_bytes=gathered,
        )
    cost = cache[key]
    return cost.algorithm, cost


def _device_dtype(device, dtype: str) -> str:
    return dtype if device.peak_flops.get(dtype) else "float32"


def _price_step(prof, step, cache: dict) -> StepReport:
    devices = prof.topology.devices
    n = step.num_replicas
    clocks = [0.0] * n
    compute = [0.0] * n
    flops = [0.0] * n
    events: list[TimelineEvent] = []
    priced: list[PricedCollective] = []
    link_busy: dict[Link, float] = {}
    for item in step.items:
        if isinstance(item, ComputeRecord):
            r = item.replica
            dtype = _device_dtype(devices[r], item.dtype)
            seconds = sum(kernel_time(op, devices[r], dtype, prof.assumptions) for op in item.ops)
            args = (("flops", item.flops), ("bytes", item.nbytes), ("dtype", item.dtype))
            name = f"{item.name} {item.phase}"
            events.append(TimelineEvent(r, "compute", name, clocks[r], seconds, item.phase, args))
            clocks[r] += seconds
            compute[r] += seconds
            flops[r] += item.flops
            continue
        ranks = range(min(item.num_replicas, n) or 1)
        start = max(clocks[r] for r in ranks)
        algorithm, cost = _price(prof, item, cache)
        entry = PricedCollective(item, algorithm, cost, start)
        priced.append(entry)
        args = (
            ("bytes_per_replica", item.nbytes),
            ("dtype", item.dtype),
            ("algorithm", algorithm),
            ("replicas", item.num_replicas),
        )
        for r in ranks:
            name = f"{item.kind} ({algorithm})"
            events.append(TimelineEvent(r, "comm", name, start, entry.time, item.kind, args))
            clocks[r] = start + entry.time
        if cost is not None:
            for link, busy in cost.link_busy:
                link_busy[link] = link_busy.get(link, 0.0) + busy
    step_time = max(clocks, default=0.0)
    comm = sum(p.time for p in priced)
    # Clocks are sums of floats: a difference below a picosecond is rounding, not idle time.
    idle = tuple(_no_noise(step_time - compute[r] - comm) for r in range(n))
    bottleneck = max(link_busy, key=lambda link: link_busy[link]) if link_busy else None
    events.sort(key=lambda e: (e.device, e.stream, e.start))
    return StepReport(
        step.index,
        step.strategy,
        n,
        step_time,
        tuple(compute),
        comm,
        idle,
        tuple(flops),
        tuple(priced),
        bottleneck,
        tuple(events),
    )


def build_report(prof) -> ProfileReport:
    """Price every step ``prof`` (a :class:`simdist.sim.profile`) recorded.

    Raises:
        ValueError: a collective the topology cannot run (from pricing).
    """
    cache: dict = {}
    steps = tuple(_price_step(prof, step, cache) for step in prof.steps)
    width = max((s.num_replicas for s in steps), default=0)
    names = tuple(d.name for d in prof.topology.devices[:width])
    return ProfileReport(
        prof.topology.name,
        names,
        prof.algorithm,
        steps,
        tuple(prof.outside),
        tuple(sorted(prof.uncounted.items())),
        prof.assumptions,
    )


def _no_noise(seconds: float) -> float:
    return seconds if seconds > 1e-12 else 0.0


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.4g} us"


def _size(nbytes: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if nbytes >= scale:
            return f"{nbytes / scale:.2f} {unit}"
    return f"{int(nbytes)} B"


def _link(link: Link | None, step=None) -> str:
    if link is None:
        if step is not None and any(p.cost is not None for p in step.collectives):
            return "not priced (NCCL's model has no per-link loads)"
        return "none (nothing moved)"
    return f"{link.src} -> {link.dst} ({link.kind or 'link'}, {link.bandwidth / 1e9:g} GB/s)"


def _step_lines(step: StepReport, names: tuple[str, ...]) -> list[str]:
    busiest = max(step.compute_time, default=0.0)
    lines = [
        f"step {step.index} ({step.strategy}, {step.num_replicas} replicas): "
        f"{_us(step.step_time)} = compute {_us(busiest)} (busiest device) + "
        f"communication {_us(step.comm_time)} + idle {_us(min(step.idle_time, default=0.0))}",
    ]
    per_device = [
        f"{_us(t)} ({step.flops[r] / 1e6:.3g} MFLOP)" for r, t in enumerate(step.compute_time)
    ]
    if len(set(per_device)) == 1:
        span = names[0] if step.num_replicas == 1 else f"{names[0]}..{names[step.num_replicas - 1]}"
        lines.append(f"  compute per device: {per_device[0]} on each of {span}")
    else:
        lines.append(
            "  compute per device: "
            + ", ".join(f"{names[r]} {text}" for r, text in enumerate(per_device))
        )
    total_bytes = sum(p.record.nbytes for p in step.collectives)
    lines.append(
        f"  collectives: {len(step.collectives)}, {_size(total_bytes)} per replica, "
        f"{_us(step.comm_time)}"
    )
    for p in step.collectives:
        r = p.record
        how = p.algorithm + (" (selected)" if r.algorithm is None else "")
        lines.append(
            f"    {r.kind:<11} {r.dtype:<8} {_size(r.nbytes):>11} x {r.num_replicas} replicas "
            f"{how:<30} {_us(p.time)}"
        )
    lines.append(f"  bottleneck link: {_link(step.bottleneck, step)}")
    return lines


def format_report(report: ProfileReport) -> str:
    """The report as text: a header saying what is counted, each step, and totals."""
    lines = [
        f"simdist profile on {report.topology}: {len(report.steps)} step(s), "
        f"algorithm {report.algorithm}",
        "counted: Keras layer forward/backward kernels and the optimizer update (step model "
        "below), "
        "cross-replica collectives (NCCL's model on GPU systems, else alpha-beta with "
        "contention);",
        "not counted: ops outside Keras layers (losses, metrics), host-side reduce/gather, "
        "input copies. No compute/communication overlap modelled.",
    ]
    for step in report.steps:
        lines.extend(_step_lines(step, report.device_names))
    if report.steps:
        total = report.total_time
        comm = report.total_comm_time
        share = comm / total if total else 0.0
        lines.append(
            f"total: {_us(total)} over {len(report.steps)} step(s); compute "
            f"{_us(report.total_compute_time)}, communication {_us(comm)} ({share:.0%})"
        )
    if report.outside:
        size = _size(sum(r.nbytes for r in report.outside))
        lines.append(
            f"outside strategy.run (host-side, not priced): {len(report.outside)} "
            f"collective(s), {size} per replica"
        )
    if report.uncounted:
        listed = ", ".join(f"{name} x{count}" for name, count in report.uncounted)
        lines.append(f"compute not counted (no cost model): {listed}")
    lines.extend(f"# assumption: {line}" for line in report.assumptions.kernel_lines())
    return "\n".join(lines)

"""The data-parallel training step model: per-device clocks, gradient buckets, overlap.

Every device runs the same step on its share of the global batch (synchronous data
parallelism, as ``MirroredStrategy`` does):

1. forward, layer by layer, then backward in reverse layer order, on the *compute* stream,
   each kernel priced by the roofline (:mod:`simdist.cost.compute`);
2. gradients are packed into buckets of about ``bucket_bytes`` in reverse layer order (the
   order backward produces them, as PyTorch DDP's and Horovod's gradient bucketing/fusion
   do); a bucket closes once it holds ``bucket_bytes`` or more;
3. a bucket's all-reduce starts on the *comm* stream when its last gradient is ready on every
   device and the previous bucket's all-reduce has finished, so it overlaps the backward
   compute of earlier layers; each all-reduce is priced by :mod:`simdist.cost.network`;
4. the optimizer update runs once backward has finished and every bucket is reduced.

Step time = ``max(backward end, last all-reduce end) + update``. The report splits it into
compute (busy time of the compute stream), communication (busy time of the comm stream),
exposed communication (communication that ends after backward: the part not hidden) and idle
(step time minus compute: the compute stream waiting).

Each kernel takes ``launch + framework + max(flops / peak, bytes / bandwidth)``
(:class:`StepAssumptions`): a fixed startup per kernel on top of the roofline, which is
Hockney's ``n_1/2`` rule for size-dependent efficiency (a kernel of roofline time ``t``
reaches the fraction ``t / (t + startup)`` of peak: small kernels are launch-bound, large
ones approach the roofline). float32 matrix multiplies run at the TF32 tensor-core peak
where the device has one, as TensorFlow does by default on Ampere and later
(``tf.config.experimental.enable_tensor_float_32_execution``). The assumptions are printed
with every report. Layers that describe no compute are listed as unpriced, never priced as
zero.

Scaling is weak scaling: the batch per device is fixed, so ideal step time is constant and the
efficiency at ``p`` devices is ``t(p0) / t(p)`` (``p0`` the smallest count, normally 1),
equivalently throughput per device relative to ``p0``'s.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from simdist.cost.assumptions import StepAssumptions, kernel_time
from simdist.cost.compute import DTYPE_SIZES, layer_costs, optimizer_cost
from simdist.cost.pricing import price_call
from simdist.cost.trace import Timeline, TimelineEvent
from simdist.topology.model import Link, Topology

__all__ = [
    "StepCost",
    "ScalingRow",
    "price_step",
    "scaling_table",
    "format_scaling_table",
    "format_step_report",
]

DEFAULT_BUCKET_BYTES = 25 * 1024 * 1024


@dataclasses.dataclass(frozen=True)
class StepCost:
    """The predicted cost of one training step on ``num_devices`` devices.

    Times are seconds. ``buckets`` lists ``(nbytes, start, duration)`` of each gradient
    bucket's all-reduce; ``bottleneck`` is the link busiest over all of them.
    """

    num_devices: int
    global_batch: int
    topology: str
    algorithm: str
    step_time: float
    compute_time: float
    comm_time: float
    exposed_comm_time: float
    idle_time: float
    bottleneck: Link | None
    buckets: tuple[tuple[int, float, float], ...]
    timeline: Timeline
    unpriced: tuple[str, ...] = ()  # "name (Type): why" of each layer left unpriced
    assumptions: StepAssumptions = StepAssumptions()


@dataclasses.dataclass(frozen=True)
class ScalingRow:
    """One line of the weak-scaling table."""

    num_devices: int
    global_batch: int
    step: StepCost
    throughput: float  # examples per second
    efficiency: float  # t(p0) / t(p)


def _model_layers(model):
    if isinstance(model, str):
        raise ValueError(
            f"unknown model name {model!r}: price_step takes a model (a Sequential or a list "
            "of layers), not a name; named models belong to the command line "
            "(simdist cost step --model)"
        )
    return model


def _check_positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def price_step(
    model,
    input_shape: Sequence[int],
    global_batch: int,
    topology: Topology,
    num_devices: int,
    algorithm: str = "auto",
    bucket_bytes: int = DEFAULT_BUCKET_BYTES,
    dtype: str = "float32",
    optimizer: str = "adam",
    launch_overhead: float | None = None,
    assumptions: StepAssumptions | None = None,
) -> StepCost:
    """Predict one synchronous data-parallel training step.

    Args:
        model: a Keras ``Sequential``, a list of layers, or a Functional model (each call
            of its graph priced at the input shape the graph gives it).
        input_shape: one example's shape, no batch axis (e.g. ``(28, 28, 1)``).
        global_batch: examples per step over all devices; ``num_devices`` must divide it.
        topology: the machine; devices ``0 .. num_devices-1`` run the step.
        num_devices: how many devices take part.
        algorithm: the all-reduce algorithm (``"auto"``: NCCL's model on GPU systems, else
            the collectives' selector; see :func:`simdist.cost.pricing.price_call`).
        bucket_bytes: gradient bucket size (default 25 MiB, PyTorch DDP's default).
        dtype: compute and gradient dtype.
        optimizer: ``"sgd"``, ``"momentum"`` or ``"adam"`` (prices the update).
        launch_overhead: shorthand for ``assumptions.launch_overhead`` (seconds per kernel).
        assumptions: the step model's :class:`StepAssumptions` (default: its defaults).

    Returns:
        A :class:`StepCost` with the split, the bottleneck link and the timeline.

    Raises:
        ValueError: non-positive sizes, a batch ``num_devices`` does not divide, more devices
            than the topology has, an unknown dtype or optimizer, a model given by name.
    """
    assumptions = assumptions or StepAssumptions()
    if launch_overhead is not None:
        assumptions = dataclasses.replace(assumptions, launch_overhead=launch_overhead)
    _check_positive_int(global_batch, "global_batch")
    _check_positive_int(num_devices, "num_devices")
    _check_positive_int(bucket_bytes, "bucket_bytes")
    if global_batch % num_devices:
        raise ValueError(
            f"global batch {global_batch} is not divisible by {num_devices} devices; use a "
            f"multiple of {num_devices}"
        )
    if num_devices > topology.num_devices:
        raise ValueError(
            f"topology {topology.name!r} has {topology.num_devices} devices, fewer than the "
            f"{num_devices} asked for; use a larger topology"
        )
    all_layers = layer_costs(
        _model_layers(model), input_shape, global_batch // num_devices, dtype, unpriced="report"
    )
    layers = [layer for layer in all_layers if layer.priced]
    unpriced = tuple(
        f"{c.name} ({c.kind}): {c.unpriced_reason}" for c in all_layers if not c.priced
    )
    size = DTYPE_SIZES[dtype]
    devices = topology.devices[:num_devices]
    names = tuple(d.name for d in devices)
    events: list[TimelineEvent] = []

    def run_ops(ops, start, category, layer_name):
        """Run ``ops`` back to back on every device's compute stream; return each end."""
        ends = []
        for index, device in enumerate(devices):
            clock = start[index]
            for op in ops:
                duration = kernel_time(op, device, dtype, assumptions)
                events.append(
                    TimelineEvent(
                        index,
                        "compute",
                        f"{layer_name}/{op.name}",
                        clock,
                        duration,
                        category,
                        (("flops", op.flops), ("bytes", op.nbytes)),
                    )
                )
                clock += duration
            ends.append(clock)
        return ends

    clocks = [0.0] * num_devices
    for layer in layers:
        clocks = run_ops(layer.forward, clocks, "forward", layer.name)
    grad_ready: list[tuple[int, float]] = []  # (bytes, time ready on every device), reverse order
    for layer in reversed(layers):
        clocks = run_ops(layer.backward, clocks, "backward", layer.name)
        for count in reversed(layer.params):
            grad_ready.append((count * size, max(clocks)))
    backward_end = max(clocks)

    buckets: list[tuple[int, float]] = []  # (bytes, ready)
    filled, ready = 0, 0.0
    for nbytes, when in grad_ready:
        filled, ready = filled + nbytes, when
        if filled >= bucket_bytes:
            buckets.append((filled, ready))
            filled = 0
    if filled:
        buckets.append((filled, ready))

    comm_free = 0.0
    bucket_rows = []
    link_busy: dict[Link, float] = {}
    used_algorithm = algorithm
    if num_devices > 1:
        for index, (nbytes, when) in enumerate(buckets):
            cost = price_call("all_reduce", algorithm, num_devices, nbytes, topology, size)
            # the collective is a kernel too: it pays the launch overhead (not the framework's)
            duration = cost.time + assumptions.launch_overhead
            used_algorithm = cost.algorithm
            start = max(when, comm_free)
            comm_free = start + duration
            bucket_rows.append((nbytes, start, duration))
            for link, busy in cost.link_busy:
                link_busy[link] = link_busy.get(link, 0.0) + busy
            for device in range(num_devices):
                events.append(
                    TimelineEvent(
                        device,
                        "comm",
                        f"allreduce bucket {index}",
                        start,
                        duration,
                        "allreduce",
                        (("bytes", nbytes), ("algorithm", cost.algorithm)),
                    )
                )
    update_start = max(backward_end, comm_free)
    total_params = sum(n for n, _ in grad_ready) // size
    update = optimizer_cost(total_params, optimizer, dtype)
    clocks = run_ops((update,), [update_start] * num_devices, "optimizer", "optimizer")
    step_time = max(clocks)
    compute_time = max(
        sum(e.duration for e in events if e.device == d and e.stream == "compute")
        for d in range(num_devices)
    )
    comm_time = sum(duration for _, _, duration in bucket_rows)
    bottleneck = max(link_busy, key=link_busy.get) if link_busy else None
    events.sort(key=lambda e: (e.device, e.stream, e.start))
    return StepCost(
        num_devices=num_devices,
        global_batch=global_batch,
        topology=topology.name,
        algorithm=used_algorithm if num_devices > 1 else "none",
        step_time=step_time,
        compute_time=compute_time,
        comm_time=comm_time,
        exposed_comm_time=max(0.0, comm_free - backward_end),
        idle_time=max(0.0, step_time - compute_time),
        bottleneck=bottleneck,
        buckets=tuple(bucket_rows),
        timeline=Timeline(tuple(events), names),
        unpriced=unpriced,
        assumptions=assumptions,
    )


def scaling_table(
    model,
    input_shape: Sequence[int],
    batch_per_device: int,
    topology: Topology,
    device_counts: Sequence[int],
    **kwargs,
) -> tuple[ScalingRow, ...]:
    """Weak scaling: :func:`price_step` at each device count with a fixed batch per device.

    Args:
        model, input_shape, topology: as for :func:`price_step`.
        batch_per_device: examples per device per step.
        device_counts: the device counts to price (e.g. ``(1, 2, 4, 8)``).
        **kwargs: passed on to :func:`price_step`.

    Returns:
        One :class:`ScalingRow` per count, in the order given; efficiency is relative to the
        smallest count.

    Raises:
        ValueError: an empty ``device_counts`` or anything :func:`price_step` rejects.
    """
    _check_positive_int(batch_per_device, "batch_per_device")
    counts = [_check_positive_int(c, "device count") for c in device_counts]
    if not counts:
        raise ValueError("device_counts is empty; give at least one device count")
    model = _model_layers(model)
    steps = {
        p: price_step(model, input_shape, p * batch_per_device, topology, p, **kwargs)
        for p in sorted(set(counts))
    }
    base = steps[min(counts)].step_time
    return tuple(
        ScalingRow(
            num_devices=p,
            global_batch=p * batch_per_device,
            step=steps[p],
            throughput=p * batch_per_device / steps[p].step_time,
            efficiency=base / steps[p].step_time,
        )
        for p in counts
    )


def _link_name(link: Link | None) -> str:
    return "-" if link is None else f"{link.src}->{link.dst}"


def format_step_report(rows: Sequence[ScalingRow]) -> str:
    """The scaling table, then the step model's assumptions and any unpriced layers."""
    lines = [format_scaling_table(rows)]
    if rows:
        step = rows[-1].step
        lines.append(f"# all-reduce: {step.algorithm}")
        lines += [f"# assumption: {text}" for text in step.assumptions.lines()]
        for label in step.unpriced:
            lines.append(f"# unpriced: {label}; its time is NOT counted")
    return "\n".join(lines)


def format_scaling_table(rows: Sequence[ScalingRow]) -> str:
    """The scaling table as text: one line per device count (times in milliseconds).

    Reports print :func:`format_step_report`, which adds the assumptions."""
    header = (
        f"{'devices':>7}  {'batch':>6}  {'step ms':>9}  {'compute':>9}  {'comm':>9}  "
        f"{'exposed':>9}  {'idle':>9}  {'samples/s':>11}  {'eff %':>6}  bottleneck"
    )
    lines = [header]
    for row in rows:
        s = row.step
        lines.append(
            f"{row.num_devices:>7}  {row.global_batch:>6}  {s.step_time * 1e3:>9.4f}  "
            f"{s.compute_time * 1e3:>9.4f}  {s.comm_time * 1e3:>9.4f}  "
            f"{s.exposed_comm_time * 1e3:>9.4f}  {s.idle_time * 1e3:>9.4f}  "
            f"{row.throughput:>11.1f}  {row.efficiency * 100:>6.1f}  {_link_name(s.bottleneck)}"
        )
    return "\n".join(lines)

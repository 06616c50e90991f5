"""The step model's stated assumptions and the time of one kernel under them.

A kernel takes ``launch + framework + max(flops / peak, bytes / bandwidth)``: the roofline
(Williams, Waterman & Patterson, CACM 2009) with a fixed startup per kernel, which is
Hockney's ``n_1/2`` rule for size-dependent efficiency: a kernel of roofline time ``t``
reaches the fraction ``t / (t + startup)`` of peak, so small kernels are launch-bound and large
ones approach the roofline. The startup's two parts are assumptions, not measurements, and
every report prints them (:meth:`StepAssumptions.lines`).
"""

from __future__ import annotations

import dataclasses

from simdist.cost.compute import OpCost
from simdist.topology.model import Device

__all__ = ["StepAssumptions", "kernel_time"]


@dataclasses.dataclass(frozen=True)
class StepAssumptions:
    """What the step model assumes beyond the roofline (printed with every report).

    Attributes:
        launch_overhead: seconds of GPU kernel launch per kernel (default 4 us: CUDA
            kernel launches cost a few microseconds; an assumption, not a measurement of
            any one system).
        framework_overhead: seconds of framework work per op on the host that the device
            waits for (default 5 us per op: graph-executor dispatch of a compiled
            ``tf.function``; an assumption).
        tf32: float32 matrix multiplies use the device's TF32 peak where it has one.
    """

    launch_overhead: float = 4e-6
    framework_overhead: float = 5e-6
    tf32: bool = True

    def __post_init__(self) -> None:
        for name in ("launch_overhead", "framework_overhead"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or not value >= 0 or value == float("inf"):
                raise ValueError(f"{name} must be a finite number of seconds >= 0, got {value!r}")

    def kernel_lines(self) -> list[str]:
        """The assumptions about compute kernels, as report lines."""
        return [
            f"kernel launch overhead {self.launch_overhead * 1e6:g} us per kernel (assumption)",
            f"framework overhead {self.framework_overhead * 1e6:g} us per op (assumption)",
            "kernel time = launch + framework + max(FLOPs / peak, bytes / memory bandwidth) "
            "(roofline with Hockney's n1/2 startup)",
            "float32 matmuls at the TF32 tensor-core peak (TensorFlow's default)"
            if self.tf32
            else "float32 matmuls at the FP32 peak",
        ]

    def lines(self) -> list[str]:
        """The assumptions of ``price_step``, as report lines."""
        launch, *rest = self.kernel_lines()
        return [
            launch.replace(" per kernel ", " per kernel, collectives included "),
            *rest,
            "gradient all-reduce: NCCL's tuning model on GPU systems, else the schedule model; "
            "buckets overlap backward",
        ]


def kernel_time(op: OpCost, device: Device, dtype: str, assumptions: StepAssumptions) -> float:
    """Seconds of one kernel under ``assumptions`` (see the module docstring).

    Raises:
        ValueError: the device has no peak for ``dtype``.
    """
    peak_dtype = dtype
    if assumptions.tf32 and dtype == "float32" and op.matmul and "tfloat32" in device.peak_flops:
        peak_dtype = "tfloat32"
    peak = device.peak_flops.get(peak_dtype)
    if not peak:
        raise ValueError(
            f"device {device.name!r} has no peak FLOP/s for dtype {dtype!r}; it lists "
            f"{sorted(device.peak_flops)}"
        )
    roofline = max(op.flops / peak, op.nbytes / device.memory_bandwidth)
    return roofline + assumptions.launch_overhead + assumptions.framework_overhead

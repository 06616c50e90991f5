"""TPU presets: Cloud TPU v3 / v5e slices (2D tori) and v4 / v5p slices (3D tori).

Naming follows Google's accelerator types. For v3, v4 and v5p the number counts
TensorCores (two per chip): ``v4-32`` is 16 chips in a 2x2x4 slice, ``v5p-128`` is 64
chips in a 4x4x4 cube. For v5e the number counts chips (one TensorCore each); Google writes
the type ``v5litepod-16`` and simdist also accepts ``v5e-16``.

Each chip is a :class:`Device` of kind ``"TPU"`` named ``"chip(x,y[,z])"``; ranks are row-major
over the coordinates (:meth:`Topology.torus_coords`). Hosts hold 2x2(x1) chips (v3, v4, v5p)
or 2x4 chips (v5e), as Google's slice tables count hosts. A TensorCore count per chip for the
TPU strategy is :data:`TPU_TENSORCORES_PER_CHIP` / :func:`tensorcores_per_chip`.
"""

from __future__ import annotations

import dataclasses
import re

from simdist.topology import builders
from simdist.topology.model import Device, Topology

__all__ = [
    "TPU_TENSORCORES_PER_CHIP",
    "TPU_SHAPES",
    "tensorcores_per_chip",
    "tpu_generation",
    "tpu_slice",
    "parse_tpu_name",
]

GB = 1e9
GiB = 2**30
TFLOPS = 1e12
US = 1e-6

TPU_TENSORCORES_PER_CHIP = {"v3": 2, "v4": 2, "v5e": 1, "v5p": 2}
"""TensorCores per chip per generation (Google's system-architecture pages). v4 and v5p
present their two TensorCores as one "megacore" device to frameworks."""


@dataclasses.dataclass(frozen=True)
class _Generation:
    device: Device
    link_bandwidth: float  # bytes/s per link per direction
    host_block: tuple[int, ...]
    names_count_cores: bool
    sources: tuple[str, ...]


_LATENCY = 1.0 * US
_SRC_LATENCY = (
    "ICI latency (not published by Google; assumption): 1 us per chip-to-chip hop, the value "
    "ASTRA-sim's sample TPU network configs use (inputs/network/tpu_v3_*.yml, 1000 ns)"
)
_SRC_F32 = (
    "float32 peak is set to the bf16 peak: XLA on TPU runs float32 matmuls at DEFAULT "
    "precision as a single bfloat16 pass (JAX/XLA precision docs)"
)


def _tpu(bf16: float, int8: float | None, hbm_bytes: float, hbm_bw: float) -> Device:
    flops = {"bfloat16": bf16 * TFLOPS, "float32": bf16 * TFLOPS}
    if int8 is not None:
        flops["int8"] = int8 * TFLOPS
    return Device("", "TPU", flops, hbm_bw * GB, int(hbm_bytes))


_GENERATIONS = {
    "v3": _Generation(
        _tpu(123, None, 32 * GiB, 900),
        656e9 / 8,
        (2, 2),
        True,
        (
            "Google Cloud TPU v3 (cloud.google.com/tpu/docs/v3): 2 TensorCores per chip, peak "
            "123 TFLOPS bf16 per chip, HBM2 32 GiB at 900 GBps, 1024-chip pods, 2D torus",
            "ICI: 4 links per chip at 656 Gb/s each (Jouppi et al., 'A Domain-Specific "
            "Supercomputer for Training Deep Neural Networks', CACM 2020), taken per direction: "
            "82 GB/s",
            "Wraparound: Google documents the v3 interconnect as a 2D torus; simdist assumes "
            "sub-pod slices wrap too (not documented)",
        ),
    ),
    "v4": _Generation(
        _tpu(275, 275, 32 * GiB, 1200),
        50 * GB,
        (2, 2, 1),
        True,
        (
            "Google Cloud TPU v4 (cloud.google.com/tpu/docs/v4): 2 TensorCores per chip, peak "
            "275 TFLOPS bf16/int8 per chip, HBM2 32 GiB at 1200 GBps, 4096-chip pods, 3D "
            "torus when every slice dimension is a multiple of 4, else a 3D mesh",
            "ICI: 6 links per chip at 400 Gb/s (50 GB/s) per direction (Jouppi et al., 'TPU v4: "
            "An Optically Reconfigurable Supercomputer for Machine Learning', ISCA 2023); "
            "consistent with Google's 24 TB/s pod bisection (512 links cut in 16x16x16)",
        ),
    ),
    "v5e": _Generation(
        _tpu(197, 393, 16 * GiB, 819),
        50 * GB,
        (2, 4),
        False,
        (
            "Google Cloud TPU v5e (cloud.google.com/tpu/docs/v5e): 1 TensorCore per chip, peak "
            "197 TFLOPS bf16 and 393 TOPS int8 per chip, HBM2 16 GB at 819 GBps, 256-chip pods, "
            "2D torus, slice shapes 1x1 to 16x16, 2x4 chips per host",
            "ICI: 400 GBps bidirectional per chip (1600 Gbps) over 4 links: 50 GB/s per link "
            "per direction; consistent with the 1.6 TB/s pod bisection (32 links cut in 16x16)",
            "Wraparound: Google documents the v5e interconnect as a 2D torus; simdist assumes "
            "sub-pod slices wrap too (not documented)",
        ),
    ),
    "v5p": _Generation(
        _tpu(459, None, 95 * GiB, 2765),
        100 * GB,
        (2, 2, 1),
        True,
        (
            "Google Cloud TPU v5p (cloud.google.com/tpu/docs/v5p): 2 TensorCores per chip, "
            "peak 459 TFLOPS bf16 per chip, HBM2e 95 GiB at 2765 GBps, 8960-chip pods, 3D torus, "
            "4 chips per host",
            "ICI: 1200 GBps bidirectional per chip (4800 Gbps) over 6 links: 100 GB/s per link "
            "per direction",
            "Wraparound: as v4, when every slice dimension is a multiple of 4 (whole cubes)",
        ),
    ),
}

_SHAPES_3D = {
    4: (2, 2, 1), 8: (2, 2, 2), 16: (2, 2, 4), 32: (2, 4, 4), 64: (4, 4, 4), 128: (4, 4, 8),
    256: (4, 8, 8), 512: (8, 8, 8), 1024: (8, 8, 16), 2048: (8, 16, 16), 4096: (16, 16, 16),
}  # fmt: skip
TPU_SHAPES = {
    "v3": {4: (2, 2), 16: (4, 4), 32: (4, 8), 64: (8, 8), 128: (8, 16), 256: (16, 16),
           512: (16, 32), 1024: (32, 32)},
    "v4": _SHAPES_3D,
    "v5e": {1: (1, 1), 4: (2, 2), 8: (2, 4), 16: (4, 4), 32: (4, 8), 64: (8, 8),
            128: (8, 16), 256: (16, 16)},
    "v5p": {**_SHAPES_3D, 6144: (16, 16, 24)},
}  # fmt: skip
"""Default slice shape per generation and chip count (Google's slice tables; v4 and v5p
share the cube shapes, 2x2x4 for 16 chips follows v4's table)."""


def tpu_slice(generation: str, chips: int, *, wraparound: bool | None = None) -> Topology:
    """A TPU slice of ``chips`` chips of one generation in Google's default shape.

    Args:
        generation: ``"v3"``, ``"v4"``, ``"v5e"`` or ``"v5p"``.
        chips: the number of chips (not TensorCores).
        wraparound: override the wraparound rule (None: v3/v5e always wrap; v4/v5p wrap
            when every dimension is a multiple of 4).

    Returns:
        The slice, named as Google writes its accelerator type (``"v4-32"``,
        ``"v5litepod-16"``).

    Raises:
        ValueError: unknown generation or a chip count with no documented shape.
    """
    if generation not in _GENERATIONS:
        raise ValueError(
            f"unknown TPU generation {generation!r}; use one of {sorted(_GENERATIONS)}"
        )
    shapes = TPU_SHAPES[generation]
    if chips not in shapes:
        raise ValueError(
            f"TPU {generation} has no slice of {chips} chips; chip counts: {sorted(shapes)}"
        )
    gen = _GENERATIONS[generation]
    dims = shapes[chips]
    if wraparound is None:
        wraparound = len(dims) == 2 or all(d % 4 == 0 for d in dims)
    count = chips * TPU_TENSORCORES_PER_CHIP[generation] if gen.names_count_cores else chips
    name = f"v5litepod-{count}" if generation == "v5e" else f"{generation}-{count}"
    return builders.torus(
        dims,
        gen.link_bandwidth,
        _LATENCY,
        wraparound=wraparound,
        device=gen.device,
        name=name,
        kind="ici",
        host_block=gen.host_block,
        sources=gen.sources + (_SRC_F32, _SRC_LATENCY),
    )


_NAME = re.compile(r"^(v3|v4|v5p|v5e|v5litepod)-(\d+)$")


def parse_tpu_name(name: str) -> tuple[str, int] | None:
    """``"v4-32"`` -> ``("v4", 16)`` (generation, chips); None when not a TPU name.

    Raises:
        ValueError: a TPU name whose count is not a whole number of chips.
    """
    match = _NAME.match(name.strip().lower())
    if match is None:
        return None
    generation = "v5e" if match.group(1) == "v5litepod" else match.group(1)
    count = int(match.group(2))
    per_chip = (
        TPU_TENSORCORES_PER_CHIP[generation] if _GENERATIONS[generation].names_count_cores else 1
    )
    if count % per_chip:
        raise ValueError(
            f"{name!r}: {generation} names count TensorCores ({per_chip} per chip), so the "
            f"number must be a multiple of {per_chip}"
        )
    return generation, count // per_chip


def tpu_generation(topology: Topology) -> str | None:
    """The TPU generation of a preset slice (from its name), or None for other topologies."""
    parsed = None
    try:
        parsed = parse_tpu_name(topology.name)
    except ValueError:
        return None
    return parsed[0] if parsed else None


def tensorcores_per_chip(topology: Topology) -> int:
    """TensorCores per chip of a TPU preset (1 for any non-TPU topology's devices)."""
    generation = tpu_generation(topology)
    return TPU_TENSORCORES_PER_CHIP[generation] if generation else 1

"""Published nccl-tests all-reduce results, with their source and NCCL version, for validation.

Every row is a number someone published: a cloud provider's benchmark table, or an NVIDIA
maintainer's statement in an NCCL or nccl-tests issue. None was measured here and none was
used to set a constant of the model (:mod:`simdist.cost.nccl_constants` holds NCCL's own).
``busbw`` is nccl-tests' bus bandwidth in GB/s at ``size`` bytes (float32 sum all-reduce);
where a source gives a range, the row holds its midpoint and the note the range.
:mod:`simdist.cost.nccl_validation` recomputes every row.

Azure tables label sizes loosely ("65K", "134M"); they are nccl-tests' powers of two
(65536, 134217728), as their script's ``-b 8 -e 8G -f 2`` run gives.
"""

from __future__ import annotations

import dataclasses

__all__ = ["PublishedRow", "PUBLISHED"]

KiB, MiB, GiB = 2**10, 2**20, 2**30


@dataclasses.dataclass(frozen=True)
class PublishedRow:
    """One published result: the system as a simdist preset, the size and the busbw."""

    system: str  # simdist preset the hardware matches
    ranks: int | None  # GPUs taking part (None: all of the preset)
    algorithm: str  # "auto" (NCCL's choice) or "nccl:ring" etc. when the run forced one
    size: int  # bytes
    busbw: float  # GB/s, as published
    nccl_version: str
    source: str
    note: str = ""
    ran: str = "not stated"  # the algorithm/protocol NCCL ran, as the source states it


_AZURE = "https://github.com/Azure/AI-benchmarking-guide/blob/main/"
_AZ_A100 = _AZURE + "Azure_Results/ND_A100_v4_results.md (ND A100 v4, 8x A100-SXM4-80GB, in-place)"
_AZ_H100 = _AZURE + "Azure Results/ND_H100_v5_results.md (ND H100 v5, 8x H100 80GB HBM3, in-place)"
_AZ_H200 = _AZURE + "Azure_Results/ND_H200_v5_results.md (ND H200 v5, 8x H200 141GB, in-place)"
_AZ_GB200 = (
    _AZURE + "Azure_Results/ND_GB200_v6_results.md (ND GB200 v6: one VM's 4 GB200 GPUs, "
    "NCCL_ALGO=Ring per Benchmarks/NVIDIA/NCCLBandwidth.py, in-place)"
)
_CW = "https://github.com/coreweave/nccl-tests/blob/main/README.md (Expected Performance, GB200"
_CW_RACK1 = _CW + ", single rack: 72 GPUs, out-of-place)"
_CW_RACK2 = _CW + ", 2 racks: 144 GPUs, out-of-place)"
_CW_RACK20 = _CW + ", 20 racks: 1,440 GPUs, out-of-place)"
_CW_SHARP = (
    "the same README: Quantum-X800 InfiniBand with SHARP, images with the NCCL SHARP plugin; "
    "which algorithm NCCL ran (NVLS-tree, CollNet) is not stated"
)
_CW_92 = (
    "https://github.com/coreweave/nccl-tests/pull/92 (test plan: 8-GPU x 2-node base MPIJob, "
    "busbw at 8G all-reduce)"
)


def _rows(system, ranks, algorithm, version, source, points, note="", ran="not stated"):
    return [
        PublishedRow(system, ranks, algorithm, size, busbw, version, source, note, ran)
        for size, busbw in points
    ]


_AZURE_SIZES = (1 * KiB, 64 * KiB, 1 * MiB, 16 * MiB, 64 * MiB, 128 * MiB, 1 * GiB, 8 * GiB)

PUBLISHED: tuple[PublishedRow, ...] = tuple(
    _rows(
        "dgx-a100", None, "auto", "2.18.5", _AZ_A100,
        zip(_AZURE_SIZES, (0.04, 2.70, 36.22, 109.22, 166.63, 174.18, 228.10, 231.58),
            strict=True),
        "AMD EPYC 7V12 host, as DGX A100 (AMD)",
    )
    + _rows(
        "dgx-h100", None, "auto", "2.18.5", _AZ_H100,
        zip(_AZURE_SIZES, (0.07, 2.72, 43.70, 234.45, 361.78, 400.61, 466.35, 478.87),
            strict=True),
    )
    + _rows(
        "hgx-h200", None, "auto", "2.20.5", _AZ_H200,
        zip(_AZURE_SIZES, (0.06, 3.72, 52.96, 240.41, 368.11, 412.45, 467.58, 479.98),
            strict=True),
    )
    + _rows(
        "gb200-nvl72", 4, "nccl:ring", "2.25.1", _AZ_GB200,
        zip(_AZURE_SIZES, (0.10, 5.71, 80.48, 331.09, 550.73, 574.19, 646.87, 679.61),
            strict=True),
        ran="Ring (forced); protocol not stated",
    )
    + _rows(
        "gb200-nvl72", None, "auto", "2.26.2", _CW_RACK1,
        ((512 * MiB, 586.06), (1 * GiB, 681.17), (8 * GiB, 834.57)),
    )
    + _rows(
        "gb200-nvl72:2", None, "auto", "2.26.2", _CW_RACK2,
        ((512 * MiB, 493.94), (1 * GiB, 596.10), (16 * GiB, 810.41)),
        _CW_SHARP,
    )
    + _rows(
        "gb200-nvl72:20", None, "auto", "2.26.2", _CW_RACK20,
        ((512 * MiB, 150.95), (1 * GiB, 218.85), (16 * GiB, 405.74)),
        _CW_SHARP,
    )
    + _rows(
        "h100-cluster:2", None, "auto", "not stated (2026-05-26)", _CW_92, ((8 * GiB, 440.58),)
    )
    + _rows(
        "b200-cluster:2", None, "auto", "not stated (2026-05-26)", _CW_92, ((8 * GiB, 690.07),)
    )
    + [
        PublishedRow(
            "dgx-h100", None, "nccl:ring", 8 * GiB, 370.0, "not stated (2024-05-06)",
            "https://github.com/NVIDIA/nccl-tests/issues/212 (NVIDIA maintainer: with the "
            "protocol overhead NCCL gets an effective NVLink bandwidth of 370 GB/s, seen as "
            "busbw with NCCL_ALGO=RING)",
            "peak, large sizes",
            "Ring (NCCL_ALGO=RING)",
        ),
        PublishedRow(
            "dgx-h100", None, "auto", 8 * GiB, 480.0, "not stated (2024-05-06)",
            "https://github.com/NVIDIA/nccl-tests/issues/212 (NVIDIA maintainer: NVLink SHARP "
            "all-reduce on 8 GPUs peaks at a busbw of about 480 GB/s)",
            "peak, large sizes",
            "NVLS (NVLink SHARP)",
        ),
        PublishedRow(
            "h100-cluster:2", None, "nccl:ring", 8 * GiB, 376.0, "not stated (2025-03-03)",
            "https://github.com/NVIDIA/nccl-tests/issues/290 (NVIDIA maintainer: NDR 400 Gb/s "
            "NICs give 46-48 GB/s each with NCCL_ALGO=RING on two nodes)",
            "8 NICs x 46-48 GB/s = 368-384 GB/s ring busbw",
            "Ring (NCCL_ALGO=RING)",
        ),
        PublishedRow(
            "a100-cluster:2", None, "nccl:ring", 8 * GiB, 192.0, "not stated (2023-03-31)",
            "https://github.com/NVIDIA/nccl/issues/812 (NVIDIA maintainer: on DGX A100 with "
            "8x 200 Gb/s IB we measure 192 GB/s all-reduce busbw)",
            "peak, large sizes; node count not stated, compared as 2 nodes with a ring",
            "not stated (192 = 8 NICs x 24 GB/s, a ring's NIC bound, in a thread on ring vs "
            "tree)",
        ),
    ]
)  # fmt: skip

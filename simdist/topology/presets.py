"""The preset registry: ``get_topology("v4-32")``, ``list_topologies()``.

Names:

* ``pcie-8gpu``, ``dgx-a100``, ``dgx-h100`` (one host of 8 GPUs);
* ``a100-cluster[:NODES[:NICS]]``, ``h100-cluster[:NODES[:NICS]]``: DGX nodes over
  InfiniBand (defaults 2 nodes, 8 NICs per node); ``dgx-h100-ib`` is ``h100-cluster:2:8``;
* TPU slices as Google names accelerator types: ``v3-N``, ``v4-N``, ``v5p-N`` (N counts
  TensorCores, 2 per chip) and ``v5litepod-N`` / ``v5e-N`` (N counts chips).

Names are case-insensitive. Each call builds a fresh :class:`Topology`.
"""

from __future__ import annotations

from simdist.topology import gpu, tpu
from simdist.topology.model import Topology

__all__ = ["get_topology", "list_topologies"]

_FIXED = {
    "pcie-8gpu": (gpu.pcie_8gpu, "8x A100 80GB PCIe Gen4 behind two PCIe switches, one host"),
    "dgx-a100": (gpu.dgx_a100, "NVIDIA DGX A100: 8x A100 SXM4 80GB on NVSwitch (NVLink 3)"),
    "dgx-h100": (gpu.dgx_h100, "NVIDIA DGX H100: 8x H100 SXM5 80GB on NVSwitch (NVLink 4)"),
    "dgx-h100-ib": (
        lambda: gpu.h100_cluster(2, 8),
        "2x DGX H100 over NDR 400 Gb/s InfiniBand (= h100-cluster:2:8)",
    ),
}
_CLUSTERS = {
    "a100-cluster": (gpu.a100_cluster, "DGX A100 nodes over HDR 200 Gb/s InfiniBand"),
    "h100-cluster": (gpu.h100_cluster, "DGX H100 nodes over NDR 400 Gb/s InfiniBand"),
}
_TPU_EXAMPLES = ("v3-8", "v3-32", "v4-8", "v4-32", "v4-128", "v5litepod-16", "v5litepod-256",
                 "v5p-8", "v5p-128")  # fmt: skip


def _valid_names() -> str:
    return (
        ", ".join(_FIXED)
        + ", a100-cluster[:NODES[:NICS]], h100-cluster[:NODES[:NICS]], "
        + "v3-N, v4-N, v5p-N (N = TensorCores), v5litepod-N / v5e-N (N = chips)"
    )


def _parse_int(text: str, what: str, name: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"topology {name!r}: {what} must be a positive integer, got {text!r}")
    return int(text)


def get_topology(name: str) -> Topology:
    """The preset topology called ``name`` (sizes parsed from the name).

    Args:
        name: e.g. ``"dgx-h100"``, ``"h100-cluster:4"``, ``"h100-cluster:4:4"``, ``"v4-32"``,
            ``"v5litepod-16"``.

    Returns:
        A freshly built :class:`Topology`.

    Raises:
        ValueError: an unknown name (the message lists the valid ones) or a bad size.
    """
    if not isinstance(name, str):
        raise TypeError(f"topology name must be a str, got {type(name).__name__}")
    key = name.strip().lower()
    if key in _FIXED:
        return _FIXED[key][0]()
    base, _, rest = key.partition(":")
    if base in _CLUSTERS:
        parts = rest.split(":") if rest else []
        if len(parts) > 2:
            raise ValueError(f"topology {name!r}: use {base}[:NODES[:NICS_PER_NODE]]")
        nodes = _parse_int(parts[0], "NODES", name) if parts else 2
        nics = _parse_int(parts[1], "NICS_PER_NODE", name) if len(parts) > 1 else 8
        return _CLUSTERS[base][0](nodes, nics)
    parsed = tpu.parse_tpu_name(key)
    if parsed is not None:
        generation, chips = parsed
        return tpu.tpu_slice(generation, chips)
    raise ValueError(f"unknown topology {name!r}; valid names: {_valid_names()}")


def list_topologies() -> list[tuple[str, str]]:
    """``(name, one-line description)`` for every fixed preset and example sized ones."""
    rows = [(n, desc) for n, (_, desc) in _FIXED.items()]
    for base, (_, desc) in _CLUSTERS.items():
        rows.append((f"{base}:2", desc + " (NODES[:NICS], default 2 nodes x 8 NICs)"))
    for example in _TPU_EXAMPLES:
        generation, chips = tpu.parse_tpu_name(example)
        shape = "x".join(map(str, tpu.TPU_SHAPES[generation][chips]))
        per_chip = tpu.TPU_TENSORCORES_PER_CHIP[generation]
        rows.append(
            (
                example,
                f"Cloud TPU {generation} slice: {chips} chips ({shape}), "
                f"{per_chip} TensorCore(s) per chip",
            )
        )
    return rows

"""The preset registry: ``get_topology("v4-32")``, ``list_topologies()``.

Names:

* ``pcie-8gpu``, ``dgx-a100``, ``dgx-h100`` (one host of 8 GPUs);
* ``pcie5-8gpu``, ``hgx-h200``, ``dgx-b200`` (one host of 8 GPUs);
* ``a100-cluster``, ``h100-cluster``, ``h100-roce-cluster``, ``h200-cluster``,
  ``b200-cluster`` ``[:NODES[:NICS]]``: 8-GPU nodes over InfiniBand or RoCE (defaults 2
  nodes, 8 NICs per node); ``dgx-h100-ib`` is ``h100-cluster:2:8``;
* ``gb200-nvl72[:RACKS]``: GB200 NVL72 racks (one 72-GPU NVLink domain each);
* TPU slices as Google names accelerator types: ``v3-N``, ``v4-N``, ``v5p-N`` (N counts
  TensorCores, 2 per chip) and ``v5litepod-N`` / ``v5e-N`` (N counts chips).

Names are case-insensitive. Each call builds a fresh :class:`Topology`.
"""

from __future__ import annotations

from simdist.topology import gpu, tpu
from simdist.topology.model import MAX_DEVICES, Topology, check_device_count

__all__ = ["get_topology", "list_topologies"]

_FIXED = {
    "pcie-8gpu": (
        lambda: gpu.gpu_box("pcie-8gpu", "pcie-8gpu"),
        "8x A100 80GB PCIe Gen4 behind two PCIe switches, one host",
    ),
    "pcie5-8gpu": (
        lambda: gpu.gpu_box("pcie5-8gpu", "pcie5-8gpu"),
        "8x H100 80GB PCIe Gen5 behind two PCIe switches, one host",
    ),
    "dgx-a100": (
        lambda: gpu.gpu_box("a100", "dgx-a100"),
        "NVIDIA DGX A100: 8x A100 SXM4 80GB on NVSwitch (NVLink 3)",
    ),
    "dgx-h100": (
        lambda: gpu.gpu_box("h100", "dgx-h100"),
        "NVIDIA DGX H100: 8x H100 SXM5 80GB on NVSwitch (NVLink 4, NVLink SHARP)",
    ),
    "hgx-h200": (
        lambda: gpu.gpu_box("h200", "hgx-h200"),
        "NVIDIA HGX/DGX H200: 8x H200 SXM 141GB on NVSwitch (NVLink 4, NVLink SHARP)",
    ),
    "dgx-b200": (
        lambda: gpu.gpu_box("b200", "dgx-b200"),
        "NVIDIA DGX B200: 8x B200 on NVSwitch (NVLink 5, NVLink SHARP)",
    ),
    "dgx-h100-ib": (
        lambda: gpu.gpu_cluster("h100", 2, 8, "h100-cluster:2:8"),
        "2x DGX H100 over NDR 400 Gb/s InfiniBand (= h100-cluster:2:8)",
    ),
}
# name -> (platform key, description); sized as NAME[:NODES[:NICS]]
_CLUSTERS = {
    "a100-cluster": ("a100", "DGX A100 nodes over HDR 200 Gb/s InfiniBand"),
    "h100-cluster": ("h100", "DGX H100 nodes over NDR 400 Gb/s InfiniBand"),
    "h100-roce-cluster": ("h100-roce", "HGX H100 nodes over 400 Gb/s RoCE Ethernet"),
    "h200-cluster": ("h200", "DGX H200 nodes over NDR 400 Gb/s InfiniBand"),
    "b200-cluster": ("b200", "DGX B200 nodes over NDR 400 Gb/s InfiniBand"),
    "gb200-nvl72": ("gb200", "GB200 NVL72 racks (72 GPUs per NVLink domain) over 400 Gb/s IB"),
}
_DEFAULT_NODES = {"gb200-nvl72": 1}
_TPU_EXAMPLES = ("v3-8", "v3-32", "v4-8", "v4-32", "v4-128", "v5litepod-16", "v5litepod-256",
                 "v5p-8", "v5p-128")  # fmt: skip


def _valid_names() -> str:
    return (
        ", ".join(_FIXED)
        + ", "
        + ", ".join(f"{name}[:NODES[:NICS]]" for name in _CLUSTERS)
        + ", v3-N, v4-N, v5p-N (N = TensorCores), v5litepod-N / v5e-N (N = chips)"
    )


def _parse_int(text: str, what: str, name: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"topology {name!r}: {what} must be a positive integer, got {text!r}")
    return int(text)


def _check_size(name: str, devices: int, max_devices: int | None) -> None:
    check_device_count(f"topology {name!r}", devices, max_devices)


def get_topology(name: str, max_devices: int | None = MAX_DEVICES) -> Topology:
    """The preset topology called ``name`` (sizes parsed from the name).

    Args:
        name: e.g. ``"dgx-h100"``, ``"h100-cluster:4"``, ``"h100-cluster:4:4"``, ``"v4-32"``,
            ``"v5litepod-16"``, ``"gb200-nvl72:2"``.
        max_devices: refuse sized presets with more devices than this (default
            :data:`MAX_DEVICES`); None lifts the cap.

    Returns:
        A freshly built :class:`Topology`.

    Raises:
        ValueError: an unknown name (the message lists the valid ones), a bad size, or more
            devices than ``max_devices``.
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
        nodes = _parse_int(parts[0], "NODES", name) if parts else _DEFAULT_NODES.get(base, 2)
        platform = gpu.PLATFORMS[_CLUSTERS[base][0]]
        nics = (
            _parse_int(parts[1], "NICS_PER_NODE", name)
            if len(parts) > 1
            else platform.nics_per_node
        )
        _check_size(name, nodes * platform.gpus_per_node, max_devices)
        if platform.gpus_per_node % nics:
            raise ValueError(
                f"topology {name!r}: NICS_PER_NODE={nics} must divide the "
                f"{platform.gpus_per_node} GPUs per node"
            )
        label = f"{base}:{nodes}:{nics}"
        if nodes == 1 and len(parts) < 2 and base == "gb200-nvl72":
            label = base
        return gpu.gpu_cluster(_CLUSTERS[base][0], nodes, nics, label)
    parsed = tpu.parse_tpu_name(key)
    if parsed is not None:
        generation, chips = parsed
        _check_size(name, chips, max_devices)
        return tpu.tpu_slice(generation, chips)
    raise ValueError(f"unknown topology {name!r}; valid names: {_valid_names()}")


def list_topologies() -> list[tuple[str, str]]:
    """``(name, one-line description)`` for every fixed preset and example sized ones."""
    rows = [(n, desc) for n, (_, desc) in _FIXED.items()]
    for base, (key, desc) in _CLUSTERS.items():
        nodes = _DEFAULT_NODES.get(base, 2)
        nics = gpu.PLATFORMS[key].nics_per_node
        rows.append(
            (
                f"{base}:{nodes}",
                desc + f" (NODES[:NICS], default {nodes} node(s) x {nics} NICs per node)",
            )
        )
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

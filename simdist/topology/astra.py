"""ASTRA-sim analytical network files (``network.yml``) as simdist topologies.

ASTRA-sim analytical network files (``network.yml``): ``topology`` (``Ring``,
``FullyConnected``, ``Switch`` per dimension), ``npus_count``, ``bandwidth`` (GB/s per link
and direction; ASTRA-sim's analytical backend takes 1 GB = 2**30 B, and so does simdist) and
``latency`` (ns per link). They are parsed with PyYAML when it is installed
(``pip install 'simdist[yaml]'``); without it, simdist reads the flat ``key: value`` /
``key: [a, b]`` form those files use and raises ImportError naming the extra for anything
else. The network becomes :func:`simdist.topology.hierarchy.multi_dim`.
"""

from __future__ import annotations

import math
import os

from simdist.topology import hierarchy
from simdist.topology.model import MAX_DEVICES, Device, Topology, check_device_count

__all__ = ["ASTRA_GB", "load_astra_network", "parse_astra_network", "read_text"]

ASTRA_GB = 2**30  # ASTRA-sim analytical: bw_GBps_to_Bpns uses 1 GB = 2^30 B


def load_astra_network(
    path, *, device: Device | None = None, max_devices: int | None = MAX_DEVICES
) -> Topology:
    """Load an ASTRA-sim analytical network file (``network.yml``); see the module doc."""
    text = read_text(path)
    stem = os.path.splitext(os.path.basename(str(path)))[0]
    return parse_astra_network(text, name=f"astra:{stem}", device=device, max_devices=max_devices)


def read_text(path) -> str:
    """The UTF-8 text of a topology file.

    Raises:
        ValueError: the file is not UTF-8 text (the message gives the byte).
        OSError: the file cannot be read (missing, a directory, no permission).
    """
    with open(path, "rb") as f:
        data = f.read()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        byte = data[error.start : error.start + 1]
        raise ValueError(
            f"{path}: not UTF-8 text (byte {error.start} is {byte!r}); a topology file is JSON "
            "or YAML text"
        ) from None


def parse_astra_network(
    text: str,
    *,
    name: str = "astra",
    device: Device | None = None,
    max_devices: int | None = MAX_DEVICES,
) -> Topology:
    """Build the topology an ASTRA-sim analytical network YAML text describes.

    Raises:
        ValueError: a missing or malformed key (named in the message).
        ImportError: the text needs a full YAML parser and PyYAML is not installed.
    """
    data = _read_yaml(text)
    if not isinstance(data, dict):
        raise ValueError("ASTRA-sim network: the file must be a mapping of keys to values")
    for key in ("topology", "npus_count", "bandwidth", "latency"):
        if key not in data:
            raise ValueError(
                f"{key}: missing (ASTRA-sim network files need topology, "
                "npus_count, bandwidth and latency)"
            )
    lists = {}
    for key in ("topology", "npus_count", "bandwidth", "latency"):
        value = data[key]
        lists[key] = list(value) if isinstance(value, (list, tuple)) else [value]
    for i, count in enumerate(lists["npus_count"]):
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"npus_count[{i}]: must be a positive integer, got {count!r}")
    check_device_count(f"ASTRA-sim network {name!r}", math.prod(lists["npus_count"]), max_devices)
    for key in ("bandwidth", "latency"):
        for i, v in enumerate(lists[key]):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"{key}[{i}]: must be a number, got {v!r}")
            if key == "bandwidth" and v <= 0:
                raise ValueError(f"bandwidth[{i}]: must be > 0 GB/s, got {v!r}")
            if key == "latency" and v < 0:
                raise ValueError(f"latency[{i}]: must be >= 0 ns, got {v!r}")
    for i, kind in enumerate(lists["topology"]):
        if kind not in ("Ring", "FullyConnected", "Switch"):
            raise ValueError(
                f"topology[{i}]: {kind!r} is not supported; use Ring, FullyConnected or Switch"
            )
    return hierarchy.multi_dim(
        lists["topology"],
        lists["npus_count"],
        [b * ASTRA_GB for b in lists["bandwidth"]],
        [lat * 1e-9 for lat in lists["latency"]],
        device=device,
        name=name,
        sources=(
            "ASTRA-sim analytical network file: bandwidth in GB/s with 1 GB = 2^30 B "
            "(astra-network-analytical bw_GBps_to_Bpns), latency in ns",
        ),
    )


def _read_yaml(text: str):
    try:
        import yaml
    except ImportError:
        return _read_flat_yaml(text)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"ASTRA-sim network: not valid YAML: {e}") from None


def _read_flat_yaml(text: str) -> dict:
    """The ``key: scalar`` / ``key: [a, b]`` subset of YAML (ASTRA-sim's network files)."""
    data = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep or raw[0] in " \t-" or not key.strip():
            raise ImportError(
                f"line {number} ({raw.strip()!r}) needs a full YAML parser; "
                "install PyYAML: pip install 'simdist[yaml]'"
            )
        value = value.strip()
        if value.startswith("["):
            if not value.endswith("]"):
                raise ImportError(
                    f"line {number}: a list spanning lines needs a full YAML parser; "
                    "install PyYAML: pip install 'simdist[yaml]'"
                )
            inner = value[1:-1].strip()
            data[key.strip()] = [_scalar(v.strip()) for v in inner.split(",")] if inner else []
        else:
            data[key.strip()] = _scalar(value)
    return data


def _scalar(text: str):
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text.strip("'\"")

"""The algorithm registry: which algorithms apply to which collective, and plan building.

| collective     | algorithms |
| -------------- | ---------- |
| all_reduce     | ring, double_binary_tree, recursive_doubling, recursive_halving_doubling, direct, hierarchical, ring_per_dimension, reduce_broadcast |
| reduce_scatter | ring, recursive_halving_doubling, direct, ring_per_dimension |
| all_gather     | ring, recursive_doubling, direct, ring_per_dimension |
| broadcast      | ring, recursive_doubling, direct |
| reduce         | ring, recursive_doubling, direct |
| all_to_all     | direct, pairwise |

``chunks`` (pipeline pieces) applies to ``double_binary_tree`` and to ``ring`` broadcast /
reduce; every other algorithm's chunking is fixed by ``p`` (see each module).
"""  # noqa: E501

from __future__ import annotations

import functools

from simdist.collectives import direct, recursive, ring, tree
from simdist.collectives.plan import Plan, Spec

__all__ = ["COLLECTIVES", "ALGORITHMS", "PIPELINED", "build_plan"]

COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce", "all_to_all")

_BUILDERS = {
    "ring": ring.ring,
    "double_binary_tree": tree.double_binary_tree,
    "recursive_doubling": recursive.recursive_doubling,
    "recursive_halving_doubling": recursive.recursive_halving_doubling,
    "direct": direct.direct,
    "pairwise": direct.pairwise,
    "hierarchical": ring.hierarchical,
    "ring_per_dimension": ring.ring_per_dimension,
    "reduce_broadcast": direct.reduce_broadcast,
}

ALGORITHMS: dict[str, tuple[str, ...]] = {
    "all_reduce": (
        "ring",
        "double_binary_tree",
        "recursive_doubling",
        "recursive_halving_doubling",
        "direct",
        "hierarchical",
        "ring_per_dimension",
        "reduce_broadcast",
    ),
    "reduce_scatter": ("ring", "recursive_halving_doubling", "direct", "ring_per_dimension"),
    "all_gather": ("ring", "recursive_doubling", "direct", "ring_per_dimension"),
    "broadcast": ("ring", "recursive_doubling", "direct"),
    "reduce": ("ring", "recursive_doubling", "direct"),
    "all_to_all": ("direct", "pairwise"),
}

# (collective, algorithm) pairs that accept chunks > 1
PIPELINED = {
    ("all_reduce", "double_binary_tree"),
    ("broadcast", "ring"),
    ("reduce", "ring"),
}


@functools.lru_cache(maxsize=256)
def build_plan(spec: Spec) -> Plan:
    """The plan for a validated spec (cached: plans are immutable)."""
    return _BUILDERS[spec.algorithm](spec)

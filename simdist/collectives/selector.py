"""Choosing an algorithm the way NCCL does: by message size and topology, overridable.

Rules, first match wins (``p`` ranks, ``nbytes`` per rank):

1. an explicit ``algorithm=`` argument;
2. the environment variable ``SIMDIST_COLLECTIVE_ALGO``: either one algorithm name
   (``"ring"``: used for every collective it applies to) or comma-separated
   ``collective=algorithm`` entries (``"all_reduce=double_binary_tree,all_gather=direct"``);
3. ``p == 1``: ``ring`` (nothing is sent; ``direct`` for all-to-all);
4. a 2D/3D torus (``topology.torus_dims`` of length >= 2 covering all ranks):
   ``ring_per_dimension`` for all-reduce, reduce-scatter and all-gather;
5. several hosts of equal size: all-reduce uses ``double_binary_tree`` below
   :data:`TREE_MAX_BYTES` (latency-bound: ``2 log p`` steps beat ``2(p-1)``) and
   ``hierarchical`` from there on (inter-host traffic is ``1/L`` of a flat ring's);
6. a single host behind a switch (``topology.switches`` non-empty): ``direct`` (one step)
   up to :data:`SMALL_MAX_BYTES`, then ``ring``;
7. otherwise (no topology, or point-to-point links): up to :data:`SMALL_MAX_BYTES`
   ``recursive_doubling`` (all-reduce, all-gather) / ``recursive_halving_doubling``
   (reduce-scatter); above it ``ring``.

Broadcast and reduce use ``direct`` behind a switch and the binomial tree
(``recursive_doubling``) otherwise; all-to-all uses ``direct`` behind a switch or up to
:data:`SMALL_MAX_BYTES`, else ``pairwise``. (The ring chain for broadcast/reduce only pays
off pipelined, so it is chosen only explicitly, with ``chunks``.)
"""

from __future__ import annotations

from simdist import settings
from simdist.collectives.algorithms import ALGORITHMS, COLLECTIVES

__all__ = ["SMALL_MAX_BYTES", "TREE_MAX_BYTES", "ENV_VAR", "select_algorithm"]

SMALL_MAX_BYTES = 64 * 1024  # latency-bound messages: fewest steps wins
TREE_MAX_BYTES = 256 * 1024  # multi-host: tree below, hierarchical ring from here on
ENV_VAR = settings.env_name("collective_algo")


def _check(collective: str, algorithm: str, where: str) -> str:
    if algorithm not in ALGORITHMS[collective]:
        raise ValueError(
            f"{where}: algorithm {algorithm!r} does not apply to {collective}; "
            f"choose one of {', '.join(ALGORITHMS[collective])}"
        )
    return algorithm


def _from_env(collective: str) -> str | None:
    text = settings.get().collective_algo
    if not text:
        return None
    every = {name for names in ALGORITHMS.values() for name in names}
    for entry in (e.strip() for e in text.split(",") if e.strip()):
        if "=" in entry:
            name, algorithm = (s.strip() for s in entry.split("=", 1))
            if name not in COLLECTIVES:
                raise ValueError(
                    f"{ENV_VAR}={text!r}: unknown collective {name!r}; use one of "
                    f"{', '.join(COLLECTIVES)}"
                )
            if name == collective:
                return _check(collective, algorithm, f"{ENV_VAR}={text!r}")
        else:
            if entry not in every:
                raise ValueError(
                    f"{ENV_VAR}={text!r}: unknown algorithm {entry!r}; use one of "
                    f"{', '.join(sorted(every))}"
                )
            if entry in ALGORITHMS[collective]:
                return entry
    return None


def _equal_hosts(topology) -> bool:
    sizes: dict[int, int] = {}
    for device in topology.devices:
        sizes[device.host] = sizes.get(device.host, 0) + 1
    return len(sizes) > 1 and len(set(sizes.values())) == 1


def select_algorithm(
    collective: str,
    nbytes: int,
    topology=None,
    *,
    num_ranks: int | None = None,
    algorithm: str | None = None,
) -> str:
    """The algorithm to run ``collective`` on ``nbytes`` per rank (rules: module docstring).

    Args:
        collective: one of ``COLLECTIVES``.
        nbytes: bytes of each rank's input buffer.
        topology: a :class:`~simdist.topology.model.Topology` (its shape decides), or None.
        num_ranks: the rank count when there is no topology.
        algorithm: an explicit choice; validated and returned.

    Returns:
        An algorithm name from ``ALGORITHMS[collective]``.

    Raises:
        ValueError: unknown collective, or an explicit / environment choice that does not
            apply to it.
    """
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; use one of {', '.join(COLLECTIVES)}")
    if algorithm is not None:
        return _check(collective, algorithm, "algorithm=")
    chosen = _from_env(collective)
    if chosen is not None:
        return chosen
    p = topology.num_devices if topology is not None else (num_ranks or 1)
    small = nbytes <= SMALL_MAX_BYTES
    switched = topology is not None and len(topology.switches) > 0
    if collective == "all_to_all":
        return "direct" if (p == 1 or switched or small) else "pairwise"
    if p == 1:
        return "ring"
    if collective in ("broadcast", "reduce"):
        return "direct" if switched else "recursive_doubling"
    dims = tuple(topology.torus_dims) if topology is not None else ()
    if len(dims) >= 2 and _product(dims) == p:
        return "ring_per_dimension"
    if topology is not None and collective == "all_reduce" and _equal_hosts(topology):
        return "double_binary_tree" if nbytes < TREE_MAX_BYTES else "hierarchical"
    if switched and (topology.num_hosts == 1):
        return "direct" if small else "ring"
    if small:
        return {
            "all_reduce": "recursive_doubling",
            "all_gather": "recursive_doubling",
            "reduce_scatter": "recursive_halving_doubling",
        }[collective]
    return "ring"


def _product(values) -> int:
    out = 1
    for v in values:
        out *= int(v)
    return out

"""The forced all-reduce: one algorithm (or the exact sum) for every strategy's all-reduces.

``SIMDIST_FORCE_ALL_REDUCE`` (``settings.force_all_reduce``) names an all-reduce algorithm
or ``exact``; while it is set, every cross-device op (``NcclAllReduce``,
``HierarchicalCopyAllReduce``, ``ReductionToOneDevice``, a multi-worker strategy's
``CollectiveAllReduce``, the TPU's cross-replica sum) runs that algorithm instead of its
own choice, so one unmodified program can be replayed under each order of additions
(``simdist sensitivity``, :mod:`simdist.sim.sensitivity`). ``exact`` is the correctly
rounded exact sum of :mod:`simdist.collectives.reproducible`: the same bits for every
order. Empty (the default): each op chooses as it always does.

``ring_per_dimension`` is not offered: it needs a torus shape that only a TPU strategy has.

>>> from simdist import settings
>>> with settings.override(force_all_reduce="double_binary_tree"):
...     forced_all_reduce()
'double_binary_tree'
>>> forced_all_reduce() is None
True
"""

from __future__ import annotations

from simdist import settings
from simdist.collectives.algorithms import ALGORITHMS

__all__ = ["EXACT", "FORCEABLE", "forced_all_reduce"]

EXACT = "exact"
FORCEABLE: tuple[str, ...] = tuple(
    name for name in ALGORITHMS["all_reduce"] if name != "ring_per_dimension"
) + (EXACT,)


def forced_all_reduce() -> str | None:
    """The all-reduce algorithm every strategy must run now, or None (each op's own choice).

    Raises:
        ValueError: ``SIMDIST_FORCE_ALL_REDUCE`` names no forceable algorithm (the message
            lists them).
    """
    name = settings.get().force_all_reduce
    if not name:
        return None
    if name not in FORCEABLE:
        raise ValueError(
            f"{settings.env_name('force_all_reduce')}={name!r} is not an all-reduce algorithm "
            f"simdist can force; use one of {', '.join(FORCEABLE)} (or leave it empty)."
        )
    return name

"""Collective algorithms: deterministic schedules (for the cost model) and their arithmetic.

``schedule(...)`` gives the point-to-point steps an algorithm makes; ``execute(...)`` runs
the same steps' arithmetic on one array per rank, so results carry exactly that
algorithm's rounding; ``select_algorithm`` picks one like NCCL does; ``reproducible=True``
gives sums independent of rank count, order and algorithm.
"""

from simdist.collectives.algorithms import ALGORITHMS as ALGORITHMS
from simdist.collectives.algorithms import COLLECTIVES as COLLECTIVES
from simdist.collectives.api import algorithms_for as algorithms_for
from simdist.collectives.api import execute as execute
from simdist.collectives.api import reduce_arrays as reduce_arrays
from simdist.collectives.api import schedule as schedule
from simdist.collectives.plan import Plan as Plan
from simdist.collectives.plan import piece_bounds as piece_bounds
from simdist.collectives.schedule import Schedule as Schedule
from simdist.collectives.schedule import Transfer as Transfer
from simdist.collectives.selector import select_algorithm as select_algorithm

__all__ = [
    "ALGORITHMS",
    "COLLECTIVES",
    "Plan",
    "Schedule",
    "Transfer",
    "algorithms_for",
    "execute",
    "piece_bounds",
    "reduce_arrays",
    "schedule",
    "select_algorithm",
]

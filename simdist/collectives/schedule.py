"""A collective's schedule: who sends how many bytes to whom, in which step.

A :class:`Schedule` is the contract between the collective algorithms (which build it and
execute its arithmetic) and the cost model (which prices it on a topology):

* ranks are ``0 .. num_ranks - 1`` (replica order);
* ``steps`` run one after another; the transfers of one step run concurrently;
* a transfer may only send data its source holds after the earlier steps (the algorithms'
  tests check this), so step order is the data dependency;
* ``nbytes`` counts payload bytes; ``reduce=True`` means the receiver adds what it receives
  into its buffer (a reduction), ``False`` that it stores it (a copy).
"""

from __future__ import annotations

import dataclasses
import typing

__all__ = ["Transfer", "Schedule"]


class Transfer(typing.NamedTuple):
    """One point-to-point message of one step (a named tuple: a 4,096-chip plan makes
    hundreds of thousands, three times faster than a frozen dataclass)."""

    src: int
    dst: int
    nbytes: int
    chunk: int = 0  # which piece of the buffer travels (algorithm-defined index)
    reduce: bool = False


@dataclasses.dataclass(frozen=True)
class Schedule:
    """The steps of one collective call over ``num_ranks`` ranks of ``nbytes`` each."""

    # "all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce" or "all_to_all"
    collective: str
    algorithm: str  # "ring", "double_binary_tree", "recursive_doubling", ...
    num_ranks: int
    nbytes: int  # bytes of each rank's input buffer
    steps: tuple[tuple[Transfer, ...], ...]

    @property
    def bytes_sent(self) -> int:
        return sum(t.nbytes for step in self.steps for t in step)

    @property
    def bytes_sent_per_rank(self) -> tuple[int, ...]:
        """Payload bytes each rank sends over the whole schedule (rank order)."""
        sent = [0] * self.num_ranks
        for step in self.steps:
            for t in step:
                sent[t.src] += t.nbytes
        return tuple(sent)

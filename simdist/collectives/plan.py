"""Plans: the one description of an algorithm that both the executor and the pricer read.

An algorithm builds a :class:`Plan`: each rank's working buffer (a flat array of ``width``
elements), a table of *segments* (element ranges of that buffer), and steps of
:class:`Move` s — "rank ``src`` sends its segment ``src_seg`` to rank ``dst``, which stores
it into (``reduce=False``) or reduces it into (``reduce=True``) its segment ``dst_seg``".
:meth:`Plan.to_schedule` turns moves into :class:`~simdist.collectives.schedule.Transfer` s
(byte counts only) for the cost model; :mod:`simdist.collectives.executor` applies the very
same moves to real arrays. The two therefore cannot disagree.

Semantics of a step (the executor and the tests' symbolic checker both implement them):

* every move of a step reads its source as it was *before* the step (sends are concurrent);
* moves into the same destination are applied in the order they are listed in the step —
  this order, plus the step order, is each algorithm's documented order of additions.

Chunking rule: ``piece_bounds(n, k)`` splits ``n`` elements into ``k`` consecutive pieces
whose sizes differ by at most one, the first ``n % k`` pieces one element longer
(``numpy.array_split``'s rule), so the split is deterministic and needs no padding.
"""

from __future__ import annotations

import dataclasses
import typing

import numpy as np

from simdist.collectives.schedule import Schedule, Transfer

__all__ = ["Move", "Plan", "Builder", "piece_bounds"]


def piece_bounds(n: int, k: int) -> list[int]:
    """The ``k + 1`` boundaries of ``n`` elements split into ``k`` near-equal pieces.

    Example: ``piece_bounds(10, 4) == [0, 3, 6, 8, 10]`` (sizes 3, 3, 2, 2).
    """
    base, extra = divmod(n, k)
    return [i * base + min(i, extra) for i in range(k + 1)]


class Move(typing.NamedTuple):
    """One point-to-point message: ``src``'s segment ``src_seg`` into ``dst``'s ``dst_seg``."""

    src: int
    dst: int
    src_seg: int
    dst_seg: int
    reduce: bool


@dataclasses.dataclass(frozen=True)
class Plan:
    """An algorithm's complete description for ``num_ranks`` ranks of ``elems`` elements.

    Attributes:
        inputs: per rank, the segment where its input sits before step 0.
        local: ``(rank, src_seg, dst_seg)`` copies a rank makes in its own memory before
            step 0 (all-to-all keeps its own block); not messages, so not in the schedule.
        outputs: per rank, the segment holding its result (``None``: no result, e.g. the
            non-root ranks of ``reduce``).
        finish: ``""`` or ``"reduce_slots"``: every rank then reduces the ``finish_segs``
            of its buffer in that order (the one-shot ``direct`` all-reduce / reduce).
        atom_bounds, seg_atoms: the finest partition of the buffer that every segment
            respects, and each segment's atom range (derived, not compared).
    """

    collective: str
    algorithm: str
    num_ranks: int
    elems: int
    width: int
    segments: tuple[tuple[int, int], ...]
    inputs: tuple[int, ...]
    local: tuple[tuple[int, int, int], ...]
    steps: tuple[tuple[Move, ...], ...]
    outputs: tuple[int | None, ...]
    finish: str = ""
    finish_segs: tuple[int, ...] = ()
    atom_bounds: np.ndarray = dataclasses.field(default=None, compare=False, repr=False)
    seg_atoms: tuple[tuple[int, int], ...] = dataclasses.field(default=(), compare=False)

    def to_schedule(self, itemsize: int = 1) -> Schedule:
        """The plan's messages as a :class:`Schedule` (``chunk`` = the source segment id)."""
        sizes = [(stop - start) * itemsize for start, stop in self.segments]
        all_reduce = self.finish == "reduce_slots"
        make = Transfer
        steps = tuple(
            tuple(
                make(m.src, m.dst, sizes[m.src_seg], m.src_seg, m.reduce or all_reduce)
                for m in step
            )
            for step in self.steps
        )
        return Schedule(
            collective=self.collective,
            algorithm=self.algorithm,
            num_ranks=self.num_ranks,
            nbytes=self.elems * itemsize,
            steps=steps,
        )


class Builder:
    """Accumulates segments and moves; phases place moves at explicit step indices.

    Concurrent phases (e.g. one ring per host) write to the same step indices; sequential
    phases start where the previous one ended (the phase helpers return their end step).
    """

    def __init__(
        self, collective: str, algorithm: str, num_ranks: int, elems: int, width: int | None = None
    ) -> None:
        self.collective = collective
        self.algorithm = algorithm
        self.num_ranks = num_ranks
        self.elems = elems
        self.width = elems if width is None else width
        self._segs: dict[tuple[int, int], int] = {}
        self._seg_list: list[tuple[int, int]] = []
        self._steps: list[list[Move]] = []
        self.local: list[tuple[int, int, int]] = []

    def seg(self, start: int, stop: int) -> int:
        """The id of the element range ``[start, stop)`` (registered on first use)."""
        key = (int(start), int(stop))
        if key not in self._segs:
            self._segs[key] = len(self._seg_list)
            self._seg_list.append(key)
        return self._segs[key]

    def move(
        self,
        step: int,
        src: int,
        dst: int,
        seg: int,
        dst_seg: int | None = None,
        reduce: bool = False,
    ) -> None:
        """Appends a move to ``step`` (steps are created as needed)."""
        if src == dst:
            raise AssertionError(f"a move from rank {src} to itself")
        while len(self._steps) <= step:
            self._steps.append([])
        self._steps[step].append(Move(src, dst, seg, seg if dst_seg is None else dst_seg, reduce))

    def step_lists(self, first: int, count: int) -> list[list[Move]]:
        """The move lists of steps ``first .. first + count - 1`` (created as needed), for
        phase helpers that append many moves (faster than :meth:`move`)."""
        while len(self._steps) < first + count:
            self._steps.append([])
        return self._steps[first : first + count]

    @property
    def num_steps(self) -> int:
        return len(self._steps)

    def build(
        self,
        inputs: list[int],
        outputs: list[int | None],
        finish: str = "",
        finish_segs: tuple[int, ...] = (),
    ) -> Plan:
        """Freezes the plan, deriving the atom table."""
        if any(not step for step in self._steps):
            raise AssertionError(f"{self.algorithm}: a step without moves")
        segments = tuple(self._seg_list)
        cuts = sorted({b for s in segments for b in s} | {0, self.width})
        atom_bounds = np.asarray(cuts, dtype=np.int64)
        seg_atoms = tuple(
            (int(np.searchsorted(atom_bounds, a)), int(np.searchsorted(atom_bounds, b)))
            for a, b in segments
        )
        return Plan(
            collective=self.collective,
            algorithm=self.algorithm,
            num_ranks=self.num_ranks,
            elems=self.elems,
            width=self.width,
            segments=segments,
            inputs=tuple(inputs),
            local=tuple(self.local),
            steps=tuple(tuple(step) for step in self._steps),
            outputs=tuple(outputs),
            finish=finish,
            finish_segs=tuple(finish_segs),
            atom_bounds=atom_bounds,
            seg_atoms=seg_atoms,
        )


def ring_reduce_scatter(b: Builder, t0: int, ranks: list[int], segs: list[int]) -> int:
    """Ring reduce-scatter among ``ranks`` (ring order); ``ranks[i]`` ends owning ``segs[i]``.

    Step ``s`` (0-based): ``ranks[i]`` sends ``segs[(i - s - 1) % m]`` to ``ranks[i + 1]``,
    which adds it in. Segment ``c`` therefore accumulates
    ``((x[c+1] + x[c+2]) + x[c+3]) + ... + x[c]`` (positions mod ``m``). Returns the end step.
    """
    m = len(ranks)
    nxt = ranks[1:] + ranks[:1]
    reduce = [True] * m
    for s, moves in enumerate(b.step_lists(t0, m - 1)):
        k = (-s - 1) % m  # segs[(i - s - 1) % m] for i = 0 .. m-1
        sent = segs[k:] + segs[:k]
        moves.extend(map(Move, ranks, nxt, sent, sent, reduce))
    return t0 + max(m - 1, 0)


def ring_all_gather(b: Builder, t0: int, ranks: list[int], segs: list[int]) -> int:
    """Ring all-gather: ``ranks[i]`` starts owning ``segs[i]``; step ``s`` it forwards
    ``segs[(i - s) % m]`` to ``ranks[i + 1]`` (a copy). Returns the end step."""
    m = len(ranks)
    nxt = ranks[1:] + ranks[:1]
    copy = [False] * m
    for s, moves in enumerate(b.step_lists(t0, m - 1)):
        k = (-s) % m  # segs[(i - s) % m] for i = 0 .. m-1
        sent = segs[k:] + segs[:k]
        moves.extend(map(Move, ranks, nxt, sent, sent, copy))
    return t0 + max(m - 1, 0)


@dataclasses.dataclass(frozen=True)
class Spec:
    """What an algorithm is asked to plan (validated by the public entry points)."""

    collective: str
    algorithm: str
    num_ranks: int
    elems: int
    chunks: int = 1
    root: int = 0
    hosts: tuple[int, ...] = ()  # per rank, its host (hierarchical)
    dims: tuple[int, ...] = ()  # torus dimensions, row-major rank order (ring_per_dimension)


def standard_builder(spec: Spec) -> tuple[Builder, list[int], int]:
    """A builder with the collective's usual buffer layout.

    Returns ``(builder, inputs, whole)``: all-gather buffers hold ``p`` slots of ``elems``
    (rank ``r``'s input in slot ``r``); all-to-all buffers hold the input then the output
    (``2 * elems``); every other collective works in place on ``elems`` elements. ``whole``
    is the segment ``[0, elems)``.
    """
    p, n = spec.num_ranks, spec.elems
    if spec.collective == "all_gather":
        b = Builder(spec.collective, spec.algorithm, p, n, width=p * n)
        return b, [b.seg(r * n, (r + 1) * n) for r in range(p)], b.seg(0, n)
    width = 2 * n if spec.collective == "all_to_all" else n
    b = Builder(spec.collective, spec.algorithm, p, n, width=width)
    whole = b.seg(0, n)
    return b, [whole] * p, whole

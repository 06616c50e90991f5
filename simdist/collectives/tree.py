"""NCCL-style double binary tree all-reduce: two complementary trees, half the data each.

Tree A over ranks ``0 .. p-1``: rank 0 is the root; any other rank ``r`` with lowest set
bit ``b`` has parent ``(r - b) | 2b`` (``r`` with bit ``b`` cleared and bit ``2b`` set), or
``r - b`` if that is ``>= p``. Odd ranks are leaves, so tree A is an in-order binary tree of
depth about ``log2 p``. Tree B is tree A with ranks renamed ``r -> p - 1 - r`` when ``p`` is
even (its leaves are the even ranks: the internal nodes of one tree are leaves of the other)
and ``r -> (r + 1) % p`` when ``p`` is odd.

The buffer's first half (``piece_bounds(n, 2)``) is all-reduced on tree A, the second on
tree B, concurrently; each half is pipelined in ``chunks`` pieces. Per piece: reduce up the
tree (a node at depth ``d`` sends at step ``q + D - d``), then broadcast down (reaching depth
``d`` at step ``q + D - 1 + d``), with ``D`` the tree's depth.

Order of additions: post-order. Each node adds its children's finished subtree sums into
its own value, the smaller child rank first: ``S(v) = (x[v] + S(c1)) + S(c2)``. Example, 4
ranks holding ``x``: tree A is ``0 <- 2 <- {1, 3}``, so half A is
``x0 + ((x2 + x1) + x3)``; tree B is ``3 <- 1 <- {2, 0}``, so half B is
``x3 + ((x1 + x0) + x2)``; every rank ends with both halves.
"""

from __future__ import annotations

from simdist.collectives.plan import Plan, Spec, piece_bounds, standard_builder

__all__ = ["binary_tree_parents", "double_binary_tree"]


def binary_tree_parents(p: int) -> list[int]:
    """Tree A's parent of each rank (``-1`` for the root, rank 0)."""
    parents = [-1]
    for r in range(1, p):
        low = r & -r
        up = (r ^ low) | (low << 1)
        parents.append(up if up < p else r ^ low)
    return parents


def _rename(parents: list[int], name: list[int]) -> list[int]:
    """The same tree with rank ``r`` renamed ``name[r]``."""
    renamed = [0] * len(parents)
    for r, up in enumerate(parents):
        renamed[name[r]] = -1 if up < 0 else name[up]
    return renamed


def _depths(parents: list[int]) -> list[int]:
    depths = []
    for r in range(len(parents)):
        d, v = 0, r
        while parents[v] >= 0:
            v, d = parents[v], d + 1
        depths.append(d)
    return depths


def _tree_moves(b, parents: list[int], pieces: list[int]) -> None:
    depths = _depths(parents)
    depth = max(depths)
    children = {
        v: sorted(r for r in range(len(parents)) if parents[r] == v) for v in range(len(parents))
    }
    order = sorted(range(len(parents)), key=lambda v: (parents[v], v))
    for q, piece in enumerate(pieces):
        for v in order:  # reduce up: children of one parent listed smaller rank first
            if parents[v] >= 0:
                b.move(q + depth - depths[v], v, parents[v], piece, reduce=True)
        for v in range(len(parents)):  # broadcast down
            for child in children[v]:
                b.move(q + depth - 1 + depths[child], v, child, piece)


def double_binary_tree(spec: Spec) -> Plan:
    """The double binary tree all-reduce (see the module docstring)."""
    b, inputs, whole = standard_builder(spec)
    p, n, k = spec.num_ranks, spec.elems, spec.chunks
    tree_a = binary_tree_parents(p)
    name = [p - 1 - r for r in range(p)] if p % 2 == 0 else [(r + 1) % p for r in range(p)]
    tree_b = _rename(tree_a, name)
    bounds = piece_bounds(n, 2 * k)
    pieces = [b.seg(bounds[i], bounds[i + 1]) for i in range(2 * k)]
    if p > 1:
        _tree_moves(b, tree_a, pieces[:k])
        _tree_moves(b, tree_b, pieces[k:])
    return b.build(inputs, [whole] * p)

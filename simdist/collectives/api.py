"""The public entry points: ``schedule`` (for the cost model) and ``execute`` (the numbers).

Both build the same :class:`~simdist.collectives.plan.Plan`, so the bytes the cost model
prices are exactly the moves whose arithmetic ``execute`` performs.

Example (3 ranks, ring all-reduce; each rank's input and output)::

    >>> import numpy as np
    >>> out = execute("all_reduce", "ring", [np.array([1., 2., 3.]),
    ...                                      np.array([10., 20., 30.]),
    ...                                      np.array([100., 200., 300.])])
    >>> [o.tolist() for o in out]
    [[111.0, 222.0, 333.0], [111.0, 222.0, 333.0], [111.0, 222.0, 333.0]]
    >>> s = schedule("all_reduce", "ring", 3, 12)
    >>> len(s.steps), s.bytes_sent_per_rank  # 2(p-1) steps; 2(p-1)/p * 12 bytes per rank
    (4, (16, 16, 16))
"""

from __future__ import annotations

import numpy as np

from simdist.collectives import reproducible as _repro
from simdist.collectives.algorithms import ALGORITHMS, COLLECTIVES, PIPELINED, build_plan
from simdist.collectives.executor import rank_result, run_plan, supports_out
from simdist.collectives.plan import Spec
from simdist.collectives.schedule import Schedule
from simdist.collectives.selector import select_algorithm

__all__ = ["OPS", "schedule", "execute", "reduce_arrays", "make_spec"]

OPS = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}
_REDUCING = ("all_reduce", "reduce_scatter", "reduce")


def make_spec(
    collective: str,
    algorithm: str | None,
    num_ranks: int,
    elems: int,
    *,
    nbytes: int | None = None,
    topology=None,
    chunks: int | None = None,
    root: int = 0,
    ranks_per_node: int | None = None,
    torus_dims: tuple[int, ...] | None = None,
) -> Spec:
    """Validates the arguments shared by ``schedule`` and ``execute`` into a :class:`Spec`.

    Raises:
        ValueError: an unknown collective or algorithm, an algorithm that does not apply,
            a topology whose device count differs from ``num_ranks``, missing shape
            information (hosts, torus dims), a bad root or chunk count.
    """
    if collective not in COLLECTIVES:
        raise ValueError(f"unknown collective {collective!r}; use one of {', '.join(COLLECTIVES)}")
    if isinstance(num_ranks, bool) or not isinstance(num_ranks, (int, np.integer)) or num_ranks < 1:
        raise ValueError(f"num_ranks must be an int >= 1, got {num_ranks!r}")
    p = int(num_ranks)
    if topology is not None and topology.num_devices != p:
        raise ValueError(
            f"topology {topology.name!r} has {topology.num_devices} devices but the collective "
            f"runs on {p} ranks; pass a topology with one device per rank"
        )
    nb = elems if nbytes is None else nbytes
    algorithm = select_algorithm(collective, nb, topology, num_ranks=p, algorithm=algorithm)
    if chunks is None:
        chunks = 1
    if isinstance(chunks, bool) or not isinstance(chunks, (int, np.integer)) or chunks < 1:
        raise ValueError(f"chunks must be an int >= 1, got {chunks!r}")
    if chunks > 1 and (collective, algorithm) not in PIPELINED:
        raise ValueError(
            f"chunks={chunks}: {collective} with {algorithm!r} is not pipelined; chunks applies "
            f"to {sorted(PIPELINED)}"
        )
    if not 0 <= root < p:
        raise ValueError(f"root must be a rank in [0, {p}), got {root}")
    if collective == "all_to_all" and elems % p:
        raise ValueError(
            f"all_to_all splits each rank's {elems} elements into {p} equal blocks; use a "
            f"leading dimension that {p} divides"
        )
    hosts: tuple[int, ...] = ()
    if algorithm == "hierarchical":
        hosts = _hosts(p, topology, ranks_per_node)
    dims: tuple[int, ...] = ()
    if algorithm == "ring_per_dimension":
        dims = _dims(p, topology, torus_dims)
    return Spec(collective, algorithm, p, int(elems), int(chunks), int(root), hosts, dims)


def _hosts(p: int, topology, ranks_per_node: int | None) -> tuple[int, ...]:
    if ranks_per_node is not None:
        if ranks_per_node < 1 or p % ranks_per_node:
            raise ValueError(
                f"ranks_per_node={ranks_per_node} must be >= 1 and divide the {p} ranks"
            )
        return tuple(r // ranks_per_node for r in range(p))
    if topology is None:
        raise ValueError(
            "hierarchical needs to know the hosts: pass topology= (Device.host) or ranks_per_node="
        )
    hosts = tuple(d.host for d in topology.devices)
    sizes = {h: hosts.count(h) for h in set(hosts)}
    if len(set(sizes.values())) != 1:
        raise ValueError(
            f"hierarchical needs the same number of ranks on every host; topology "
            f"{topology.name!r} has {dict(sorted(sizes.items()))} (host: ranks)"
        )
    return hosts


def _dims(p: int, topology, torus_dims) -> tuple[int, ...]:
    dims = (
        tuple(torus_dims)
        if torus_dims is not None
        else (tuple(topology.torus_dims) if topology is not None else ())
    )
    if not dims or int(np.prod(dims)) != p or min(dims) < 1:
        raise ValueError(
            f"ring_per_dimension needs torus dimensions whose product is the {p} ranks, got "
            f"{dims or 'none'}; pass a torus topology or torus_dims="
        )
    return dims


def schedule(
    collective: str,
    algorithm: str | None,
    num_ranks: int,
    nbytes: int,
    *,
    topology=None,
    chunks: int | None = None,
    root: int = 0,
    ranks_per_node: int | None = None,
    torus_dims: tuple[int, ...] | None = None,
    itemsize: int = 1,
) -> Schedule:
    """The steps of point-to-point transfers ``algorithm`` makes for ``collective``.

    Pieces are cut in elements of ``itemsize`` bytes (``nbytes / itemsize`` elements split
    by :func:`~simdist.collectives.plan.piece_bounds`: sizes differ by at most one element,
    the first pieces longer), so a schedule priced here is the one ``execute`` runs on arrays
    of that item size.

    Args:
        collective: "all_reduce", "reduce_scatter", "all_gather", "broadcast", "reduce" or
            "all_to_all".
        algorithm: a name from ``ALGORITHMS[collective]``, or None for
            :func:`~simdist.collectives.selector.select_algorithm`'s choice.
        num_ranks: ranks taking part (replica order).
        nbytes: bytes of each rank's input buffer.
        topology: supplies hosts (hierarchical), torus dims (ring_per_dimension) and the
            selector's facts; its device count must equal ``num_ranks``.
        chunks: pipeline pieces (double_binary_tree; ring broadcast / reduce).
        root: the root rank of broadcast / reduce / reduce_broadcast.
        ranks_per_node: hosts for hierarchical without a topology.
        torus_dims: torus shape for ring_per_dimension without a topology.
        itemsize: bytes per element.

    Returns:
        The :class:`Schedule`; ``Transfer.chunk`` is the id of the buffer segment sent.

    Raises:
        ValueError: see :func:`make_spec`; ``nbytes`` not a multiple of ``itemsize``.
    """
    if nbytes < 0 or itemsize < 1 or nbytes % itemsize:
        raise ValueError(f"nbytes={nbytes} must be a non-negative multiple of itemsize={itemsize}")
    spec = make_spec(
        collective,
        algorithm,
        num_ranks,
        nbytes // itemsize,
        nbytes=nbytes,
        topology=topology,
        chunks=chunks,
        root=root,
        ranks_per_node=ranks_per_node,
        torus_dims=torus_dims,
    )
    return build_plan(spec).to_schedule(itemsize)


def _op_name(op) -> str:
    name = op if isinstance(op, str) else getattr(op, "name", None)
    if not isinstance(name, str) or name.lower() not in OPS:
        raise ValueError(f"unknown reduce op {op!r}; use one of {', '.join(OPS)}")
    return name.lower()


def _check_arrays(arrays) -> list[np.ndarray]:
    if isinstance(arrays, np.ndarray) or not isinstance(arrays, (list, tuple)) or not arrays:
        raise TypeError("arrays must be a non-empty list with one array per rank")
    arrays = [np.asarray(a) for a in arrays]
    first = arrays[0]
    for i, a in enumerate(arrays[1:], start=1):
        if a.shape != first.shape or a.dtype != first.dtype:
            raise ValueError(
                f"rank 0 holds {first.shape} {first.dtype} but rank {i} holds {a.shape} "
                f"{a.dtype}; every rank must contribute the same shape and dtype"
            )
    if first.dtype.kind not in "iufc":
        raise TypeError(f"collectives need numeric arrays, got dtype {first.dtype}")
    return arrays


def _mean(total: np.ndarray, count: int) -> np.ndarray:
    """MEAN as the strategies compute it: int32/int64 -> float64, smaller ints -> float32."""
    if total.dtype.kind in "iu":
        target = np.float64 if total.dtype.itemsize >= 4 else np.float32
        return total.astype(target) / target(count)
    return total / total.dtype.type(count)


def execute(
    collective: str,
    algorithm: str | None,
    arrays: list[np.ndarray],
    op="sum",
    *,
    topology=None,
    chunks: int | None = None,
    root: int = 0,
    ranks_per_node: int | None = None,
    torus_dims: tuple[int, ...] | None = None,
    reproducible: bool = False,
    stacked: bool = False,
    out: list[np.ndarray] | None = None,
) -> list:
    """Runs the collective's arithmetic on one array per rank, in the algorithm's order.

    Arrays are flattened (C order). Results per collective: all_reduce, broadcast: the
    input's shape on every rank; reduce: the root's entry, ``None`` elsewhere;
    reduce_scatter: rank ``r`` gets piece ``r`` (``piece_bounds``) of the flattened sum,
    1-D; all_gather: the inputs concatenated along axis 0 (scalars: shape ``(p,)``);
    all_to_all: block ``i`` (along axis 0) of rank ``j`` lands in block ``j`` of rank ``i``.
    Sums are in the arrays' dtype (integers wrap like NumPy); MEAN then divides by ``p``
    (int32/int64 give float64, smaller integers float32).

    Args:
        collective, algorithm, topology, chunks, root, ranks_per_node, torus_dims: as
            :func:`schedule`.
        arrays: one array per rank, same shape and dtype.
        op: "sum", "mean", "max", "min" or "prod" (any case; a ``ReduceOp`` works too).
        reproducible: sum/mean of float arrays as the correctly rounded exact sum, the same
            bits for any rank count, order or algorithm
            (:mod:`simdist.collectives.reproducible`).
        stacked: with ``reproducible``: each rank's array has a leading axis of that rank's
            several contributions (sizes may differ per rank), summed exactly too; MEAN
            divides by the total number of contributions. Splitting the same values over
            any number of ranks then gives the same bits.
        out: all_reduce with op sum/max/min/prod only: one C-contiguous array per rank, of
            the inputs' shape and dtype, to receive the results (``out=arrays`` reduces in
            place, like an in-place NCCL all-reduce); not for ``direct`` (it needs ``p``
            slots per rank). Returned as the results.

    Returns:
        One result per rank (fresh arrays; ``None`` for non-root ranks of ``reduce``).

    Raises:
        TypeError: ``arrays`` is not a list, or non-numeric.
        ValueError: shapes/dtypes differ across ranks, unknown op, and see :func:`schedule`.
    """
    name = _op_name(op)
    if stacked:
        return _execute_stacked(
            collective,
            algorithm,
            arrays,
            name,
            reproducible,
            topology=topology,
            chunks=chunks,
            root=root,
            ranks_per_node=ranks_per_node,
            torus_dims=torus_dims,
        )
    arrays = _check_arrays(arrays)
    p, shape, dtype = len(arrays), arrays[0].shape, arrays[0].dtype
    if collective == "all_to_all" and (len(shape) == 0 or shape[0] % p):
        raise ValueError(
            f"all_to_all splits axis 0 into {p} blocks, but the arrays have shape {shape}; "
            f"use a leading dimension that {p} divides"
        )
    spec = make_spec(
        collective,
        algorithm,
        p,
        arrays[0].size,
        nbytes=arrays[0].nbytes,
        topology=topology,
        chunks=chunks,
        root=root,
        ranks_per_node=ranks_per_node,
        torus_dims=torus_dims,
    )
    plan = build_plan(spec)
    flats = [a.reshape(-1) for a in arrays]
    exact = (
        reproducible and collective in _REDUCING and name in ("sum", "mean") and dtype.kind == "f"
    )
    if reproducible and name == "prod" and dtype.kind in "fc":
        raise ValueError("reproducible=True supports sum, mean, max and min, not prod")
    if out is not None:
        return _execute_into(plan, flats, name, out, shape, dtype, exact)
    if exact:
        results = _repro.run_exact(spec, [f[None] for f in flats], dtype)
    else:
        results = run_plan(plan, flats, OPS[name] if collective in _REDUCING else None)
    out = []
    for r in results:
        if r is None:
            out.append(None)
            continue
        if name == "mean" and collective in _REDUCING:
            r = _mean(r, p)
        if collective in ("all_reduce", "broadcast", "reduce", "all_to_all"):
            r = r.reshape(shape)
        elif collective == "all_gather":
            r = r.reshape((p * shape[0],) + shape[1:] if shape else (p,))
        out.append(r)
    return out


def _execute_into(plan, flats, name, out, shape, dtype, exact) -> list:
    if plan.collective != "all_reduce" or name == "mean" or exact:
        raise ValueError("out= supports all_reduce with sum, max, min or prod (not reproducible)")
    if not isinstance(out, (list, tuple)) or len(out) != plan.num_ranks:
        raise ValueError(f"out= needs a list of {plan.num_ranks} arrays, one per rank")
    for r, o in enumerate(out):
        if not isinstance(o, np.ndarray) or o.shape != shape or o.dtype != dtype:
            raise ValueError(f"out[{r}] must be an ndarray of shape {shape} and dtype {dtype}")
        if not o.flags.c_contiguous or not o.flags.writeable:
            raise ValueError(f"out[{r}] must be C-contiguous and writeable")
    if not supports_out(plan):
        raise ValueError(f"out= is not supported by {plan.algorithm!r}; use another algorithm")
    run_plan(plan, flats, OPS[name], [o.reshape(-1) for o in out])
    return list(out)


def _execute_stacked(collective, algorithm, arrays, name, reproducible, **kwargs) -> list:
    if not reproducible or collective not in _REDUCING or name not in ("sum", "mean"):
        raise ValueError(
            "stacked=True needs reproducible=True and a sum or mean reduction (all_reduce, "
            "reduce_scatter or reduce)"
        )
    if not isinstance(arrays, (list, tuple)) or not arrays:
        raise TypeError("arrays must be a non-empty list with one stacked array per rank")
    arrays = [np.asarray(a) for a in arrays]
    first = arrays[0]
    for i, a in enumerate(arrays):
        if a.ndim < 1 or a.shape[1:] != first.shape[1:] or a.dtype != first.dtype:
            raise ValueError(
                f"stacked=True: rank {i} holds {a.shape} {a.dtype}; every rank needs a leading "
                f"axis of contributions and the same trailing shape {first.shape[1:]} and dtype "
                f"{first.dtype}"
            )
    if first.dtype.kind != "f":
        raise TypeError(f"stacked=True sums floating arrays exactly, got {first.dtype}")
    shape = first.shape[1:]
    elems = int(np.prod(shape))
    spec = make_spec(
        collective, algorithm, len(arrays), elems, nbytes=elems * first.dtype.itemsize, **kwargs
    )
    stacks = [a.reshape(a.shape[0], elems) for a in arrays]
    results = _repro.run_exact(spec, stacks, first.dtype)
    count = sum(a.shape[0] for a in arrays)
    out = []
    for r in results:
        if r is not None and name == "mean":
            r = _mean(r, count)
        if r is not None and collective != "reduce_scatter":
            r = r.reshape(shape)
        out.append(r)
    return out


def reduce_arrays(
    op,
    arrays: list[np.ndarray],
    algorithm: str | None = None,
    *,
    topology=None,
    reproducible: bool = False,
    **kwargs,
) -> np.ndarray:
    """One all-reduced array (rank 0's result): the entry point for cross-device ops.

    Args:
        op: "sum"/"mean"/... or a ``ReduceOp``.
        arrays: one array per replica, replica order.
        algorithm: an all-reduce algorithm (``ALGORITHMS["all_reduce"]``) or None to let
            the selector choose from the topology and message size.
        topology, reproducible, kwargs: passed to :func:`execute`.

    Returns:
        The reduced array (every rank's result is bit-identical to it).
    """
    name = _op_name(op)
    if not reproducible and not kwargs:
        # One result is wanted: the executor's rank_result gives rank 0's bits of the plan
        # (for the ring, without the all-gather's copies).
        arrays = _check_arrays(arrays)
        first = arrays[0]
        spec = make_spec(
            "all_reduce", algorithm, len(arrays), first.size, nbytes=first.nbytes, topology=topology
        )
        total = rank_result(build_plan(spec), [a.reshape(-1) for a in arrays], OPS[name])
        total = total.reshape(first.shape)
        return _mean(total, len(arrays)) if name == "mean" else total
    return execute(
        "all_reduce", algorithm, arrays, op, topology=topology, reproducible=reproducible, **kwargs
    )[0]


def algorithms_for(collective: str) -> tuple[str, ...]:
    """The algorithms that apply to ``collective``."""
    if collective not in ALGORITHMS:
        raise ValueError(f"unknown collective {collective!r}; use one of {', '.join(COLLECTIVES)}")
    return ALGORITHMS[collective]

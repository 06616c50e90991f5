"""Every collective x algorithm: results vs the reference, determinism, schedule validity."""

from __future__ import annotations

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given, settings
from hypothesis import strategies as st

from simdist.collectives import ALGORITHMS, execute, schedule
from simdist.collectives.algorithms import build_plan
from simdist.collectives.api import make_spec

TORI = {4: (2, 2), 6: (2, 3), 8: (2, 2, 2), 9: (3, 3)}
CASES = [(c, a) for c, algs in ALGORITHMS.items() for a in algs]


def shape_kwargs(algorithm: str, p: int) -> dict | None:
    """Extra arguments an algorithm needs at ``p`` ranks (None: it cannot run there)."""
    if algorithm == "hierarchical":
        for per_node in (3, 2):
            if p % per_node == 0:
                return {"ranks_per_node": per_node}
        return {"ranks_per_node": 1}
    if algorithm == "ring_per_dimension":
        return {"torus_dims": TORI[p]} if p in TORI else None
    return {}


def make_arrays(rng, p: int, n: int, dtype) -> list[np.ndarray]:
    if np.dtype(dtype).kind == "i":
        return [rng.integers(-1000, 1000, size=n).astype(dtype) for _ in range(p)]
    return [rng.standard_normal(n).astype(dtype) for _ in range(p)]


def expected(collective: str, arrays: list[np.ndarray], root: int = 0):
    """Per rank, the reference result (float64 / int64 for reductions)."""
    p = len(arrays)
    if collective == "all_reduce":
        return ref.all_reduce("SUM", arrays)
    if collective == "reduce":
        total = ref.all_reduce("SUM", arrays)[0]
        return [total if r == root else None for r in range(p)]
    if collective == "reduce_scatter":
        total = ref.all_reduce("SUM", arrays)[0].reshape(-1)
        return np.array_split(total, p)
    if collective == "broadcast":
        return ref.broadcast(arrays[root], p)
    if collective == "all_gather":
        return ref.all_gather(arrays, axis=0)
    blocks = [np.split(a, p) for a in arrays]
    return [np.concatenate([blocks[j][i] for j in range(p)]) for i in range(p)]


def bound(arrays: list[np.ndarray]) -> np.ndarray:
    """|ours - reference| for sums of p values in any order (Higham 4.3).

    Each of ours and the float64 reference is within (p-1) u sum|x_i| of the exact sum, u
    the unit roundoff of its dtype, so the two differ by at most their sum (+ tiny).
    """
    dtype = arrays[0].dtype
    if dtype.kind != "f":
        return np.zeros(arrays[0].shape)
    u = np.finfo(dtype).eps / 2 + np.finfo(np.float64).eps / 2
    p = len(arrays)
    mag = np.sum([np.abs(a.astype(np.float64)) for a in arrays], axis=0)
    return 1.01 * (p - 1) * u * mag + np.finfo(dtype).tiny


@pytest.mark.parametrize("collective,algorithm", CASES)
@settings(max_examples=12)
@given(
    p=st.integers(1, 9),
    rows=st.integers(0, 11),
    dtype=st.sampled_from([np.float32, np.float64, np.int32]),
    seed=st.integers(0, 2**16),
    data=st.data(),
)
def test_matches_reference(collective, algorithm, p, rows, dtype, seed, data):
    kwargs = shape_kwargs(algorithm, p)
    if kwargs is None:
        return
    rng = np.random.default_rng(seed)
    if collective == "all_to_all":
        arrays = [a.reshape(p * rows, 2) for a in make_arrays(rng, p, p * rows * 2, dtype)]
    else:
        arrays = [a.reshape(rows, 3) for a in make_arrays(rng, p, rows * 3, dtype)]
    root = data.draw(st.integers(0, p - 1)) if collective in ("broadcast", "reduce") else 0
    out = execute(collective, algorithm, arrays, "sum", root=root, **kwargs)
    again = execute(collective, algorithm, arrays, "sum", root=root, **kwargs)
    want = expected(collective, arrays, root)
    assert len(out) == p
    limits = bound(arrays)
    for r, (got, again_r, w) in enumerate(zip(out, again, want, strict=True)):
        if w is None:
            assert got is None
            continue
        assert got.dtype == arrays[0].dtype
        assert got.tobytes() == again_r.tobytes()  # bit-identical across runs
        if collective in ("all_reduce", "reduce", "reduce_scatter"):
            err = np.abs(got.astype(np.float64) - w.reshape(got.shape))
            limit = limits
            if collective == "reduce_scatter":
                limit = np.array_split(limits.reshape(-1), p)[r]
            if np.dtype(dtype).kind == "i":
                np.testing.assert_array_equal(got, w.reshape(got.shape).astype(got.dtype))
            else:
                assert np.all(err <= limit)
        else:
            np.testing.assert_array_equal(got, w.reshape(got.shape))
    if collective == "all_reduce":  # every rank holds the same bits
        assert all(o.tobytes() == out[0].tobytes() for o in out)


# --- schedule validity: a symbolic run with contribution sets -----------------------------


def symbolic_run(plan):
    """Runs a position-keeping plan on bitmasks; returns each rank's per-atom masks.

    Checks: nobody sends what it does not hold yet; a reduction never adds a contribution
    the destination already has (every byte is counted once).
    """
    natoms = len(plan.atom_bounds) - 1
    held = []
    for r in range(plan.num_ranks):
        a0, a1 = plan.seg_atoms[plan.inputs[r]]
        held.append([(1 << r) if a0 <= a < a1 else None for a in range(natoms)])
    for t, step in enumerate(plan.steps):
        sent = []
        for m in step:
            a0, a1 = plan.seg_atoms[m.src_seg]
            values = held[m.src][a0:a1]
            assert all(v is not None for v in values), f"step {t}: rank {m.src} sends early"
            sent.append(values)
        for m, values in zip(step, sent, strict=True):
            a0, a1 = plan.seg_atoms[m.dst_seg]
            for a, v in zip(range(a0, a1), values, strict=True):
                if m.reduce:
                    assert held[m.dst][a] is not None
                    assert held[m.dst][a] & v == 0, f"step {t}: double-counted contribution"
                    held[m.dst][a] |= v
                else:
                    held[m.dst][a] = v
    return held


VALIDITY_CASES = [(c, a) for c, a in CASES if c != "all_to_all"]


# Every (collective, algorithm, p) that exists: ring_per_dimension needs a torus of p ranks.
VALIDITY_PARAMS = [
    (c, a, p) for c, a in VALIDITY_CASES for p in range(1, 10) if shape_kwargs(a, p) is not None
]


@pytest.mark.parametrize("collective,algorithm,p", VALIDITY_PARAMS)
def test_schedule_is_valid(collective, algorithm, p):
    kwargs = shape_kwargs(algorithm, p)
    n = 2 * p + 1  # not divisible by p
    spec = make_spec(collective, algorithm, p, n, root=p - 1 if p > 1 else 0, **kwargs)
    plan = build_plan(spec)
    held = symbolic_run(plan)
    everyone = (1 << p) - 1
    for r in range(p):
        out = plan.outputs[r]
        if collective == "reduce" and r != spec.root:
            assert out is None
            continue
        if plan.finish:
            # one-shot: the slots it adds up hold every rank's contribution exactly once
            per_position = range(*plan.seg_atoms[plan.finish_segs[0]])
            union = [0] * len(per_position)
            for seg in plan.finish_segs:
                for i, a in enumerate(range(*plan.seg_atoms[seg])):
                    assert union[i] & held[r][a] == 0
                    union[i] |= held[r][a]
            assert union == [everyone] * len(per_position)
            continue
        atoms = range(*plan.seg_atoms[out])
        if collective in ("all_reduce", "reduce", "reduce_scatter"):
            assert all(held[r][a] == everyone for a in atoms)
        elif collective == "broadcast":
            assert all(held[r][a] == 1 << spec.root for a in atoms)
        else:  # all_gather: slot j holds exactly rank j's input
            for a in atoms:
                slot = int(plan.atom_bounds[a]) // n
                assert held[r][a] == 1 << slot


def per_rank_sent(sched) -> list[int]:
    sent = [0] * sched.num_ranks
    for step in sched.steps:
        for t in step:
            sent[t.src] += t.nbytes
    return sent


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8])
def test_ring_all_reduce_volume_and_steps(p):
    n = 1024 * p * 4
    s = schedule("all_reduce", "ring", p, n, itemsize=4)
    assert len(s.steps) == 2 * (p - 1)
    assert per_rank_sent(s) == [2 * (p - 1) * n // p] * p


@pytest.mark.parametrize("p", [2, 4, 8])
def test_power_of_two_volumes(p):
    n = 64 * p
    log_p = p.bit_length() - 1
    rd = schedule("all_reduce", "recursive_doubling", p, n)
    assert len(rd.steps) == log_p and per_rank_sent(rd) == [log_p * n] * p
    rhd = schedule("all_reduce", "recursive_halving_doubling", p, n)
    assert len(rhd.steps) == 2 * log_p and per_rank_sent(rhd) == [2 * (p - 1) * n // p] * p
    direct = schedule("all_reduce", "direct", p, n)
    assert len(direct.steps) == 1 and per_rank_sent(direct) == [(p - 1) * n] * p
    assert all(t.reduce for t in direct.steps[0])
    tree = schedule("all_reduce", "double_binary_tree", p, n)
    assert tree.bytes_sent == 2 * (p - 1) * n  # per tree: its half up and down each edge
    rs = schedule("reduce_scatter", "ring", p, n)
    assert per_rank_sent(rs) == [(p - 1) * n // p] * p
    ag = schedule("all_gather", "ring", p, n)
    assert per_rank_sent(ag) == [(p - 1) * n] * p


def test_hierarchical_and_torus_volumes():
    n = 2**12 * 3 * 4
    s = schedule("all_reduce", "hierarchical", 12, n, ranks_per_node=4)
    local, hosts = 4, 3
    want = 2 * (local - 1) * n // local + 2 * (hosts - 1) * (n // local) // hosts
    assert per_rank_sent(s) == [want] * 12
    assert len(s.steps) == 2 * (local - 1) + 2 * (hosts - 1)
    t = schedule("all_reduce", "ring_per_dimension", 24, n, torus_dims=(2, 3, 4))
    want = 2 * (n // 2 + 2 * (n // 2) // 3 + 3 * (n // 6) // 4)
    assert per_rank_sent(t) == [want] * 24
    assert len(t.steps) == 2 * (1 + 2 + 3)


def test_pipelined_chunks():
    p, k, n = 5, 4, 4000
    s = schedule("broadcast", "ring", p, n, chunks=k)
    assert len(s.steps) == k + p - 2
    assert s.bytes_sent == (p - 1) * n
    tree = schedule("all_reduce", "double_binary_tree", 8, 8000, chunks=4)
    assert tree.bytes_sent == 2 * 7 * 8000
    with pytest.raises(ValueError, match="not pipelined"):
        schedule("all_reduce", "ring", 4, 64, chunks=2)


def test_schedule_transfers_name_real_bytes():
    s = schedule("all_reduce", "ring", 3, 10 * 4, itemsize=4)  # pieces of 4, 3, 3 elements
    sizes = sorted({t.nbytes for step in s.steps for t in step})
    assert sizes == [12, 16]
    assert s.collective == "all_reduce" and s.algorithm == "ring" and s.nbytes == 40


def test_docstring_orders():
    """The orders the module docstrings state, checked bit for bit on float32."""
    x = [np.array([v], dtype=np.float32) for v in (1e8, 1.0, -1e8, 1.0)]
    ring = execute("all_reduce", "ring", x)[0]  # one element -> piece 0 on rank 0
    assert ring[0] == ((x[1][0] + x[2][0]) + x[3][0]) + x[0][0]
    rd = execute("all_reduce", "recursive_doubling", x)[0]
    assert rd[0] == (x[0][0] + x[1][0]) + (x[2][0] + x[3][0])
    direct = execute("all_reduce", "direct", x)[0]
    assert direct[0] == ((x[0][0] + x[1][0]) + x[2][0]) + x[3][0]
    rb = execute("all_reduce", "reduce_broadcast", x)[0]
    assert rb[0] == direct[0]
    tree = execute("all_reduce", "double_binary_tree", [np.repeat(a, 2) for a in x])[0]
    assert tree[0] == x[0][0] + ((x[2][0] + x[1][0]) + x[3][0])
    assert tree[1] == x[3][0] + ((x[1][0] + x[0][0]) + x[2][0])


def test_ops_mean_max():
    arrays = [np.array([1, 5, -2], dtype=np.int32), np.array([3, 0, 7], dtype=np.int32)]
    mean = execute("all_reduce", "ring", arrays, "MEAN")[0]
    assert mean.dtype == np.float64 and mean.tolist() == [2.0, 2.5, 2.5]
    assert execute("all_reduce", "ring", arrays, "max")[1].tolist() == [3, 5, 7]
    assert execute("reduce_scatter", "direct", arrays, "min")[1].tolist() == [-2]


def test_bad_input():
    with pytest.raises(ValueError, match="does not apply"):
        execute("all_to_all", "ring", [np.zeros(4)] * 2)
    with pytest.raises(ValueError, match="same shape"):
        execute("all_reduce", "ring", [np.zeros(4), np.zeros(5)])
    with pytest.raises(ValueError, match="unknown reduce op"):
        execute("all_reduce", "ring", [np.zeros(4)] * 2, op="avg")
    with pytest.raises(ValueError, match="hosts"):
        schedule("all_reduce", "hierarchical", 4, 64)
    with pytest.raises(ValueError, match="torus"):
        schedule("all_reduce", "ring_per_dimension", 6, 64, torus_dims=(2, 2))
    with pytest.raises(ValueError, match="divides"):
        execute("all_to_all", "direct", [np.zeros(5)] * 2)
    with pytest.raises(TypeError):
        execute("all_reduce", "ring", np.zeros((2, 3)))


@pytest.mark.parametrize("collective,algorithm", VALIDITY_CASES)
def test_tiled_and_step_by_step_execution_agree(collective, algorithm, monkeypatch):
    """The cache-tiled executor performs the step-by-step executor's additions exactly."""
    from simdist.collectives import executor

    p = 8 if algorithm == "ring_per_dimension" else 6
    kwargs = shape_kwargs(algorithm, p)
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal(3001).astype(np.float32) for _ in range(p)]
    monkeypatch.setattr(executor, "TILE_BYTES", 256)  # many tiles per atom
    tiled = execute(collective, algorithm, arrays, root=1, **kwargs)
    monkeypatch.setattr(executor, "_aligned", lambda plan: False)
    stepped = execute(collective, algorithm, arrays, root=1, **kwargs)
    for a, b in zip(tiled, stepped, strict=True):
        assert (a is None and b is None) or a.tobytes() == b.tobytes()


@pytest.mark.parametrize("algorithm", [a for a in ALGORITHMS["all_reduce"] if a != "direct"])
def test_out_buffers_and_in_place(algorithm):
    p = 6
    kwargs = shape_kwargs(algorithm, p) or {"torus_dims": (2, 3)}
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((5, 7)).astype(np.float32) for _ in range(p)]
    fresh = execute("all_reduce", algorithm, arrays, **kwargs)
    out = [np.empty_like(a) for a in arrays]
    assert execute("all_reduce", algorithm, arrays, out=out, **kwargs)[0] is out[0]
    in_place = [a.copy() for a in arrays]
    execute("all_reduce", algorithm, in_place, out=in_place, **kwargs)
    for f, o, i in zip(fresh, out, in_place, strict=True):
        assert f.tobytes() == o.tobytes() == i.tobytes()
    with pytest.raises(ValueError, match="out="):
        execute("all_reduce", "direct", arrays, out=out)

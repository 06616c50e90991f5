"""The socket transport of TF_CONFIG processes, with its workers as threads of this process.

Every plan of every collective executed over the sockets equals the one-process executor
bit for bit; the control plane carries the strategies' values with their types; peers that
hold another key, say nothing, leave, die or are late are refused or named.
"""

from __future__ import annotations

import socket
import sys
import threading
import time
from multiprocessing.connection import AuthenticationError, Client

import mpi_spawn
import numpy as np
import pytest

from simdist import errors
from simdist.backends.base import WorkerFailedError
from simdist.backends.sockets import SocketTransport
from simdist.collectives.algorithms import build_plan
from simdist.collectives.api import make_spec
from simdist.collectives.executor import run_plan
from simdist.distribute.runner import CollectiveMismatchError
from simdist.sim.processes import free_ports

KEY = b"test-job-key"


def _cluster(workers: int) -> tuple[list[str], list[str]]:
    addresses = [f"127.0.0.1:{p}" for p in free_ports(workers)]
    return addresses, [f"worker:{i}" for i in range(workers)]


def _parallel(fns, timeout: float = 30.0) -> list:
    """Run each fn on a thread of its own; their results, or the first exception."""
    results: list = [None] * len(fns)

    def body(i, fn):
        try:
            results[i] = ("ok", fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            results[i] = ("error", exc)

    threads = [threading.Thread(target=body, args=(i, fn), daemon=True) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a worker thread hung"
    return results


def _open(workers: int, timeout: float = 10.0, keys=None) -> list:
    addresses, names = _cluster(workers)
    keys = keys or [KEY] * workers
    made = _parallel(
        [
            lambda i=i: SocketTransport(
                addresses, names, i, keys[i], timeout, exit_guard_on=False, startup_timeout=timeout
            )
            for i in range(workers)
        ]
    )
    return made


@pytest.fixture
def pair():
    made = _open(2)
    transports = [t for status, t in made]
    assert all(status == "ok" for status, _ in made), made
    yield transports
    for t in transports:
        t.close()


@pytest.mark.slow
@pytest.mark.parametrize("workers", [2, 4])  # the layouts of check_collectives (its torus table)
def test_every_collective_plan_over_sockets_equals_the_executor_bitwise(workers):
    sys.path.insert(0, str(mpi_spawn.SCRIPTS))
    try:
        import check_collectives as cc
    finally:
        sys.path.remove(str(mpi_spawn.SCRIPTS))
    made = _open(workers)
    transports = [t for _, t in made]

    def check(transport, workers=workers):
        failures, count = [], 0
        for index, collective, algorithm, lay, rows, dtype, limbs, op, kw in cc.cases(workers):
            if index % 3:  # a third of the catalogue keeps this test fast
                continue
            p, mine = cc.layout(lay, workers, transport.worker_index)
            elems = p * rows if collective == "all_to_all" else rows
            plan = build_plan(make_spec(collective, algorithm, p, elems, **kw))
            flats = cc.inputs(0, index, p, elems, dtype, limbs)
            ufunc = op if collective in cc.REDUCING else None
            want = run_plan(plan, flats, ufunc)
            got = transport.run_plan(plan, mine, [flats[r] for r in mine], ufunc)
            count += 1
            failures += [
                f"{collective}/{algorithm} {lay} rank {r}"
                for r, g in zip(mine, got, strict=True)
                if not cc.same_bits(g, want[r])
            ]
        return count, failures

    results = _parallel([lambda t=t: check(t) for t in transports], timeout=120)
    for t in transports:
        t.close()
    for status, value in results:
        assert status == "ok", value
        count, failures = value
        assert count > 50 and not failures, failures[:5]


def test_links_send_without_nagle(pair):
    # A data-plane array is two writes (header, then bytes): with Nagle's algorithm the second
    # waited for the peer's delayed ACK of the first, 40 ms per array (the plan test above
    # took 12 s instead of 1 s).
    for transport in pair:
        for link in transport._links.values():
            assert link._sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)


def test_the_control_plane_carries_the_strategies_values_with_their_types(pair):
    def exchange(t):
        tag = ("create_variable", (5, 2), "float32")
        value = np.arange(3, dtype=np.float32) * t.worker_index
        return t.all_gather_object((tag, value, {"worker": [f"h:{t.worker_index}"]}), "x")

    (s0, r0), (s1, r1) = _parallel([lambda t=t: exchange(t) for t in pair])
    assert s0 == s1 == "ok"
    for got in (r0, r1):
        assert [g[0] for g in got] == [("create_variable", (5, 2), "float32")] * 2
        assert got[1][1].dtype == np.float32 and got[1][1].tolist() == [0.0, 1.0, 2.0]
        assert got[0][2] == {"worker": ["h:0"]}


def test_an_unauthenticated_connection_is_refused_and_the_job_still_forms():
    addresses, names = _cluster(2)
    host, port = addresses[0].split(":")
    made: list = []
    first = threading.Thread(
        target=lambda: made.append(
            SocketTransport(addresses, names, 0, KEY, 10.0, exit_guard_on=False)
        ),
        daemon=True,
    )
    first.start()
    silent = None
    for _ in range(200):  # wait until worker 0 listens
        try:
            silent = socket.create_connection((host, int(port)))  # connects, says nothing
            break
        except OSError:
            time.sleep(0.02)
    assert silent is not None
    with pytest.raises(AuthenticationError):
        Client((host, int(port)), authkey=b"not the job key")
    second = SocketTransport(addresses, names, 1, KEY, 10.0, exit_guard_on=False)
    first.join(10)
    assert made and made[0].num_workers == 2
    got = _parallel([lambda: made[0].all_gather_object(0), lambda: second.all_gather_object(1)])
    assert got == [("ok", [0, 1])] * 2
    silent.close()
    made[0].close()
    second.close()


def test_a_peer_with_another_key_is_named_not_waited_for():
    made = _open(2, timeout=1.5, keys=[KEY, b"other key"])
    errors_seen = [value for status, value in made if status == "error"]
    assert any(isinstance(e, errors.UnauthenticatedError) for e in errors_seen), made
    assert any("different job keys" in str(e) for e in errors_seen)


def test_a_missing_worker_is_named_at_start_up():
    addresses, names = _cluster(2)
    start = time.monotonic()
    with pytest.raises(errors.DeadlineExceededError, match=r"worker\(s\) \['1 \(worker:1\)'\]"):
        SocketTransport(addresses, names, 0, KEY, 0.5, exit_guard_on=False, startup_timeout=0.5)
    assert time.monotonic() - start < 5


def test_an_address_of_another_host_cannot_be_listened_on():
    with pytest.raises(ValueError, match="cannot listen on its TF_CONFIG address 192.0.2.1"):
        SocketTransport(["192.0.2.1:2222", "127.0.0.1:1"], ["worker:0", "worker:1"], 0, KEY, 1.0)


def test_a_closed_connection_is_a_dead_worker_named(pair):
    pair[1].close()  # as os._exit would: no goodbye
    with pytest.raises(WorkerFailedError, match=r"Worker 1 \(worker:1\) at 127.0.0.1:\d+ died"):
        pair[0].all_gather_object("x", "step 1")


def test_a_goodbye_met_in_a_call_is_a_mismatch_on_both_sides(pair):
    results = _parallel(
        [lambda: pair[0].all_gather_object("more", "one more step"), pair[1].finish]
    )
    (s0, e0), (s1, e1) = results
    assert s0 == "error" and isinstance(e0, CollectiveMismatchError)
    assert "Worker 1 (worker:1) left its program" in str(e0) and "one more step" in str(e0)
    assert s1 == "error" and isinstance(e1, CollectiveMismatchError)


def test_a_late_worker_trips_the_call_deadline_on_every_worker(pair):
    def late():
        time.sleep(1.0)
        pair[1].all_gather_object("x", "reduce")  # worker 0's part had arrived: it completes
        return pair[1].all_gather_object("y", "the next reduce")

    start = time.monotonic()
    (s0, e0), (s1, e1) = _parallel([lambda: pair[0].all_gather_object("x", "reduce", 0.3), late])
    assert isinstance(e0, errors.DeadlineExceededError) and "worker 1 (worker:1)" in str(e0)
    assert isinstance(e1, errors.DeadlineExceededError)  # told by worker 0, not a hang
    assert time.monotonic() - start < 5


def test_a_peer_that_runs_on_past_the_goodbye_deadline_is_not_an_error(pair):
    def chief_saves_then_leaves():
        time.sleep(0.6)  # longer than the worker's goodbye deadline, no collective
        pair[0].finish()

    (s0, _), (s1, _) = _parallel([chief_saves_then_leaves, lambda: pair[1].finish(timeout=0.2)])
    assert (s0, s1) == ("ok", "ok")


def test_a_call_made_after_a_peer_left_meets_its_goodbye(pair):
    def chief_calls_late():
        time.sleep(0.6)
        return pair[0].all_gather_object("x", "a late reduce")

    (s0, e0), (s1, _) = _parallel([chief_calls_late, lambda: pair[1].finish(timeout=0.2)])
    assert s1 == "ok"
    assert isinstance(e0, CollectiveMismatchError) and "Worker 1 (worker:1) left" in str(e0)

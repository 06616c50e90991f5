"""The rank sentinel's program, as a real process, with a socket pair in place of PMI.

(Real ``mpiexec`` jobs whose rank dies: tests/backends/test_process_faults.py.)
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from simdist.backends import mpi_sentinel, mpi_sentinel_main


def _sentinel(reports: bytes, calls=()) -> tuple[int, bytes, str]:
    """Runs the sentinel as a child of this process, records ``calls`` in its ring, feeds it
    ``reports``, closes the pipe (as a rank's death does); returns its status, what it sent
    on "PMI", its stderr."""
    pmi, launcher_end = socket.socketpair()
    read_end, write_end = os.pipe()
    ring_fd, ring = mpi_sentinel.new_ring()
    for count, label in enumerate(calls, 1):
        mpi_sentinel.record(ring, count, label)
    command = [sys.executable, "-I", "-S", str(mpi_sentinel.PROGRAM), str(read_end)]
    command += [str(pmi.fileno()), str(ring_fd), "1", "2", str(os.getpid())]
    child = subprocess.Popen(
        command, pass_fds=(read_end, pmi.fileno(), ring_fd), stderr=subprocess.PIPE, text=True
    )
    for fd in (read_end, ring_fd):
        os.close(fd)
    pmi.close()
    os.write(write_end, reports)
    os.close(write_end)
    _, stderr = child.communicate(timeout=20)
    launcher_end.settimeout(5)
    sent = b"".join(iter(lambda: launcher_end.recv(4096), b""))
    launcher_end.close()
    ring.close()
    return child.returncode, sent, stderr


def test_a_rank_that_ends_with_a_transport_open_aborts_the_job_naming_it():
    status, sent, stderr = _sentinel(b"join\n", ["exchange", "ring all_reduce"])
    assert status == 0 and sent == b"cmd=abort exitcode=1\n"
    assert "WorkerFailedError: worker 1 of 2 (pid " in stderr
    assert "after 2 cross-worker calls (last: exchange, ring all_reduce)" in stderr
    assert "aborting the MPI job (all 2 workers) with exit status 1" in stderr


@pytest.mark.parametrize("reports", [b"join\ngoodbye\n", b"join\nabort\n", b""])
def test_a_rank_that_said_goodbye_or_aborted_itself_ends_quietly(reports):
    assert _sentinel(reports, ["x"]) == (0, b"", "")


def test_the_ring_keeps_the_count_and_the_last_eight_calls_oldest_first():
    ring_fd, ring = mpi_sentinel.new_ring()
    assert mpi_sentinel_main._calls(ring_fd) == (0, [])
    for count in range(1, 12):
        mpi_sentinel.record(ring, count, f"c{count}" + "x" * (200 if count == 11 else 0))
    calls, history = mpi_sentinel_main._calls(ring_fd)
    assert calls == 11 and history[:-1] == [f"c{i}" for i in range(4, 11)]
    assert history[-1] == ("c11" + "x" * 200)[: mpi_sentinel.SLOT]  # cut to its slot
    os.close(ring_fd)
    ring.close()


def test_a_transport_is_expected_until_its_goodbye():
    assert mpi_sentinel_main._expected(b"join\njoin\ngoodbye\n")
    assert not mpi_sentinel_main._expected(b"join\ngoodbye\n")
    assert not mpi_sentinel_main._expected(b"join\nabort\n")


def test_no_sentinel_without_a_pmi_socket(monkeypatch):
    monkeypatch.delenv("PMI_FD", raising=False)
    assert mpi_sentinel.start(0, 2) is False

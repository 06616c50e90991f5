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


def _sentinel(reports: bytes) -> tuple[int, bytes, str]:
    """Runs the sentinel as a child of this process, feeds it ``reports``, closes the pipe
    (as a rank's death does); returns its status, what it sent on "PMI", its stderr."""
    pmi, launcher_end = socket.socketpair()
    read_end, write_end = os.pipe()
    command = [sys.executable, "-I", "-S", str(mpi_sentinel.PROGRAM), str(read_end)]
    command += [str(pmi.fileno()), "1", "2", str(os.getpid())]
    child = subprocess.Popen(
        command, pass_fds=(read_end, pmi.fileno()), stderr=subprocess.PIPE, text=True
    )
    os.close(read_end)
    pmi.close()
    os.write(write_end, reports)
    os.close(write_end)
    _, stderr = child.communicate(timeout=20)
    launcher_end.settimeout(5)
    sent = b"".join(iter(lambda: launcher_end.recv(4096), b""))
    launcher_end.close()
    return child.returncode, sent, stderr


def test_a_rank_that_ends_with_a_transport_open_aborts_the_job_naming_it():
    status, sent, stderr = _sentinel(b"join\ncall 1 exchange\ncall 2 ring all_reduce\n")
    assert status == 0 and sent == b"cmd=abort exitcode=1\n"
    assert "WorkerFailedError: worker 1 of 2 (pid " in stderr
    assert "after 2 cross-worker calls (last: exchange, ring all_reduce)" in stderr
    assert "aborting the MPI job (all 2 workers) with exit status 1" in stderr


@pytest.mark.parametrize("reports", [b"join\ncall 1 x\ngoodbye\n", b"join\ncall 1 x\nabort\n", b""])
def test_a_rank_that_said_goodbye_or_aborted_itself_ends_quietly(reports):
    assert _sentinel(reports) == (0, b"", "")


def test_the_state_counts_transports_and_keeps_the_last_calls():
    lines = ["join", "join", "goodbye", *[f"call {i} c{i}" for i in range(1, 12)], "junk"]
    expected, calls, history = mpi_sentinel_main._state("\n".join(lines).encode())
    assert expected and calls == 11 and history == [f"c{i}" for i in range(4, 12)]
    assert not mpi_sentinel_main._state(b"join\ngoodbye\n")[0]


def test_no_sentinel_without_a_pmi_socket(monkeypatch):
    monkeypatch.delenv("PMI_FD", raising=False)
    assert mpi_sentinel.start(0, 2) is False

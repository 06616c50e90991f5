"""A local TensorFlow multi-worker cluster: W processes, one MultiWorkerMirroredStrategy each.

:class:`WorkerPool` starts W processes (``python -m simdist.testing.adapters.tf_cluster``),
each with a ``TF_CONFIG`` naming its task in a cluster of localhost ports. Each imports
TensorFlow once, creates its strategy once, reports ready, then runs the worker programs
of :mod:`simdist.testing.adapters.worker_program` sent to it, answering each over its
stdout. A pool is started once and fed many examples, because a TensorFlow process takes
seconds to start. A worker that fails or a request that outlasts its timeout takes the
whole pool down (TensorFlow's collectives cannot recover from a lost peer); the next
request starts a fresh pool.

Frames on the pipes are an 8-byte big-endian length, then a pickle.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import select
import socket
import struct
import subprocess
import sys
import tempfile
import time
from typing import Any

_HEADER = struct.Struct(">Q")


class ClusterError(RuntimeError):
    """A worker of the local TensorFlow cluster failed, died or timed out."""


def free_ports(count: int) -> list[int]:
    """``count`` distinct localhost ports free right now (bound, then released together)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("localhost", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def _frame(obj: Any) -> bytes:
    body = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(body)) + body


class WorkerPool:
    """W TensorFlow worker processes with a MultiWorkerMirroredStrategy each.

    Args:
      workers: the number of worker processes.
      python: the interpreter to run them with (default: this one).
      start_timeout: seconds for every worker to import TensorFlow and create its strategy.
      request_timeout: seconds a request may take on every worker.
    """

    def __init__(
        self,
        workers: int,
        python: str | None = None,
        start_timeout: float = 180.0,
        request_timeout: float = 60.0,
    ) -> None:
        self.workers = workers
        self.request_timeout = request_timeout
        self._logs = tempfile.TemporaryDirectory(prefix="simdist-tf-cluster-")
        addresses = [f"localhost:{p}" for p in free_ports(workers)]
        env = dict(os.environ)
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env["CUDA_VISIBLE_DEVICES"] = "-1"
        self._procs: list[subprocess.Popen] = []
        self._buffers: list[bytearray] = []
        for w in range(workers):
            config = {"cluster": {"worker": addresses}, "task": {"type": "worker", "index": w}}
            env["TF_CONFIG"] = json.dumps(config)
            log = open(self._log_path(w), "wb")
            proc = subprocess.Popen(
                [python or sys.executable, "-m", "simdist.testing.adapters.tf_cluster"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=log,
                env=dict(env),
            )
            log.close()
            self._procs.append(proc)
            self._buffers.append(bytearray())
        ready = self._collect(start_timeout, "start")
        self.num_replicas_in_sync = ready[0]

    def _log_path(self, w: int) -> str:
        return os.path.join(self._logs.name, f"worker{w}.log")

    def _log_tail(self, w: int, chars: int = 1500) -> str:
        with contextlib.suppress(OSError), open(self._log_path(w), "rb") as f:
            return f.read().decode("utf-8", "replace")[-chars:]
        return ""

    @property
    def alive(self) -> bool:
        """Whether every worker process is still running."""
        return bool(self._procs) and all(p.poll() is None for p in self._procs)

    def run(self, program: str, kwargs: dict) -> list[Any]:
        """Runs ``program`` on every worker; each worker's result, worker order.

        Raises:
          ClusterError: a worker raised (its exception's class and message), died, or the
            request timed out; the pool is closed.
        """
        if not self.alive:
            raise ClusterError("the TensorFlow worker pool is closed")
        request = _frame((program, kwargs))
        for proc in self._procs:
            proc.stdin.write(request)
            proc.stdin.flush()
        return self._collect(self.request_timeout, program)

    def _collect(self, timeout: float, what: str) -> list[Any]:
        deadline = time.monotonic() + timeout
        results: dict[int, Any] = {}
        while len(results) < self.workers:
            pending = {self._procs[w].stdout.fileno(): w for w in range(self.workers)}
            pending = {fd: w for fd, w in pending.items() if w not in results}
            left = deadline - time.monotonic()
            ready = select.select(list(pending), [], [], max(left, 0))[0] if left > 0 else []
            if not ready:
                self.close(kill=True)
                raise ClusterError(
                    f"TensorFlow workers {sorted(pending.values())} did not answer {what!r} "
                    f"within {timeout:.0f} s"
                )
            for fd in ready:
                w = pending[fd]
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    tail = self._log_tail(w)
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        self._procs[w].wait(timeout=5)
                    code = self._procs[w].returncode
                    self.close(kill=True)
                    raise ClusterError(
                        f"TensorFlow worker {w} died (exit status {code}) during {what!r}; "
                        f"the end of its log:\n{tail}"
                    )
                self._buffers[w] += chunk
                reply = self._take_frame(w)
                if reply is None:
                    continue
                if reply[0] == "error":
                    self.close(kill=True)
                    raise ClusterError(f"TensorFlow worker {w}: {reply[1]}: {reply[2]}")
                results[w] = reply[1]
        return [results[w] for w in range(self.workers)]

    def _take_frame(self, w: int) -> Any:
        buffer = self._buffers[w]
        if len(buffer) < _HEADER.size:
            return None
        (size,) = _HEADER.unpack(buffer[: _HEADER.size])
        if len(buffer) < _HEADER.size + size:
            return None
        body = bytes(buffer[_HEADER.size : _HEADER.size + size])
        del buffer[: _HEADER.size + size]
        return pickle.loads(body)

    def close(self, kill: bool = False) -> None:
        """Stops every worker process: at once with ``kill``, else at EOF of its requests
        (a worker that hangs is killed after 5 s)."""
        for proc in self._procs:
            if kill and proc.poll() is None:
                proc.kill()
        for proc in self._procs:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        for proc in self._procs:
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            with contextlib.suppress(OSError):
                proc.stdout.close()
        self._procs = []
        self._logs.cleanup()


def _read_frame(stream) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        return None
    (size,) = _HEADER.unpack(header)
    return pickle.loads(stream.read(size))


def worker_main() -> None:
    """A worker process: create the strategy, report ready, serve requests until EOF."""
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to the log, not into the protocol
    import tensorflow as tf

    from simdist.testing.adapters import worker_program

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    protocol.write(_frame(("ok", int(strategy.num_replicas_in_sync))))
    protocol.flush()
    while (request := _read_frame(sys.stdin.buffer)) is not None:
        program, kwargs = request
        try:
            reply = ("ok", worker_program.run(tf, strategy, program, kwargs))
        except Exception as error:  # noqa: BLE001 - reported to the parent
            reply = ("error", type(error).__name__, str(error)[:2000])
        protocol.write(_frame(reply))
        protocol.flush()


if __name__ == "__main__":
    worker_main()

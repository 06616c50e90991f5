"""The start-up rendezvous of TF_CONFIG processes: a mesh of authenticated links.

Worker ``i`` listens on its own address from ``TF_CONFIG`` (that address only: the host and
port it names, never a wildcard), connects to every worker below it and accepts every worker
above it. Each link is a ``multiprocessing.connection.Connection`` over TCP:

* both ends prove they hold the job key with the standard library's HMAC challenge
  (``deliver_challenge`` / ``answer_challenge``: a random challenge answered with an HMAC of
  the key, each way); a peer without the key is refused and the listener goes on waiting
  for the real one;
* then the connecting worker says who it is (a ``hello`` message: its index and the
  cluster's size), checked against what this worker expects;
* after that, each link has a reader thread that decodes whole messages
  (:mod:`simdist.backends.wire`, never pickle) into the link's inbox, so a sender never
  blocks on a peer that is itself sending; a closed connection puts :data:`CLOSED` there.
  A data-plane array travels as a small ``("array", call, tag, dtype, shape)`` header and
  then its raw bytes (no copy on the way out, one buffer on the way in).

Every step has the start-up deadline; a handshake that stalls (a client that connects and
says nothing) only ever holds its own thread.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import queue
import socket
import threading
import time
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge

import numpy as np

from simdist import errors
from simdist.backends import wire

__all__ = ["CLOSED", "Link", "split_address", "open_mesh"]

CLOSED = object()  # put in a link's inbox when the connection is gone
_HELLO_LIMIT = 4096  # bytes: a hello is a few dozen


class Link:
    """One authenticated connection to a peer, with a reader thread filling ``inbox``."""

    def __init__(self, peer: int, sock: socket.socket, conn: Connection) -> None:
        self.peer = peer
        # No Nagle: a data-plane array is two writes (header, bytes), and the second would
        # wait for the peer's delayed ACK of the first (40 ms on Linux) before it is sent.
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        self._conn = conn
        self._send_lock = threading.Lock()
        self.inbox: queue.SimpleQueue = queue.SimpleQueue()
        self.closed = False
        self._reader = threading.Thread(target=self._read, name=f"simdist-link-{peer}", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                data = self._conn.recv_bytes()
            except (EOFError, OSError):
                self.inbox.put(CLOSED)
                return
            try:
                message = wire.decode(data)
                if isinstance(message, tuple) and message[:1] == ("array",):
                    message = self._array(message)
            except ValueError as exc:  # a garbled message is a broken peer
                self.inbox.put(("garbled", str(exc)))
                self.inbox.put(CLOSED)
                return
            except (EOFError, OSError):
                self.inbox.put(CLOSED)
                return
            self.inbox.put(message)

    def _array(self, header: tuple) -> tuple:
        """``("array", call, tag, dtype, shape)`` is followed by the array's raw bytes:
        returns ``("data", call, tag, array)``."""
        if len(header) != 5 or not isinstance(header[4], tuple):
            raise ValueError(f"a malformed array header {header!r}")
        dtype = np.dtype(header[3]) if isinstance(header[3], str) else None
        if dtype is None or dtype.kind not in "biufc" or dtype.str != header[3]:
            raise ValueError(f"an array header with dtype {header[3]!r}")
        shape = header[4]
        if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
            raise ValueError(f"an array header with shape {shape!r}")
        raw = self._conn.recv_bytes()
        if len(raw) != math.prod(shape) * dtype.itemsize:
            raise ValueError(f"{len(raw)} bytes for a {dtype} array of shape {shape}")
        return ("data", header[1], header[2], np.frombuffer(raw, dtype=dtype).reshape(shape))

    def send(self, message, encoded: bytes | None = None) -> None:
        """Send one message (``encoded``: its :func:`wire.encode` bytes, when already made);
        ``OSError`` when the peer is gone."""
        data = wire.encode(message) if encoded is None else encoded
        with self._send_lock:
            self._conn.send_bytes(data)

    def send_array(self, call: int, tag: int, array: np.ndarray) -> None:
        """Send a data-plane array as a small header and its raw bytes, with no copy; the
        peer's inbox gets ``("data", call, tag, array)`` (a read-only array)."""
        array = np.ascontiguousarray(array)
        header = wire.encode(("array", call, tag, array.dtype.str, tuple(array.shape)))
        with self._send_lock:
            self._conn.send_bytes(header)
            self._conn.send_bytes(memoryview(array.reshape(-1).view(np.uint8)))

    def close(self) -> None:
        """Shut the connection down; the reader sees the end and stops, then both
        descriptors are closed (not under the reader's feet)."""
        if self.closed:
            return
        self.closed = True
        _shutdown(self._sock)
        if threading.current_thread() is not self._reader:
            self._reader.join(timeout=1.0)
        if not self._reader.is_alive():
            self._conn.close()
            self._sock.close()


def split_address(address: str) -> tuple[str, int]:
    """``"host:port"`` (or ``"[v6]:port"``) as ``(host, port)``.

    Raises:
        ValueError: no port, or a port outside 1..65535.
    """
    text = address.split("://", 1)[-1]
    host, sep, port = text.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"address {address!r} is not host:port with a port in 1..65535")
    return host, int(port)


def _family(host: str) -> int:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


def _handshake(sock: socket.socket, key: bytes, server: bool, deadline: float) -> Connection:
    """The HMAC challenge both ways on a blocking socket; past ``deadline`` the socket is
    shut down, which ends a handshake that a silent peer stalls."""
    sock.settimeout(None)
    conn = Connection(os.dup(sock.fileno()))  # its own descriptor; shutdown reaches both
    timer = threading.Timer(max(deadline - time.monotonic(), 0.0), _shutdown, (sock,))
    timer.daemon = True
    timer.start()
    try:
        if server:
            deliver_challenge(conn, key)
            answer_challenge(conn, key)
        else:
            answer_challenge(conn, key)
            deliver_challenge(conn, key)
    except BaseException:
        conn.close()
        raise
    finally:
        timer.cancel()
    return conn


def _shutdown(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def open_mesh(
    addresses: list[str], names: list[str], index: int, key: bytes, timeout: float
) -> dict[int, Link]:
    """Connect worker ``index`` to every other worker; return ``{peer: Link}``.

    Raises:
        ValueError: this worker's own address cannot be listened on here.
        DeadlineExceededError: a peer was not reached within ``timeout`` seconds (names
            the missing workers, and any connection refused for a wrong key).
    """
    deadline = time.monotonic() + timeout
    count = len(addresses)
    host, port = split_address(addresses[index])
    listener = socket.socket(_family(host), socket.SOCK_STREAM)
    try:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind((host, port))
        listener.listen(count)
    except OSError as exc:
        listener.close()
        raise ValueError(
            f"worker {index} ({names[index]}) cannot listen on its TF_CONFIG address "
            f"{addresses[index]}: {exc}. Run this task on the host that address names, with "
            "the port free, or correct TF_CONFIG."
        ) from None
    links: dict[int, Link] = {}
    refused: list[str] = []
    lock = threading.Lock()
    done = threading.Event()
    expected = set(range(index + 1, count))

    def admit(sock: socket.socket, peer_address) -> None:
        conn = None
        try:
            conn = _handshake(sock, key, True, deadline)
            if not conn.poll(max(deadline - time.monotonic(), 0.0)):
                raise TimeoutError("no hello")
            hello = wire.decode(conn.recv_bytes(_HELLO_LIMIT))
        except (OSError, EOFError, ValueError, multiprocessing.AuthenticationError) as exc:
            with lock:
                refused.append(f"{peer_address[0]}:{peer_address[1]} ({type(exc).__name__})")
            if conn is not None:
                conn.close()
            sock.close()
            return
        ok = (
            isinstance(hello, tuple)
            and len(hello) == 3
            and hello[0] == "hello"
            and hello[2] == count
        )
        with lock:
            if not ok or hello[1] not in expected or hello[1] in links:
                refused.append(f"{peer_address[0]}:{peer_address[1]} (unexpected hello)")
                conn.close()
                sock.close()
                return
            links[hello[1]] = Link(hello[1], sock, conn)
            if expected <= links.keys():
                done.set()

    def accept_loop() -> None:
        while not done.is_set():
            try:
                sock, peer_address = listener.accept()
            except OSError:
                return  # closed: the rendezvous is over
            threading.Thread(target=admit, args=(sock, peer_address), daemon=True).start()

    if expected:
        threading.Thread(target=accept_loop, name="simdist-accept", daemon=True).start()
    else:
        done.set()
    try:
        for peer in range(index):
            links[peer] = _connect(peer, addresses[peer], names, index, count, key, deadline)
        if not done.wait(max(deadline - time.monotonic(), 0.0)):
            with lock:
                missing = sorted(expected - links.keys())
            raise errors.DeadlineExceededError(
                None,
                None,
                f"worker {index} ({names[index]}) waited {timeout:g} s for worker(s) "
                f"{[f'{p} ({names[p]})' for p in missing]} to connect to {addresses[index]}"
                + (f"; refused: {', '.join(refused)}" if refused else "")
                + ". Start every task of the cluster (the same TF_CONFIG cluster, each its "
                "own task), with the same SIMDIST_JOB_KEY if one is set; raise "
                "SIMDIST_WORKER_TIMEOUT if they start slowly.",
            )
    except BaseException:
        for link in links.values():
            link.close()
        raise
    finally:
        done.set()
        listener.close()
    return links


def _connect(
    peer: int, address: str, names: list[str], index: int, count: int, key: bytes, deadline
) -> Link:
    host, port = split_address(address)
    last: BaseException | None = None
    while time.monotonic() < deadline:
        sock = socket.socket(_family(host), socket.SOCK_STREAM)
        try:
            sock.settimeout(max(min(deadline - time.monotonic(), 5.0), 0.01))
            sock.connect((host, port))
            conn = _handshake(sock, key, False, deadline)
            link = Link(peer, sock, conn)
            link.send(("hello", index, count))
            return link
        except multiprocessing.AuthenticationError as exc:
            sock.close()
            raise errors.UnauthenticatedError(
                None,
                None,
                f"worker {index} ({names[index]}) reached worker {peer} ({names[peer]}) at "
                f"{address}, but the two hold different job keys ({exc}): start every task "
                "with the same TF_CONFIG cluster and the same SIMDIST_JOB_KEY (or none).",
            ) from None
        except (OSError, EOFError) as exc:
            sock.close()
            last = exc
            time.sleep(0.05)
    raise errors.DeadlineExceededError(
        None,
        None,
        f"worker {index} ({names[index]}) could not reach worker {peer} ({names[peer]}) at "
        f"{address} before the deadline ({type(last).__name__}: {last}). Is that task "
        "running? Raise SIMDIST_WORKER_TIMEOUT if the tasks start slowly.",
    )

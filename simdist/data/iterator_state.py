"""An iterator's input position as checkpoint state: how many pulls, and which epochs.

``tf.train.Checkpoint(iterator=iter(dataset))`` saves where the input stands, so a restored
run continues with the very next element (TF saves the buffers and random states of every
dataset op). simdist saves less and recomputes: an iterator's state is

* ``pulls``: how many elements (or distributed steps) it has handed out;
* ``draws``: every epoch number its shuffle ops took, in order (``Dataset.shuffle`` with
  ``reshuffle_each_iteration`` orders epoch ``e`` by ``(seeds, e)``; the epoch counter lives
  on the dataset, so it depends on how many iterations came before);
* ``counters``: each shuffle op's next epoch number at save time;
* ``pipeline``: the class names of the pipeline's shuffle ops, to refuse a different
  pipeline.

Restoring makes a fresh iterator of the live dataset, replays it: the recorded epochs are
given to the shuffle ops in the same order and ``pulls`` elements are drawn and dropped,
then sets the shuffle ops' counters to the saved ones (as TF restores their seed
generators). Because every simdist pipeline is deterministic given its seeds, the next
element is the one the saved run would have seen. The cost is recomputing ``pulls``
elements on restore. ``from_generator`` (Python state simdist cannot replay) is refused
at save time, as TF refuses it (``FailedPreconditionError``).

The state is stored as UTF-8 JSON bytes in a ``uint8`` array (``ITERATOR_STATE``), so the
checkpoint format stays arrays only.
"""

from __future__ import annotations

import contextvars
import json
import threading
from collections.abc import Callable

import numpy as np

from simdist import errors

__all__ = ["EpochCounter", "Position", "ITERATOR_STATE"]

ITERATOR_STATE = "ITERATOR_STATE"
_FORMAT = "simdist-iterator"
_active: contextvars.ContextVar = contextvars.ContextVar("simdist_position", default=None)
# the Position pulling in this thread (context), or None


class EpochCounter:
    """A dataset op's epoch counter (``next(counter)`` -> 0, 1, 2...), seen by positions."""

    def __init__(self) -> None:
        self._next = 0
        self._lock = threading.Lock()

    def _take(self) -> int:
        with self._lock:
            epoch = self._next
            self._next += 1
            return epoch

    def __next__(self) -> int:
        position = _active.get()
        if position is None:
            return self._take()
        return position._draw(self)

    def __iter__(self) -> EpochCounter:
        return self


def _stateful_nodes(roots: list) -> list:
    """The dataset ops under ``roots`` (depth first, parents in order) with a counter."""
    out, seen = [], set()
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(getattr(node, "_epochs", None), EpochCounter):
            out.append(node)
        stack.extend(reversed(node._inputs()))
    return out


def _unsaveable(roots: list) -> list[str]:
    out, seen = [], set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        name = getattr(node, "_not_replayable", None)
        if name:
            out.append(name)
        stack.extend(node._inputs())
    return sorted(set(out))


class Position:
    """Counts one iterator's pulls and records its epoch draws over the datasets ``roots``.

    Args:
        roots: the datasets the iterator reads (one, or one per input pipeline).
        kind: what iterates (``"Iterator"``, ``"DistributedIterator/2"``), checked on restore.
    """

    def __init__(self, roots: list, kind: str) -> None:
        self._roots = list(roots)
        self._kind = kind
        self._nodes = _stateful_nodes(self._roots)
        self._index = {id(node._epochs): i for i, node in enumerate(self._nodes)}
        self._draws: list[list[int]] = []
        self._forced: dict[int, list[int]] = {}
        self.pulls = 0

    def _draw(self, counter: EpochCounter) -> int:
        index = self._index.get(id(counter))
        forced = self._forced.get(index) if index is not None else None
        epoch = forced.pop(0) if forced else counter._take()
        if index is not None:
            self._draws.append([index, epoch])
        return epoch

    def pull(self, fn: Callable):
        """``fn()`` with this position recording; counted even when it raises StopIteration."""
        token = _active.set(self)
        try:
            self.pulls += 1
            return fn()
        finally:
            _active.reset(token)

    # --- the saved state ------------------------------------------------------------------
    def state(self) -> np.ndarray:
        """The position as ``uint8`` JSON bytes.

        Raises:
            FailedPreconditionError: the pipeline holds an op that cannot be replayed.
        """
        bad = _unsaveable(self._roots)
        if bad:
            raise errors.FailedPreconditionError(
                f"Cannot checkpoint this iterator: its input pipeline uses {', '.join(bad)} "
                "(a Python generator keeps state simdist cannot save; TF refuses it too: "
                "'PyFunc is stateful'). Build the input from tensors, range, files or map "
                "instead, or leave the iterator out of the checkpoint."
            )
        document = {
            "format": _FORMAT,
            "version": 1,
            "kind": self._kind,
            "pulls": self.pulls,
            "draws": self._draws,
            "counters": [node._epochs._next for node in self._nodes],
            "pipeline": [type(node).__name__ for node in self._nodes],
        }
        return np.frombuffer(json.dumps(document).encode("utf-8"), dtype=np.uint8).copy()

    def check(self, array: np.ndarray) -> dict:
        """Parse and check a saved state against this position's pipeline.

        Raises:
            ValueError: not an iterator state, or one of another kind or pipeline.
        """
        try:
            document = json.loads(np.asarray(array, np.uint8).tobytes().decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, TypeError) as exc:
            raise ValueError(f"the saved iterator state is not readable ({exc})") from None
        if not isinstance(document, dict) or document.get("format") != _FORMAT:
            raise ValueError("the saved value is not an iterator state")
        if document.get("kind") != self._kind:
            raise ValueError(
                f"it was saved from a {document.get('kind')}, this is a {self._kind}: "
                "restore into an iterator of the same kind (and number of replicas)"
            )
        pipeline = [type(node).__name__ for node in self._nodes]
        draws = document.get("draws")
        counters = document.get("counters")
        if (
            document.get("pipeline") != pipeline
            or not isinstance(counters, list)
            or len(counters) != len(pipeline)
            or not isinstance(draws, list)
            or any(not isinstance(d, list) or len(d) != 2 for d in draws)
            or any(not 0 <= d[0] < len(pipeline) for d in draws)
            or not isinstance(document.get("pulls"), int)
        ):
            raise ValueError(
                "it was saved from a different input pipeline (other shuffle ops); build the "
                "dataset the same way as the one that was saved"
            )
        return document

    def replay(self, document: dict, pull_once: Callable[[], object]) -> None:
        """Bring a fresh source to the saved position (``document`` from :meth:`check`)."""
        self._draws = []
        self._forced = {}
        for index, epoch in document["draws"]:
            self._forced.setdefault(index, []).append(int(epoch))
        self.pulls = 0
        for _ in range(document["pulls"]):
            self.pull(pull_once)
        self._forced = {}
        for node, value in zip(self._nodes, document["counters"], strict=True):
            with node._epochs._lock:
                node._epochs._next = int(value)

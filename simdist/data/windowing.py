"""``Dataset.window``: elements grouped into windows, each window a dataset.

As TF's ``WindowDataset``: window ``i`` starts at input element ``i * shift`` and holds the
elements ``start, start + stride, ...``, at most ``size`` of them; windows start while the
input has an element at their start, so the last ones may be shorter, and
``drop_remainder=True`` drops every window with fewer than ``size`` elements. An element
that is a structure (tuple, dict) gives the same structure of windows, one dataset per
component. The input is read once, keeping only the elements a later window still needs.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from simdist import errors
from simdist.core import nest
from simdist.data import structure
from simdist.data.dataset import INFINITE, UNKNOWN, Dataset, as_count
from simdist.data.dataset_spec import DatasetSpec

__all__ = ["ElementsDataset", "WindowDataset"]


class ElementsDataset(Dataset):
    """Given elements (NumPy structures of ``spec``), as a dataset: one window."""

    def __init__(self, elements: list, spec: Any) -> None:
        super().__init__()
        self._elements, self._spec = elements, spec

    def _compute_element_spec(self) -> Any:
        return self._spec

    def _cardinality(self) -> int:
        return len(self._elements)

    def _iterate(self):
        yield from self._elements


def _positive(value, name: str) -> int:
    n = as_count(value, name)
    if n <= 0:
        raise errors.InvalidArgumentError(f"Window {name} must be greater than zero, got {n}.")
    return n


class WindowDataset(Dataset):
    """Windows of ``size`` elements every ``shift`` elements, ``stride`` apart."""

    _yields_datasets = True

    def __init__(self, input_dataset: Dataset, size, shift, stride, drop_remainder) -> None:
        super().__init__((input_dataset,))
        self._size = _positive(size, "size")
        self._shift = self._size if shift is None else _positive(shift, "shift")
        self._stride = _positive(stride, "stride")
        if not isinstance(drop_remainder, bool):
            drop_remainder = bool(getattr(drop_remainder, "numpy", lambda: drop_remainder)())
        self._drop_remainder = drop_remainder

    def _compute_element_spec(self) -> Any:
        return nest.map_structure(DatasetSpec, self._input_datasets[0].element_spec)

    def _cardinality(self) -> int:
        n = self._input_datasets[0]._cardinality()
        if n in (INFINITE, UNKNOWN):
            return n
        if not self._drop_remainder:
            return -(-n // self._shift)
        span = (self._size - 1) * self._stride + 1
        return 0 if n < span else (n - span) // self._shift + 1

    def _iterate(self):
        span = (self._size - 1) * self._stride + 1
        inner_spec = self._input_datasets[0].element_spec
        leaf_specs = nest.flatten(inner_spec)
        source = self._input_datasets[0]._iterate()
        buffer: deque = deque()  # the input elements from the current window's start on
        exhausted, skip = False, 0
        while True:
            while skip and not exhausted:  # a shift longer than the buffer held
                if next(source, _END) is _END:
                    exhausted = True
                skip -= 1
            while not exhausted and len(buffer) < span:
                element = next(source, _END)
                if element is _END:
                    exhausted = True
                else:
                    buffer.append(element)
            if not buffer:
                return
            members = [buffer[i] for i in range(0, min(span, len(buffer)), self._stride)]
            if len(members) == self._size or not self._drop_remainder:
                yield self._window(members, inner_spec, leaf_specs)
            elif exhausted:  # every later window is shorter still
                return
            drop = min(self._shift, len(buffer))
            for _ in range(drop):
                buffer.popleft()
            skip = self._shift - drop

    @staticmethod
    def _window(members: list, inner_spec: Any, leaf_specs: list) -> Any:
        columns = zip(*(structure.flatten(m) for m in members), strict=True)
        datasets = [
            ElementsDataset(list(column), spec)
            for column, spec in zip(columns, leaf_specs, strict=True)
        ]
        return structure.pack(inner_spec, datasets) if datasets else ()


_END = object()

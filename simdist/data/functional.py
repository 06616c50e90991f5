"""Transformations that call user functions: ``map``, ``filter``, ``flat_map``, ``interleave``,
``scan`` and ``take_while``.

TF traces the function once into a graph; simdist calls it eagerly, once per element, in
order, with the element's components as host-CPU Tensors: ``fn(*element)`` when the element
is a plain tuple, ``fn(element)`` otherwise (dicts and namedtuples come whole). Python side
effects therefore run per element, not once at trace time.

The function's result becomes an element by ``tf.data``'s rules: a top-level list counts
as a tuple; other lists, Python numbers and NumPy arrays become tensors.

``element_spec`` of these nodes is found by calling the function on two stand-in elements
of the input's spec (all ones, then all twos, with unknown dimensions 2 then 3): a result
dimension that differs between the two comes out as ``None``, as TF's symbolic trace
would give it. This happens only when the spec
is asked for (``element_spec``, ``repr``, a downstream spec); if the function rejects the
stand-ins, the first real input element is used instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from simdist import errors
from simdist.data import structure
from simdist.data.dataset import UNKNOWN, Dataset, as_count
from simdist.data.options import AUTOTUNE

__all__ = [
    "DEFAULT_CYCLE_LENGTH",
    "FilterDataset",
    "InterleaveDataset",
    "MapDataset",
    "ScanDataset",
    "TakeWhileDataset",
]

# TF's default cycle length is the machine's CPU count; simdist fixes one so that the order
# of an interleave does not depend on the machine.
DEFAULT_CYCLE_LENGTH = 16


def call_with_element(fn: Callable, element: Any) -> Any:
    """Call ``fn`` on a NumPy element, as tf.data does (tuples unpacked)."""
    tensors = structure.to_tensors(element)
    if type(tensors) is tuple:
        return fn(*tensors)
    return fn(tensors)


def normalize_result(value: Any, what: str) -> Any:
    """A function's result as an element (top-level list -> tuple)."""
    if isinstance(value, list):
        value = tuple(value)
    return structure.normalize(value, what)


def probe_spec(dataset: Dataset, fn: Callable, result_spec: Callable[[Any], Any]) -> Any:
    """The spec of ``result_spec(fn(element))`` over all elements of ``dataset``'s spec.

    ``fn`` is first called on two stand-in elements (TF traces it on the spec instead). A
    function may reject stand-in values (any exception): then the first real element
    decides, and an error there propagates; with no real element the error says so and
    carries the stand-in's exception as its cause.
    """
    spec = dataset.element_spec
    try:
        first = result_spec(call_with_element(fn, structure.dummy_element(spec, 2, fill=1)))
        second = result_spec(call_with_element(fn, structure.dummy_element(spec, 3, fill=2)))
        return structure.most_specific_spec(first, second, "function results")
    except Exception as error:  # noqa: BLE001 - any; a real element decides, or it is the cause
        stand_in_error = error
    for element in dataset._iterate():
        return result_spec(call_with_element(fn, element))
    raise ValueError(
        "Cannot infer the element_spec: the function fails on stand-in inputs "
        f"({type(stand_in_error).__name__}: {stand_in_error}) and the input dataset is empty."
    ) from stand_in_error


def _check_parallel_calls(num_parallel_calls) -> None:
    if num_parallel_calls is None:
        return
    n = as_count(num_parallel_calls, "num_parallel_calls")
    if n != AUTOTUNE and n <= 0:
        raise errors.InvalidArgumentError(
            f"num_parallel_calls must be positive or tf.data.AUTOTUNE (-1), got {n}."
        )


class _MapDataset(Dataset):
    """``map_func`` applied to every element (``Dataset.map``).

    ``num_parallel_calls`` and ``deterministic`` are validated and otherwise have no effect:
    elements are produced in order.
    """

    def __init__(self, input_dataset: Dataset, map_func: Callable, num_parallel_calls) -> None:
        if not callable(map_func):
            raise TypeError(f"`map_func` must be callable, got {type(map_func).__name__}.")
        _check_parallel_calls(num_parallel_calls)
        super().__init__((input_dataset,))
        self._map_func = map_func

    def _compute_element_spec(self) -> Any:
        return probe_spec(
            self._input_datasets[0],
            self._map_func,
            lambda r: structure.spec_of(normalize_result(r, "map result")),
        )

    def _cardinality(self) -> int:
        return self._input_datasets[0]._cardinality()

    def _iterate(self):
        fn = self._map_func
        for element in self._input_datasets[0]._iterate():
            yield normalize_result(call_with_element(fn, element), "map result")


class _FilterDataset(Dataset):
    """The elements for which ``predicate`` gives a scalar ``True`` (``Dataset.filter``)."""

    _what = "filter result"

    def __init__(self, input_dataset: Dataset, predicate: Callable) -> None:
        if not callable(predicate):
            raise TypeError(f"`predicate` must be callable, got {type(predicate).__name__}.")
        super().__init__((input_dataset,))
        self._predicate = predicate

    def _compute_element_spec(self) -> Any:
        return self._input_datasets[0].element_spec

    def _cardinality(self) -> int:
        return UNKNOWN

    def _keep(self, element: Any) -> bool:
        result = normalize_result(call_with_element(self._predicate, element), self._what)
        ok = isinstance(result, np.ndarray) and result.dtype == np.bool_ and result.ndim == 0
        if not ok:
            spec = structure.spec_of(result)
            raise ValueError(
                f"`predicate` return type must be convertible to a scalar boolean tensor. "
                f"Was {spec}. Return a scalar tf.bool (for example with tf.equal or a "
                "comparison)."
            )
        return bool(result)

    def _iterate(self):
        for element in self._input_datasets[0]._iterate():
            if self._keep(element):
                yield element


class _TakeWhileDataset(_FilterDataset):
    """The elements up to the first one for which ``predicate`` is ``False``
    (``Dataset.take_while``)."""

    _what = "take_while predicate result"

    def _iterate(self):
        for element in self._input_datasets[0]._iterate():
            if not self._keep(element):
                return
            yield element


class _ScanDataset(Dataset):
    """``Dataset.scan``: ``(state, out) = scan_func(state, element)`` over the elements,
    emitting ``out``; the state starts at ``initial_state`` on every iteration.

    As TF: ``scan_func`` is called as ``scan_func(state, element)`` (the element is not
    unpacked), and the new state must keep the initial state's structure and dtypes.
    """

    def __init__(self, input_dataset: Dataset, initial_state: Any, scan_func: Callable) -> None:
        if not callable(scan_func):
            raise TypeError(f"`scan_func` must be callable, got {type(scan_func).__name__}.")
        super().__init__((input_dataset,))
        self._initial = structure.normalize(initial_state, "scan initial state")
        self._state_spec = structure.spec_of(self._initial)
        self._scan_func = scan_func

    def _step(self, state: Any, element: Any) -> tuple[Any, Any]:
        result = self._scan_func(structure.to_tensors(state), structure.to_tensors(element))
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise TypeError(
                "`scan_func` must return a pair (new_state, output_element), got "
                f"{type(result).__name__}."
            )
        new_state = structure.normalize(result[0], "scan state")
        try:
            structure.most_specific_spec(self._state_spec, structure.spec_of(new_state))
        except TypeError as exc:
            raise TypeError(
                f"`scan_func` changed the state's structure or dtypes: it started as "
                f"{self._state_spec} and came back as {structure.spec_of(new_state)}."
            ) from exc
        return new_state, normalize_result(result[1], "scan output")

    def _compute_element_spec(self) -> Any:
        spec = self._input_datasets[0].element_spec
        try:
            outs = [
                structure.spec_of(self._step(self._initial, structure.dummy_element(spec, n, f))[1])
                for n, f in ((2, 1), (3, 2))
            ]
            return structure.most_specific_spec(*outs, "scan outputs")
        except Exception as error:  # noqa: BLE001 - a real element decides, as in probe_spec
            stand_in_error = error
        for element in self._input_datasets[0]._iterate():
            return structure.spec_of(self._step(self._initial, element)[1])
        raise ValueError(
            "Cannot infer the element_spec of scan: `scan_func` fails on stand-in inputs "
            f"({type(stand_in_error).__name__}: {stand_in_error}) and the input is empty."
        ) from stand_in_error

    def _cardinality(self) -> int:
        return self._input_datasets[0]._cardinality()

    def _iterate(self):
        state = self._initial
        for element in self._input_datasets[0]._iterate():
            state, out = self._step(state, element)
            yield out


class _InterleaveDataset(Dataset):
    """Round-robin over the datasets ``map_func`` makes (``interleave``; ``flat_map``).

    TF's order: ``cycle_length`` slots are filled in turn with the datasets of the next
    input elements; each visit takes up to ``block_length`` elements from a slot's dataset,
    then moves to the next slot; a slot whose dataset ends is refilled when the cycle comes
    back to it. ``flat_map`` is the case ``cycle_length = block_length = 1``.
    """

    def __init__(self, input_dataset, map_func, cycle_length, block_length, flat=False) -> None:
        if not callable(map_func):
            raise TypeError(f"`map_func` must be callable, got {type(map_func).__name__}.")
        super().__init__((input_dataset,))
        self._map_func = map_func
        self._flat = flat
        cycle = AUTOTUNE if cycle_length is None else as_count(cycle_length, "cycle_length")
        block = 1 if block_length is None else as_count(block_length, "block_length")
        if cycle == AUTOTUNE:
            cycle = DEFAULT_CYCLE_LENGTH
        if cycle <= 0:
            raise errors.InvalidArgumentError(
                f"cycle_length must be greater than zero (or tf.data.AUTOTUNE), got {cycle}."
            )
        if block <= 0:
            raise errors.InvalidArgumentError(
                f"block_length must be greater than zero, got {block}."
            )
        self._cycle_length, self._block_length = cycle, block

    def _dataset_for(self, element: Any) -> Dataset:
        out = call_with_element(self._map_func, element)
        if not isinstance(out, Dataset):
            name = "flat_map" if self._flat else "interleave"
            raise TypeError(
                f"The `map_func` given to {name} must return a tf.data.Dataset, got "
                f"{type(out).__name__}."
            )
        return out

    def _compute_element_spec(self) -> Any:
        return probe_spec(
            self._input_datasets[0], self._map_func, lambda d: _dataset_spec(d, self._flat)
        )

    def _cardinality(self) -> int:
        return UNKNOWN

    def _iterate(self):
        inputs = self._input_datasets[0]._iterate()
        slots: list = [None] * self._cycle_length
        open_count, index, input_done = 0, 0, False
        while not input_done or open_count:
            if slots[index] is None and not input_done:
                element = next(inputs, None)
                if element is None:
                    input_done = True
                    continue
                slots[index] = self._dataset_for(element)._iterate()
                open_count += 1
            current = slots[index]
            if current is not None:
                for _ in range(self._block_length):
                    value = next(current, None)
                    if value is None:
                        slots[index] = None
                        open_count -= 1
                        break
                    yield value
            index = (index + 1) % self._cycle_length


def _dataset_spec(value: Any, flat: bool) -> Any:
    if not isinstance(value, Dataset):
        name = "flat_map" if flat else "interleave"
        raise TypeError(
            f"The `map_func` given to {name} must return a tf.data.Dataset, got "
            f"{type(value).__name__}."
        )
    return value.element_spec


MapDataset = _MapDataset
FilterDataset = _FilterDataset
InterleaveDataset = _InterleaveDataset
ScanDataset = _ScanDataset
TakeWhileDataset = _TakeWhileDataset

"""``tf.nest``: flatten and rebuild nested structures of tuples, lists, dicts and namedtuples.

Dict values are visited in sorted key order, as TF does, so a flattened structure never
depends on insertion order. Everything that is not a tuple, list, dict or namedtuple (or a
mapping proxy of them) is a leaf: tensors, variables, arrays, numbers, ``None``.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["flatten", "pack_sequence_as", "map_structure", "assert_same_structure", "is_nested"]


# type -> is it nested? ``isinstance(x, Mapping)`` is an ABC check, slow for every leaf;
# cached per type, and dropped whenever an ABC registers a class (abc's cache token).
_NESTED_TYPES: dict[type, bool] = {list: True, tuple: True, dict: True}
_nested_token = [abc.get_cache_token()]


def is_nested(structure: Any) -> bool:
    token = abc.get_cache_token()
    if token != _nested_token[0]:
        _NESTED_TYPES.clear()
        _NESTED_TYPES.update({list: True, tuple: True, dict: True})
        _nested_token[0] = token
    kind = type(structure)
    nested = _NESTED_TYPES.get(kind)
    if nested is None:
        nested = isinstance(structure, (list, tuple, Mapping))
        if kind is structure.__class__:  # an object faking __class__ is not cached
            _NESTED_TYPES[kind] = nested
    return nested


def _children(structure: Any) -> list:
    kind = type(structure)
    if kind is list or kind is tuple:
        return list(structure)
    if isinstance(structure, Mapping):
        return [structure[k] for k in _sorted_keys(structure)]
    return list(structure)


def _sorted_keys(mapping: Mapping) -> list:
    try:
        return sorted(mapping)
    except TypeError as exc:
        raise TypeError(f"nest needs sortable dict keys, got {list(mapping)!r}.") from exc


def flatten(structure: Any) -> list:
    """The leaves of ``structure`` in a stable depth-first order (an explicit stack)."""
    if not is_nested(structure):
        return [structure]
    out: list = []
    stack = [structure]
    while stack:
        item = stack.pop()
        if is_nested(item):
            stack.extend(reversed(_children(item)))
        else:
            out.append(item)
    return out


def _rebuild(template: Any, children: list) -> Any:
    if isinstance(template, Mapping):
        keys = _sorted_keys(template)
        values = dict(zip(keys, children, strict=True))
        return type(template)((k, values[k]) for k in template)
    if isinstance(template, tuple) and hasattr(template, "_fields"):
        return type(template)(*children)
    if isinstance(template, tuple):
        return tuple(children)
    return list(children)


def pack_sequence_as(structure: Any, flat_sequence) -> Any:
    """Rebuild ``structure`` with its leaves replaced, in order, by ``flat_sequence``.

    Raises:
        ValueError: ``flat_sequence`` has a different number of leaves.
    """
    flat = list(flat_sequence)
    count = len(flatten(structure))
    if count != len(flat):
        raise ValueError(
            f"The structure has {count} leaves but flat_sequence has {len(flat)} elements."
        )
    return _pack(structure, iter(flat))


def _pack(template: Any, leaves) -> Any:
    # A module-level function, not a closure that refers to itself: such a closure is a
    # reference cycle that keeps every leaf (a step's activations) alive until the cycle
    # collector runs.
    if not is_nested(template):
        return next(leaves)
    return _rebuild(template, [_pack(c, leaves) for c in _children(template)])


def assert_same_structure(a: Any, b: Any, check_types: bool = True) -> None:
    """Raise ``ValueError`` (or ``TypeError`` for differing types) unless a and b match."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        kind = type(x)
        if (kind is list or kind is tuple) and type(y) is kind:
            # Plain lists and tuples (the common case: a merge_call's (gradient, variable)
            # pairs): the checks below reduce to the lengths.
            if len(x) != len(y):
                raise ValueError(
                    f"The two structures have different lengths: {len(x)} vs {len(y)}."
                )
            stack.extend(zip(x, y, strict=True))
            continue
        nested = is_nested(x)
        if nested != is_nested(y):
            raise ValueError(
                f"The two structures don't have the same nested structure: {a!r} vs {b!r}."
            )
        if not nested:
            continue
        if check_types and _kind(x) != _kind(y):
            raise TypeError(
                f"The two structures don't have the same sequence type: {type(x).__name__} vs "
                f"{type(y).__name__}."
            )
        if isinstance(x, Mapping) and _sorted_keys(x) != _sorted_keys(y):
            raise ValueError(f"The two dicts have different keys: {sorted(x)} vs {sorted(y)}.")
        cx, cy = _children(x), _children(y)
        if len(cx) != len(cy):
            raise ValueError(f"The two structures have different lengths: {len(cx)} vs {len(cy)}.")
        stack.extend(zip(cx, cy, strict=True))


def _kind(x: Any) -> type:
    kind = type(x)
    if kind is list or kind is tuple:
        return kind
    if isinstance(x, Mapping):
        return dict
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)
    return tuple if isinstance(x, tuple) else list


def map_structure(func: Callable, *structures: Any) -> Any:
    """Apply ``func`` leaf-wise over structures of the same shape."""
    if not structures:
        raise ValueError("map_structure needs at least one structure.")
    if len(structures) == 1 and not is_nested(structures[0]):
        # One leaf (a layer's single input tensor): what flatten + pack would give back.
        return func(structures[0])
    for other in structures[1:]:
        assert_same_structure(structures[0], other)
    flats = [flatten(s) for s in structures]
    return pack_sequence_as(structures[0], [func(*leaves) for leaves in zip(*flats, strict=True)])

"""Tracked lists and dicts (TF's ``ListWrapper`` / ``_DictWrapper``): containers that say
when they change, so a checkpoint restore that is waiting for a variable finds it on append.

``tf.train.Checkpoint`` wraps a list or dict assigned to one of its attributes::

    restore.listed = []                  # ListWrapper([])
    restore.restore(path)                # 'listed/0' is pending: nothing holds it yet
    restore.listed.append(v1)            # v1 takes the saved value of 'listed/0' now

They are real ``list`` / ``dict`` subclasses (``isinstance`` and equality as for the plain
container). Children are named as for plain containers: list items ``0``, ``1``...; dict
items by key, in sorted key order. Nested plain lists and dicts are saved too, but only the
outer container reports its changes.
"""

from __future__ import annotations

from simdist.core import trackable

__all__ = ["ListWrapper", "DictWrapper", "wrap"]


def _changed(method_name: str):
    method = getattr(list, method_name)

    def tracked(self, *args, **kwargs):
        result = method(self, *args, **kwargs)
        trackable.children_changed(self)
        return self if method_name == "__iadd__" else result

    tracked.__name__ = method_name
    tracked.__doc__ = method.__doc__
    return tracked


class ListWrapper(list):
    """A ``list`` that tells pending restorations about new items."""

    append = _changed("append")
    extend = _changed("extend")
    insert = _changed("insert")
    __setitem__ = _changed("__setitem__")
    __iadd__ = _changed("__iadd__")

    def _trackable_children(self) -> dict:
        return {str(i): v for i, v in enumerate(self) if trackable.is_trackable(v)}

    def __repr__(self) -> str:
        return f"ListWrapper({list.__repr__(self)})"


class DictWrapper(dict):
    """A ``dict`` that tells pending restorations about new items."""

    def __setitem__(self, key, value) -> None:
        dict.__setitem__(self, key, value)
        trackable.children_changed(self)

    def update(self, *args, **kwargs) -> None:
        dict.update(self, *args, **kwargs)
        trackable.children_changed(self)

    def setdefault(self, key, default=None):
        result = dict.setdefault(self, key, default)
        trackable.children_changed(self)
        return result

    def _trackable_children(self) -> dict:
        try:
            keys = sorted(self)
        except TypeError:
            keys = list(self)
        return {str(k): self[k] for k in keys if trackable.is_trackable(self[k])}

    def __repr__(self) -> str:
        return f"DictWrapper({dict.__repr__(self)})"


def wrap(value):
    """``value`` as a tracked container when it is a plain list or dict; else unchanged."""
    if type(value) is list:
        return ListWrapper(value)
    if type(value) is dict:
        return DictWrapper(value)
    return value

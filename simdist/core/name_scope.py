"""``tf.name_scope``: the prefix that names variables created inside it (TF 2 semantics).

A scope's name is the enclosing scope's plus ``name + "/"``; a name that ends in ``/`` is
absolute (it replaces the enclosing scope), and ``""`` goes back to the root. As in TF 2
eager execution, scopes are not made unique: entering ``"dense"`` twice gives ``dense/``
both times. ``tf.Variable(..., name="w")`` inside ``with tf.name_scope("mlp"):`` is named
``mlp/w:0``. The scope is per thread (each replica thread starts at the root).

>>> import simdist as tf
>>> with tf.name_scope("outer") as outer:
...     with tf.name_scope("inner") as inner:
...         v = tf.Variable(1.0, name="w")
>>> outer, inner, v.name
('outer/', 'outer/inner/', 'outer/inner/w:0')
"""

from __future__ import annotations

from simdist.core.context import state

__all__ = ["name_scope", "current_name_scope", "outside_name_scopes"]


def current_name_scope() -> str:
    """The current scope (``""`` at the root, else ending in ``/``)."""
    return state.name_scope


class name_scope:
    """A context manager that prefixes the names of variables created inside it.

    Args:
        name: the scope's name; ending in ``/`` makes it absolute, ``""`` is the root.

    Raises:
        ValueError: ``name`` is not a string.
    """

    def __init__(self, name: str) -> None:
        if not isinstance(name, str):
            raise ValueError(f"name for name_scope must be a string, got {name!r}.")
        self._name = name
        self._previous: list[str] = []

    @property
    def name(self) -> str:
        return self._name

    def _scope_name(self) -> str:
        if not self._name:
            return ""
        if self._name.endswith("/"):
            return self._name
        return f"{state.name_scope}{self._name}/"

    def __enter__(self) -> str:
        scope = self._scope_name()
        self._previous.append(state.name_scope)
        state.name_scope = scope
        return scope

    def __exit__(self, *exc) -> None:
        state.name_scope = self._previous.pop()


class outside_name_scopes:
    """Back at the root scope for the length of a block (Keras builds models there, in its
    own graph, whatever ``tf.name_scope`` the user is in)."""

    def __enter__(self) -> None:
        self._previous = state.name_scope
        state.name_scope = ""

    def __exit__(self, *exc) -> None:
        state.name_scope = self._previous

"""``tf.Module``: a named container whose variables and submodules are found by reflection.

A module finds what it owns by walking its attributes (``vars(module)``) in ascending name
order; each attribute's value is flattened (lists and tuples in order, dicts by sorted key)
and every leaf is checked once (by identity). ``variables`` are the ``tf.Variable`` leaves,
``trainable_variables`` those that are trainable, ``submodules`` the ``tf.Module`` leaves.
A module's own leaves come first; then each submodule's, in the order the submodules were
met, each walked the same way (its own leaves, then its submodules)::

    class MLP(tf.Module):          # mlp.variables: (mlp.b, mlp.layers[0].w, mlp.layers[1].w)
        def __init__(self):
            super().__init__()
            self.b = tf.Variable(0.0)
            self.layers = [Dense(), Dense()]

A Keras layer counts as a ``tf.Module`` (``isinstance(layer, tf.Module)``), as in TF; its
variables are found the same way.

The name scope: ``Module(name="mlp")`` created inside ``tf.name_scope("net")`` has
``name == "mlp"`` and ``name_scope.name == "net/mlp/"``. ``with module.name_scope:`` (or a
method decorated with ``@tf.Module.with_name_scope``) names the variables made inside it
``net/mlp/<name>:0``.

Checkpoints: a module is a checkpoint object (``tf.train.Checkpoint(model=module)``); its
children are its attributes holding variables, modules or lists/dicts of them, by attribute
name (a list is saved as ``<attr>/0``, ``<attr>/1``...). Lists and dicts assigned to an
attribute are wrapped so that a restore waiting for a variable finds it when it is appended.
"""

from __future__ import annotations

import abc
import functools
import re
from collections.abc import Callable, Iterator

from simdist.core import trackable
from simdist.core.name_scope import name_scope
from simdist.core.trackable_data_structures import wrap
from simdist.core.variables import Variable

__all__ = ["Module"]

_CAMEL_TO_SNAKE = re.compile(r"((?<=[a-z0-9])[A-Z]|(?!^)[A-Z](?=[a-z]))")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Attributes of the module itself that are not what it owns.
_OWN_STATE = frozenset(("_name", "_name_scope"))


def camel_to_snake(value: str) -> str:
    """``"MyModule"`` -> ``"my_module"``, ``"MLP"`` -> ``"mlp"`` (TF's default names)."""
    return _CAMEL_TO_SNAKE.sub(r"_\1", value).lower()


class Module(trackable.Trackable, metaclass=abc.ABCMeta):
    """Base class of models built from variables and other modules (``tf.Module``).

    Args:
        name: the module's name, a Python identifier; default: the class name in
            snake_case (``MyModel`` -> ``my_model``).

    Raises:
        ValueError: ``name`` is not a valid Python identifier.
    """

    # Attributes never walked (a subclass may add its own bookkeeping here).
    _TF_MODULE_IGNORED_PROPERTIES: frozenset = frozenset()

    def __init__(self, name: str | None = None) -> None:
        if name is None:
            name = camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise ValueError(
                f"{name!r} is not a valid module name. Module names must be valid Python "
                "identifiers (e.g. a valid class name)."
            )
        object.__setattr__(self, "_name", name)
        with name_scope(name) as scope:
            object.__setattr__(self, "_name_scope", name_scope(scope))

    def __setattr__(self, name: str, value) -> None:
        if name not in _OWN_STATE and isinstance(value, (list, dict)):
            value = wrap(value)  # a restore waiting for an appended variable hears of it
        object.__setattr__(self, name, value)
        if trackable.is_trackable(value):
            trackable.children_changed(self)

    # --- names ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The name given (or derived) at construction, without the enclosing scopes."""
        self._check_initialized()
        return self._name

    @property
    def name_scope(self) -> name_scope:
        """The ``tf.name_scope`` of this module (its ``.name`` includes enclosing scopes)."""
        self._check_initialized()
        return self._name_scope

    @classmethod
    def with_name_scope(cls, method: Callable) -> Callable:
        """Decorate a method so that it runs inside the module's name scope."""

        @functools.wraps(method)
        def method_with_name_scope(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)

        return method_with_name_scope

    def _check_initialized(self) -> None:
        if "_name_scope" not in vars(self):
            raise RuntimeError(
                f"{type(self).__name__} is a tf.Module whose __init__ did not call "
                "super().__init__(); call it first thing in __init__."
            )

    # --- what it owns --------------------------------------------------------------------
    @property
    def variables(self) -> tuple:
        """The variables of this module (by attribute name), then of its submodules."""
        return tuple(self._flatten(predicate=_is_variable))

    @property
    def trainable_variables(self) -> tuple:
        """The trainable variables, in the order of ``variables``."""
        return tuple(self._flatten(predicate=_is_trainable_variable))

    @property
    def submodules(self) -> tuple:
        """Every module reachable through attributes (not this one), each once."""
        return tuple(self._flatten(predicate=_is_module))

    def _flatten(
        self,
        recursive: bool = True,
        predicate: Callable | None = None,
        attribute_traversal_key: Callable | None = None,
        with_path: bool = False,
    ) -> Iterator:
        """The leaves of this module's attributes that ``predicate`` accepts (see the module
        docstring for the order); ``with_path=True`` yields ``(path, leaf)`` and does not
        remove leaves reached twice."""
        accept = predicate if predicate is not None else (lambda _: True)
        seen = {id(self)}
        return _walk(self, (), recursive, accept, attribute_traversal_key, with_path, seen)

    # --- checkpoints (simdist.core.trackable) --------------------------------------------
    def _trackable_children(self) -> dict:
        ignored = _OWN_STATE | type(self)._TF_MODULE_IGNORED_PROPERTIES
        return {
            name: value
            for name, value in vars(self).items()
            if name not in ignored and trackable.is_trackable(value)
        }


def _is_variable(value) -> bool:
    return isinstance(value, Variable)


def _is_trainable_variable(value) -> bool:
    return isinstance(value, Variable) and bool(getattr(value, "trainable", False))


def _is_module(value) -> bool:
    return isinstance(value, Module)


def _leaves_with_paths(value, path: tuple) -> list:
    """``(path, leaf)`` for the leaves of a nest of lists, tuples and dicts, in order."""
    out: list = []
    stack = [(path, value)]
    while stack:
        where, item = stack.pop()
        if isinstance(item, dict):
            try:
                keys = sorted(item)
            except TypeError:
                keys = list(item)
            stack.extend((where + (k,), item[k]) for k in reversed(keys))
        elif isinstance(item, (list, tuple)):
            stack.extend((where + (i,), v) for i, v in reversed(list(enumerate(item))))
        else:
            out.append((where, item))
    return out


def _walk(module, module_path, recursive, accept, key, with_path, seen) -> Iterator:
    attributes = vars(module)
    ignored = _OWN_STATE | getattr(type(module), "_TF_MODULE_IGNORED_PROPERTIES", frozenset())
    submodules = []
    for name in sorted(attributes, key=key):
        if name in ignored:
            continue
        for path, leaf in _leaves_with_paths(attributes[name], (name,)):
            if not with_path:
                if id(leaf) in seen:
                    continue
                seen.add(id(leaf))
            if accept(leaf):
                yield (module_path + path, leaf) if with_path else leaf
            if recursive and isinstance(leaf, Module):
                submodules.append((module_path + path, leaf))
    for path, submodule in submodules:
        yield from _walk(submodule, path, recursive, accept, key, with_path, seen)

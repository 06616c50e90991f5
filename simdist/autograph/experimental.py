"""``tf.autograph.experimental``: ``do_not_convert``, ``set_loop_options``, ``Feature``."""

from __future__ import annotations

import enum
from collections.abc import Callable

__all__ = ["Feature", "do_not_convert", "set_loop_options"]


class Feature(enum.Enum):
    """AutoGraph's optional conversions (accepted by ``tf.function``; nothing is converted)."""

    ALL = "ALL"
    AUTO_CONTROL_DEPS = "AUTO_CONTROL_DEPS"
    ASSERT_STATEMENTS = "ASSERT_STATEMENTS"
    BUILTIN_FUNCTIONS = "BUILTIN_FUNCTIONS"
    EQUALITY_OPERATORS = "EQUALITY_OPERATORS"
    LISTS = "LISTS"
    NAME_SCOPES = "NAME_SCOPES"


def do_not_convert(func: Callable | None = None):
    """The function itself (a decorator, with or without a call): simdist converts nothing.

    >>> import simdist as tf
    >>> tf.autograph.experimental.do_not_convert(lambda x: x + 1)(1)
    2
    """
    if func is None:
        return lambda f: f
    return func


def set_loop_options(
    parallel_iterations=None,
    swap_memory=None,
    maximum_iterations=None,
    shape_invariants=None,
) -> None:
    """Options of the ``tf.while_loop`` a converted loop becomes; none here (no effect)."""

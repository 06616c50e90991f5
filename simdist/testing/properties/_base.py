"""The catalogue's machinery: the Property record, its registry, and comparison helpers.

A property is a rule of the semantics, stated once: a stable id (``area.rule.case``), a
one-line statement, where the rule comes from, the adapter operations it needs, a hypothesis
strategy of examples (given the adapter's ``max_replicas``), and a check that raises
:class:`Violation` when an adapter's answer departs from ``simdist_reference``.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st

CATALOGUE: dict[str, Property] = {}


class Violation(AssertionError):
    """An adapter broke a property; the message says what it returned and what was expected."""


@dataclasses.dataclass(frozen=True)
class Property:
    """One rule of the catalogue.

    Attributes:
      id: stable dotted id, e.g. ``reduce.mean.partial_batch``.
      statement: the rule in one line.
      rule: where it comes from (a TF doc page, a seed, or simdist's documented choice).
      requires: the Adapter operations the check calls.
      examples: ``max_replicas -> SearchStrategy`` of examples.
      check: ``(adapter, example) -> None``; raises Violation.
      cluster: multi-worker: ``examples`` takes the adapter's
        ``simdist.testing.strategies.ClusterLimits`` instead of ``max_replicas``.
    """

    id: str
    statement: str
    rule: str
    requires: tuple[str, ...]
    examples: Callable[[int], st.SearchStrategy]
    check: Callable[[Any, Any], None]
    cluster: bool = False

    def examples_for(self, adapter: Any) -> st.SearchStrategy:
        """The examples for ``adapter``: sized by its replicas, or its cluster limits."""
        if not self.cluster:
            return self.examples(adapter.max_replicas)
        from simdist.testing.strategies import ClusterLimits

        return self.examples(
            ClusterLimits(adapter.min_workers, adapter.max_workers, adapter.max_devices_per_worker)
        )

    @property
    def area(self) -> str:
        """The id's first component (``reduce``, ``input``, ``variables``...)."""
        return self.id.split(".", 1)[0]


def prop(
    id: str,
    statement: str,
    rule: str,
    requires: Sequence[str],
    examples: Callable[[Any], st.SearchStrategy],
    cluster: bool = False,
) -> Callable[[Callable[[Any, Any], None]], Callable[[Any, Any], None]]:
    """Registers the decorated check as property ``id`` (ids are unique); ``cluster``
    marks a multi-worker property (its examples are sized by the cluster limits)."""

    def register(check):
        if id in CATALOGUE:
            raise ValueError(f"property id {id!r} is registered twice")
        CATALOGUE[id] = Property(id, statement, rule, tuple(requires), examples, check, cluster)
        return check

    return register


def select(patterns: Iterable[str] | str | None = None) -> list[Property]:
    """The properties whose id matches any of the glob ``patterns`` (all when None), by id.

    Args:
      patterns: globs such as ``"reduce.*"``; a comma-separated string is split.

    Returns:
      The matching properties, sorted by id.
    """
    if patterns is None:
        return [CATALOGUE[k] for k in sorted(CATALOGUE)]
    if isinstance(patterns, str):
        patterns = [p for p in patterns.split(",") if p.strip()]
    globs = [p.strip() for p in patterns]
    return [
        CATALOGUE[k] for k in sorted(CATALOGUE) if any(fnmatch.fnmatchcase(k, g) for g in globs)
    ]


# --- describing examples ------------------------------------------------------------------
def describe(value: Any) -> str:
    """A short, readable rendering of an example (arrays as ``dtype[list]``)."""
    if isinstance(value, np.ndarray):
        return (
            f"{value.dtype.name}{value.tolist()}"
            if value.ndim
            else f"{value.dtype.name}({value.item()!r})"
        )
    if isinstance(value, np.generic):
        return f"{value.dtype.name}({value.item()!r})"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {describe(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    if isinstance(value, tuple):
        return "(" + ", ".join(describe(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ", ".join(
            f"{f.name}={describe(getattr(value, f.name))}" for f in dataclasses.fields(value)
        )
        return f"{type(value).__name__}({fields})"
    return repr(value)


# --- comparisons -------------------------------------------------------------------------
def _eps(inputs: Sequence[Any]) -> float:
    """float64's epsilon when every floating input is float64, float32's otherwise."""
    kinds = [np.asarray(a).dtype for a in inputs]
    floats = [d for d in kinds if d.kind in "fc"]
    if floats and all(d.itemsize >= 8 for d in floats):
        return float(np.finfo(np.float64).eps)
    return float(np.finfo(np.float32).eps)


def expect_close(actual: Any, expected: Any, inputs: Sequence[Any], what: str) -> None:
    """Values equal up to rounding of the inputs' precision; shapes equal; NaN where NaN.

    Integer results of integer inputs must be exact. Otherwise the tolerance is
    ``8 * (terms + 1) * eps * scale`` with ``scale`` the inputs' largest magnitude and
    ``terms`` how many input values there are: the error bound of adding them in any order
    in the inputs' precision.

    Raises:
      Violation: shapes or values differ.
    """
    actual_a, expected_a = np.asarray(actual), np.asarray(expected)
    if actual_a.shape != expected_a.shape:
        raise Violation(
            f"{what}: got shape {actual_a.shape} ({describe(actual_a)}), expected shape "
            f"{expected_a.shape} ({describe(expected_a)})"
        )
    arrays = [np.asarray(a) for a in inputs]
    exact = expected_a.dtype.kind in "iub" and actual_a.dtype.kind in "iub"
    if exact:
        ok = np.array_equal(actual_a, expected_a)
    else:
        scale = max([float(np.max(np.abs(a))) for a in arrays if a.size] + [1.0])
        terms = sum(a.size for a in arrays) + 1
        atol = 8 * terms * _eps(arrays) * scale
        ok = np.allclose(
            actual_a.astype(np.complex128),
            expected_a.astype(np.complex128),
            rtol=0,
            atol=atol,
            equal_nan=True,
        )
    if not ok:
        raise Violation(f"{what}: got {describe(actual_a)}, expected {describe(expected_a)}")


def expect_equal(actual: Any, expected: Any, what: str) -> None:
    """Exactly equal values and shapes (for data movement: splits, gathers, copies)."""
    actual_a, expected_a = np.asarray(actual), np.asarray(expected)
    if actual_a.shape != expected_a.shape or not np.array_equal(
        actual_a, expected_a, equal_nan=expected_a.dtype.kind in "fc"
    ):
        raise Violation(f"{what}: got {describe(actual_a)}, expected {describe(expected_a)}")


def expect_length(items: Sequence[Any], n: int, what: str) -> None:
    """A per-replica result with one entry per replica."""
    if len(items) != n:
        raise Violation(f"{what}: got {len(items)} per-replica results, expected {n}")


@dataclasses.dataclass(frozen=True)
class ErrorKind:
    """A kind of rejection: exception classes, plus class names matched along the MRO (so
    that ``tf.errors.InvalidArgumentError`` and ``simdist.errors.InvalidArgumentError`` match
    without importing either)."""

    label: str
    classes: tuple[type[BaseException], ...]
    class_names: tuple[str, ...] = ()

    def matches(self, error: BaseException) -> bool:
        """Whether ``error`` is of this kind."""
        names = {c.__name__ for c in type(error).__mro__}
        return isinstance(error, self.classes) or bool(names & set(self.class_names))


#: TF rejects an invalid argument with ValueError when Python code finds it (validation,
#: tracing) and with InvalidArgumentError when a kernel finds it at run time; which one
#: depends on where an implementation checks, not on the rule, so both are this kind.
INVALID_ARGUMENT = ErrorKind(
    "ValueError or InvalidArgumentError", (ValueError,), ("InvalidArgumentError",)
)


def expect_raises(
    expected: type[BaseException] | ErrorKind, fn: Callable[[], Any], what: str
) -> None:
    """``fn()`` must raise an exception of ``expected`` (a class or an ErrorKind).

    Raises:
      Violation: nothing raised (the bad input was accepted), or another exception class.
    """
    kind = (
        expected if isinstance(expected, ErrorKind) else ErrorKind(expected.__name__, (expected,))
    )
    try:
        result = fn()
    except Exception as error:
        if kind.matches(error):
            return
        if type(error).__name__ == "Unsupported":
            raise
        raise Violation(
            f"{what}: raised {type(error).__name__}({str(error)[:200]!r}), "
            f"the rule says {kind.label}"
        ) from error
    raise Violation(f"{what}: accepted (returned {describe(result)}), the rule says {kind.label}")
